"""`rubrics/explain`: which importer read a file, and which of its fields it read or ignored."""

from __future__ import annotations

import pytest

from rubricflow.rubrics.documents import RubricImportError
from rubricflow.rubrics.explain import explain
from tests.conftest import ROOT

PROMPTFOO = """
description: tutor
prompts: [prompts/tutor.txt]
providers: [openai:gpt-4o-mini]
defaultTest:
  assert:
    - type: llm-rubric
      value: Explains without giving the answer away
    - type: javascript
      value: output.length < 400
tests:
  - vars: {question: How do I loop over a list?}
    assert:
      - type: llm-rubric
        value: Asks a question back
redteam:
  numTests: 5
"""


def test_a_promptfoo_config_names_what_the_importer_left_alone(tmp_path):
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(PROMPTFOO)
    found = explain(path)
    assert found.importer == "promptfoo" and found.tracked
    assert len(found.rubrics) == 1 and len(found.rubrics[0].criteria) == 2
    assert {"defaultTest.assert[].value", "tests[].assert[].value", "description"} <= set(found.used)
    # the test's inputs, the targets and the red team are promptfoo's business, not a rubric's
    assert found.ignored == [] and list(found.left) == ["prompts", "providers", "redteam", "tests[].vars"]
    assert found.left["providers"].startswith("the judge is rubricflow's")


def test_fields_copied_into_another_mapping_count_as_read():
    """The FLASK importer copies each skill (`{"name": k, **v}`) before reading it."""
    found = explain(ROOT / "tests/data/rubrics/flask/skills.yaml")
    assert found.importer == "FLASK-style skill set"
    assert found.ignored == [] and "skills.Conciseness.score5_description" in found.used


def test_text_formats_and_native_rubrics_name_their_importer_only():
    prompty = explain(ROOT / "tests/data/rubrics/prompty/coherence.prompty")
    native = explain(ROOT / "rubrics/library/completeness.yaml")
    assert (prompty.importer, prompty.tracked) == ("Prompty", False)
    assert (native.importer, native.tracked, native.ignored) == ("native", False, [])


def test_a_file_no_importer_takes_is_refused_by_name(tmp_path):
    path = tmp_path / "notes.yaml"
    path.write_text("shopping: [milk, eggs]\n")
    with pytest.raises(RubricImportError, match="notes.yaml.*not a rubric in any known format"):
        explain(path)
