import json
import re

import pytest
from hypothesis import HealthCheck, given, settings

from rubricflow.rubrics.compiler import compile_or_raise, content_hash
from rubricflow.rubrics.formats import RubricImportError, dump, load_rubric, load_rubrics, loads_rubrics
from rubricflow.rubrics.model import Rubric

from ..conftest import SHARED_RUBRICS, user_rubric_files
from .strategies import rubrics

NOT_A_RUBRIC = {
    "completeness_rubric.md",
    "standard.yaml",
    "political-bias-rubric.yaml",
}  # grading prompts a config names


# Hypothesis warns when the global `random` state moves while it draws: here a thread an earlier test of
# this process left (a library's retry jitter) did, now and then; rubricflow draws from generators of its own
@pytest.mark.filterwarnings("ignore:Do not use the `random` module inside strategies")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rubrics())
def test_native_round_trip_yaml_json_xml(r):
    for fmt in ("yaml", "json", "xml"):
        again = loads_rubrics(dump(r, fmt), f"r.{fmt}")
        assert again == [r], fmt
        assert content_hash(again[0]) == content_hash(r)


def test_a_metadata_key_ending_in_a_newline_survives_xml():
    """Found by the round trip above: "A\n" passed the XML tag-name check (`$` matches before a final
    newline), became the tag `<A>`, and came back as "A"."""
    r = Rubric.model_validate(
        {"metadata": {"id": "k", "provenance": {"A\n": None, "B": 1}}, "goal": "g", "criteria": [{"id": "c"}]}
    )
    assert loads_rubrics(dump(r, "xml"), "r.xml") == [r]


def test_the_rubric_files_users_bring_cover_every_format():
    """Issue 13: 25+ real rubric files across the formats users bring validate in CI."""
    files = user_rubric_files()
    assert len([f for f in files if f.name not in NOT_A_RUBRIC]) >= 25
    assert {f.parent.name for f in files} >= {
        "secemp9",
        "waza",
        "openai_evals",
        "paperbench",
        "healthbench",
        "prometheus",
        "evaluator_yaml",
        "promptfoo",
        "flask",
        "geval",
        "xml",
    }


@pytest.mark.parametrize("path", user_rubric_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_rubric_file_a_user_brings_imports_validates_exports_and_reimports(path, tmp_path):
    if path.name in NOT_A_RUBRIC:
        with pytest.raises(RubricImportError, match="not a rubric"):
            load_rubrics(path)
        return
    imported = load_rubrics(path)
    assert imported
    for r in imported:
        bundle = compile_or_raise(r, source=str(path))
        assert r.criteria, "an imported rubric is never empty"
        for fmt in ("yaml", "xml", "json"):
            target = tmp_path / f"{r.metadata.id}.{fmt}"
            target.write_text(dump(r, fmt), encoding="utf-8")
            assert compile_or_raise(load_rubric(target)).hash == bundle.hash, fmt


def test_yaml_custom_tags_are_refused(tmp_path):
    bad = tmp_path / "evil.yaml"
    bad.write_text("metadata: !!python/object/apply:os.system ['echo hi']\n")
    with pytest.raises(RubricImportError, match="evil.yaml.*tag refused"):
        load_rubric(bad)


def test_unknown_field_error_names_file_and_field(tmp_path):
    bad = tmp_path / "typo.yaml"
    bad.write_text("metadata: {id: x}\ngoal: g\ncriteria:\n  - {id: a, wieght: 2}\n")
    with pytest.raises(RubricImportError, match=r"typo.yaml: field criteria\.0\.wieght: Extra inputs"):
        load_rubric(bad)


def test_unrecognised_shape_is_refused_not_empty(tmp_path):
    bad = tmp_path / "other.yaml"
    bad.write_text("just: data\n")
    with pytest.raises(RubricImportError, match="not a rubric in any known format"):
        load_rubric(bad)


@pytest.mark.parametrize(
    "payload, why",
    [
        (
            '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><LLM_JUDGE_SPEC><mission>&a;</mission></LLM_JUDGE_SPEC>',
            "DOCTYPE or ENTITY",
        ),
        (
            '<!DOCTYPE x [<!ENTITY ext SYSTEM "file:///etc/passwd">]><LLM_JUDGE_SPEC><mission>&ext;</mission></LLM_JUDGE_SPEC>',
            "DOCTYPE or ENTITY",
        ),
        ("<LLM_JUDGE_SPEC><mission>unclosed", "no <LLM_JUDGE_SPEC>"),
    ],
)
def test_unsafe_or_broken_xml_is_refused(tmp_path, payload, why):
    bad = tmp_path / "bad.xml"
    bad.write_text(payload)
    with pytest.raises(RubricImportError, match=why):
        load_rubric(bad)


def test_non_utf8_file_is_refused(tmp_path):
    bad = tmp_path / "latin.yaml"
    bad.write_bytes("metadata: {id: caf\xe9}\n".encode("latin-1"))
    with pytest.raises(RubricImportError, match="not UTF-8"):
        load_rubric(bad)


def test_a_yaml_alias_bomb_is_refused_quickly(tmp_path):
    """A 206 KB YAML of aliases once expanded to 886 MB during `validate` (reliability pass)."""
    import time

    lines = ["metadata: {id: bomb}", 'l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 10)]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    started = time.monotonic()
    with pytest.raises(RubricImportError, match="aliases expand it to more than 200,000 values"):
        load_rubrics(bomb)
    assert time.monotonic() - started < 2


def test_a_long_string_aliased_thousands_of_times_is_refused(tmp_path):
    """F24: a 208 KB file (one long string and thousands of aliases of it) still validated, at 845 MB: a
    string counted as one value whatever its length."""
    lines = ["metadata: {id: bomb}", "goal: &s " + "x" * 200_000, "criteria:"]
    lines += [f"  - {{id: c{i}, description: *s}}" for i in range(3000)]
    bomb = tmp_path / "strings.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    assert bomb.stat().st_size < 300_000
    with pytest.raises(RubricImportError, match="aliases expand it to more than 200,000 values"):
        load_rubrics(bomb)


def test_a_large_yaml_without_aliases_is_called_large_not_a_bomb(tmp_path):
    """A 12 MB rubric of plain criteria was refused as "an alias bomb?", which it has none of."""
    big = tmp_path / "big.yaml"
    big.write_text("metadata: {id: big}\ngoal: " + "plain words " * 1_700_000 + "\ncriteria: [{id: c}]\n")
    # markdown's asterisks and one honest merge alias: still a document large on its own
    merged = tmp_path / "merged.yaml"
    goal = "'**Be concise.** " + "plain words " * 1_700_000 + "'"
    merged.write_text(f"metadata: {{id: big}}\nbase: &b {{weight: 1}}\ngoal: {goal}\ncriteria: [{{id: c, <<: *b}}]\n")
    for path in (big, merged):
        with pytest.raises(RubricImportError, match="it holds more than 200,000 values") as refused:
            load_rubrics(path)
        assert "alias" not in str(refused.value) and "too large to be a rubric" in str(refused.value)


def test_a_recursive_yaml_document_is_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text("metadata: {id: loop}\ncriteria: &c [{id: a, examples: *c}]\n")
    with pytest.raises(RubricImportError, match="refers to itself"):
        load_rubrics(path)


def test_yaml_is_read_as_yaml_1_2_and_versions_as_written(tmp_path):
    """`labels: [no, yes]` stayed booleans and `version: 2.10` became 2.1.0 under YAML 1.1."""
    f = tmp_path / "r.yaml"
    f.write_text(
        "metadata: {id: r, version: 2.10}\ngoal: g\ncriteria: [{id: a, scale: {kind: binary, labels: [no, yes]}}]\n"
    )
    r = load_rubric(f)
    assert r.metadata.version == "2.10.0" and r.criteria[0].scale.labels == ("no", "yes")
    md = tmp_path / "w.md"  # waza's frontmatter: a semver string, refused as written (not as 1.1), never padded
    md.write_text("---\nname: w\nversion: 1.10\nscale: pass-fail\ndescription: d\n---\nJudge it.\n")
    with pytest.raises(RubricImportError, match=r"w.md: field version: '1.10' is not a semver string"):
        load_rubric(md)
    md.write_text("---\nname: w\nversion: 1.10.0\nscale: pass-fail\ndescription: d\n---\nJudge it.\n")
    assert load_rubric(md).metadata.version == "1.10.0"


def test_a_version_with_leading_zeros_is_refused_when_read_not_later(tmp_path):
    """`01.0.0` passed the model and crashed `rubric list` with a semver traceback."""
    f = tmp_path / "r.yaml"
    f.write_text("metadata: {id: r, version: 01.0.0}\ngoal: g\ncriteria: [{id: a}]\n")
    with pytest.raises(RubricImportError, match=r"r.yaml: field metadata.version: version '01.0.0' is not semantic"):
        load_rubric(f)
    f.write_text('metadata: {id: r, version: "1.0.0\\n"}\ngoal: g\ncriteria: [{id: a}]\n')  # "$" matched before it
    with pytest.raises(RubricImportError, match=r"version '1.0.0\\n' is not semantic"):
        load_rubric(f)


NATIVE = """metadata: {id: r, version: 1.0.0}
goal: g
criteria:
  - {id: a, weight: 3}
  - {id: b}
"""


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("twice.yaml", NATIVE.replace("{id: a, weight: 3}", "{id: a, weight: 3, weight: 0}"),
         "key 'weight' is written twice in one mapping"),
        ("twice.json", '{"metadata": {"id": "r", "version": "1.0.0"}, "goal": "g", "goal": "h", "criteria": [{"id": "a"}]}',
         "key 'goal' is written twice in one mapping"),
        ("huge.yaml", NATIVE.replace("weight: 3", "weight: 1e308"), "criteria.0.weight"),
        ("lone.json", '{"metadata": {"id": "r", "version": "1.0.0"}, "goal": "g", "criteria": [{"id": "a", "description": "x \\ud800"}]}',
         "rubric.criteria[0].description: a lone surrogate"),
    ],
)  # fmt: skip
def test_a_rubric_file_whose_meaning_is_unclear_is_refused_naming_the_field(tmp_path, name, text, why):
    """An outside probe: a key written twice silently took its last value (weight 3 became 0), two
    weights of 1e308 overflowed the weighted mean to NaN, and a lone surrogate was a traceback."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RubricImportError, match=re.escape(why)):
        load_rubric(path)


def test_a_merge_key_overridden_is_yamls_meaning_and_a_byte_order_mark_no_part_of_the_text(tmp_path):
    merged = tmp_path / "merged.yaml"
    merged.write_text(
        "metadata: {id: r, version: 1.0.0}\ngoal: g\ncriteria:\n  - &a {id: a, weight: 2, title: T}\n"
        "  - {<<: *a, id: b, weight: 5}\n",
        encoding="utf-8",
    )
    b = load_rubric(merged).criteria[1]
    assert (b.id, b.weight, b.title) == ("b", 5, "T")  # keys that override merged ones: not written twice
    plain = tmp_path / "plain.yaml"
    plain.write_text(NATIVE, encoding="utf-8")
    for suffix in (".yaml", ".json"):
        marked = tmp_path / f"marked{suffix}"
        body = (
            NATIVE
            if suffix == ".yaml"
            else json.dumps(load_rubric(plain).model_dump(mode="json", exclude_defaults=True))
        )
        marked.write_bytes(b"\xef\xbb\xbf" + body.encode())
        assert content_hash(load_rubric(marked)) == content_hash(load_rubric(plain)), suffix


def test_an_xml_file_of_two_specs_is_refused_not_cut_to_its_first(tmp_path):
    """An outside probe: the second <LLM_JUDGE_SPEC> of a file was dropped without a word (two YAML
    documents are refused)."""
    spec = (SHARED_RUBRICS / "secemp9" / "anti_slop_rubric.xml").read_text(encoding="utf-8")
    path = tmp_path / "two.xml"
    path.write_text(spec + "\n" + spec, encoding="utf-8")
    with pytest.raises(RubricImportError, match=r"two.xml: holds 2 <LLM_JUDGE_SPEC> specs"):
        load_rubrics(path)


@pytest.mark.parametrize("weight", ["true", "'3'"])
def test_a_weight_that_is_not_a_number_is_refused_not_coerced(tmp_path, weight):
    """docs/rubrics.md: a weight that is not a number is refused; `true` was read as 1, `'3'` as 3."""
    path = tmp_path / "w.yaml"
    path.write_text(NATIVE.replace("weight: 3", f"weight: {weight}"), encoding="utf-8")
    with pytest.raises(RubricImportError, match=r"criteria.0.weight.*a number is required"):
        load_rubric(path)


def test_a_json_list_of_prometheus_records_reads_as_its_json_lines_do(tmp_path):
    """BiGGen-Bench ships its records as one JSON list (prometheus-eval's data.json), refused as "a
    list at the top level"; the same records as JSON lines were read."""
    [lines] = [p for p in (SHARED_RUBRICS / "prometheus").iterdir() if p.suffix == ".jsonl"][:1]
    records = [json.loads(line) for line in lines.read_text(encoding="utf-8").splitlines() if line.strip()][:5]
    as_lines, as_list = tmp_path / "data.jsonl", tmp_path / "data.json"
    as_lines.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    as_list.write_text(json.dumps(records), encoding="utf-8")
    expected = [r.model_dump(exclude={"metadata": {"provenance"}}) for r in load_rubrics(as_lines)]
    assert [r.model_dump(exclude={"metadata": {"provenance"}}) for r in load_rubrics(as_list)] == expected
    assert len(expected) == len(records) > 1
