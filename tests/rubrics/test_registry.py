"""The one registry of rubric formats (`rubrics/importers/registry.py`): detection, `doctor` and the
docs' table of formats all come from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubricflow.rubrics.documents import RubricImportError
from rubricflow.rubrics.explain import explain
from rubricflow.rubrics.formats import RUBRIC_SUFFIXES, load_rubrics
from rubricflow.rubrics.importers import registry
from rubricflow.rubrics.importers.registry import FORMATS, Format
from tests.conftest import ROOT, user_rubric_files


def test_the_docs_table_of_formats_is_the_registry():
    docs = (ROOT / "docs/rubrics.md").read_text(encoding="utf-8")
    assert registry.docs_table() in docs
    # every format detection knows is in a row of the table, and every row has a format
    assert {f.family for f in FORMATS} == set(registry.FAMILIES)


def _explained() -> list:
    files = [p for p in user_rubric_files() if p.suffix.lower() in RUBRIC_SUFFIXES]
    files += sorted((ROOT / "rubrics/library").rglob("*.yaml"))
    found = []
    for path in files:
        try:
            found.append(explain(path))
        except RubricImportError:
            continue  # files kept to be refused (hostile inputs) are refused by name elsewhere
    return found


def test_every_field_of_every_collected_file_is_used_with_a_declared_how_or_left_with_a_reason():
    """Each importer declares in the registry how it uses each field it reads; no field of a file
    we hold (the seeds' layouts, real files, the library) is ignored unexplained."""
    found = _explained()
    tracked = [e for e in found if e.tracked]
    assert len(tracked) >= 60 and {e.importer for e in tracked} >= {
        "promptfoo",
        "Forge YAML",
        "evaluator YAML",
        "<LLM_JUDGE_SPEC> XML",
        "Markdown with YAML frontmatter",
        "OpenAI Evals grader export",
    }
    undeclared = {(e.path.name, p) for e in tracked for p, how in e.how.items() if how.startswith("read (how")}
    ignored = {(e.path.name, p) for e in tracked for p in e.ignored}
    assert not undeclared and not ignored
    assert all(set(e.used) == set(e.how) for e in tracked)


def test_a_format_added_to_the_registry_is_detected_and_accounted_for(tmp_path, monkeypatch):
    """One entry is the whole of a new format: detection picks it, doctor reads its declarations."""

    def read(data, path):
        return load_rubrics(ROOT / "rubrics/library/completeness.yaml")

    new = Format(
        "Toy judge",
        "native",
        "a `toy_judge` key",
        lambda data, path: isinstance(data, dict) and "toy_judge" in data,
        lambda data, path: [data["toy_judge"] and read(data, path)[0]],
        fields={"toy_judge": "the toy's switch"},
        left={"owner": "who wrote it"},
    )
    monkeypatch.setattr(registry, "FORMATS", [new, *FORMATS])
    monkeypatch.setattr("rubricflow.rubrics.importers.FORMATS", registry.FORMATS)
    path = tmp_path / "toy.yaml"
    path.write_text("toy_judge: on\nowner: me\ncolour: blue\n")
    found = explain(path)
    assert found.importer == "Toy judge" and found.rubrics[0].metadata.id == "completeness"
    assert found.how == {"toy_judge": "the toy's switch"}
    assert found.left == {"owner": "who wrote it"} and found.ignored == ["colour"]
    assert "a `toy_judge` key" in registry.docs_table()


@pytest.mark.parametrize("data", [{"shopping": ["milk"]}, 3])
def test_data_no_format_recognises_is_refused_naming_what_the_registry_expects(tmp_path, data):
    import yaml

    path = tmp_path / "notes.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(RubricImportError, match="notes.yaml") as err:
        load_rubrics(path)
    if isinstance(data, dict):
        assert "Forge YAML (`criteria` with `anchors`" in str(err.value)
        assert all(f.name in str(err.value) for f in FORMATS if not f.text)


def test_doctor_prints_how_each_field_is_used_and_why_one_is_left(tmp_path):
    import os
    import subprocess

    from tests.conftest import EXE

    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(
        "prompts: [p.txt]\ndefaultTest:\n  assert:\n    - type: llm-rubric\n      value: Polite\nnotes: mine\n"
    )
    env = {**os.environ, "COLUMNS": "250"}
    done = subprocess.run([EXE, "doctor", str(path)], capture_output=True, text=True, env=env, timeout=60)
    out = " ".join(done.stdout.split())
    assert done.returncode == 0, done.stderr
    assert "description" not in out and "defaultTest: assertions and options every test shares" in out
    assert "prompts: the prompts under test are promptfoo's" in out and "fields ignored (1): notes" in out


def test_seed_examples_have_no_field_ignored():
    """The seeds' own layouts in tests/data: the ComplianceJudge XML, the waza built-ins (Markdown
    frontmatter), evaluator YAML: every field read or left with a reason."""
    data = ROOT / "tests/data/rubrics"
    for path in [data / "xml/compliance-judge-layout.xml", *sorted((data / "waza").glob("*.md"))]:
        found = explain(Path(path))
        assert found.tracked and found.ignored == [] and found.used, path.name
