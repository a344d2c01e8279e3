import dataclasses
import json

import duckdb
import pytest
from pydantic import ValidationError

from rubricflow.errors import InputError
from rubricflow.rubrics.compiler import RubricCompileError, compile_or_raise, compile_rubric, load_bundle
from rubricflow.rubrics.model import Rubric
from rubricflow.rubrics.properties import properties

from ..conftest import SHARED
from .factories import rubric


def codes(r: Rubric) -> dict[str, str]:
    _, issues = compile_rubric(r)
    return {i.code: i.severity for i in issues}


def test_minimal_rubric_compiles_with_sufficiency_warnings():
    bundle, issues = compile_rubric(rubric())
    assert bundle is not None and len(bundle.hash) == 64
    # Two criteria: seed 000's `3 <= len(r.criteria) <= 7 or r.criteria == {}, "warning"` warns.
    assert {i.code for i in issues} == {
        "S3_NOT_MECHANICAL",
        "S4_NO_DISQUALIFIERS",
        "S5_NO_RITUAL",
        "S6_NOT_RESTATED",
        "W_ECONOMY",
    }
    assert dict(bundle.lattice) == {
        "N1": True,
        "N2": True,
        "N3": True,
        "S1": True,
        "S2": True,
        "S3": False,
        "S4": False,
        "S5": False,
        "S6": False,
    }


@pytest.mark.parametrize(
    "overrides, code",
    [
        ({"goal": ""}, "N1_NO_GOAL"),
        ({"criteria": []}, "N2_NO_STRUCTURE"),
        ({"criteria": [], "decision_rules": ["pass if polite"]}, "N3_NO_OUTPUT_CONTRACT"),
    ],
)
def test_necessary_conditions_are_errors(overrides, code):
    assert codes(rubric(**overrides))[code] == "error"
    assert compile_rubric(rubric(**overrides))[0] is None


def test_sufficient_conditions_clear_when_present():
    r = rubric(
        patterns=[{"id": "p", "regex": "foo"}],
        criteria=[{"id": c, "description": "x", "patterns": ["p"]} for c in "abc"],  # 3: inside economy's [3,7]
        disqualifiers=[{"id": "d", "kind": "pattern", "patterns": ["p"]}],
        output={"constraints": [{"id": "because", "prefix": "BECAUSE:"}]},
        validation=["Start with 'BECAUSE:'."],
    )
    bundle, issues = compile_rubric(r)
    assert issues == [] and all(ok for _, ok in bundle.lattice)


def test_s1_unanchored_and_s2_misaligned_template():
    r = rubric(
        criteria=[{"id": "n", "description": "x", "scale": {"kind": "numeric", "min": 0, "max": 1}}],
        output={"template": '{"scores": {"other": 0}}'},
    )
    got = codes(r)
    assert got["S1_UNANCHORED"] == "warning" and got["S2_SCHEMA_MISALIGNED"] == "warning"
    aligned = rubric(output={"template": '{"score": 0, "criterion_scores": {"a": 0, "b": 0}}'})
    assert "S2_SCHEMA_MISALIGNED" not in codes(aligned)


@pytest.mark.parametrize(
    "regex, why",
    [
        (r"a{2,1}", "invalid repetition size"),
        (r"[z-a]", "invalid character class range"),
        (r"(unclosed", "missing )"),
    ],
)
def test_a_regex_no_engine_reads_is_refused_naming_the_pattern(regex, why):
    r = rubric(patterns=[{"id": "bad_one", "regex": regex}], criteria=[{"id": "a", "patterns": ["bad_one"]}])
    with pytest.raises(RubricCompileError) as exc:
        compile_or_raise(r, source="x.yaml")
    assert "bad_one" in str(exc.value) and why in str(exc.value) and "patterns[0].regex" in str(exc.value)


@pytest.mark.parametrize("regex", [r"(?<=a)b", r"(a)\1", r"\bmay\b(?!\s+because)"])
def test_a_regex_re2_cannot_run_is_kept_with_a_warning(regex):
    """Look-around and back-references: RE2 refuses them, the backtracking engine counts them."""
    r = rubric(patterns=[{"id": "kept", "regex": regex}], criteria=[{"id": "a", "patterns": ["kept"]}])
    bundle = compile_or_raise(r, source="x.yaml")
    (warning,) = [w for w in bundle.warnings if w.code == "W_REGEX_BACKTRACKING"]
    assert warning.path == "patterns[0].regex" and "kept" in warning.message


def test_catastrophic_backtracking_pattern_is_safe_under_re2():
    r = rubric(patterns=[{"id": "evil", "regex": "(a+)+$"}], criteria=[{"id": "a", "patterns": ["evil"]}])
    bundle = compile_or_raise(r)
    regex = bundle.rubric.pattern("evil").effective_regex()
    hit = duckdb.connect().execute("SELECT regexp_matches(repeat('a', 50000) || 'b', $1)", [regex]).fetchone()[0]
    assert hit is False


@pytest.mark.parametrize(
    "overrides, code, path",
    [
        ({"criteria": [{"id": "a"}, {"id": "a"}]}, "E_DUPLICATE_ID", "criteria/groups[1].id"),
        ({"criteria": [{"id": "a", "patterns": ["nope"]}]}, "E_UNKNOWN_PATTERN", "criteria[0].patterns"),
        ({"groups": [{"id": "g", "children": ["a", "zzz"]}]}, "E_UNKNOWN_CHILD", "groups[0].children"),
        ({"groups": [{"id": "g", "children": ["a"]}, {"id": "h", "children": ["a"]}]}, "E_TREE", "groups[1].children"),
        ({"groups": [{"id": "g", "children": ["h"]}, {"id": "h", "children": ["g"]}]}, "E_TREE", "groups"),
        ({"scoring": {"root": "nope"}}, "E_UNKNOWN_ROOT", "scoring.root"),
        (
            {"disqualifiers": [{"id": "d", "kind": "criterion", "criterion": "zz"}]},
            "E_UNKNOWN_CRITERION",
            "disqualifiers[0].criterion",
        ),
        (
            {"goldens": [{"name": "g", "output": "x", "expected_scores": {"b": 9}}]},
            "E_GOLDEN_SCORE",
            "goldens[0].expected_scores.b",
        ),
        (
            {"criteria": [{"id": "a", "examples": [{"score": 3, "text": "x"}]}]},
            "E_EXAMPLE_SCORE",
            "criteria[0].examples[0].score",
        ),
        (
            {"scoring": {"labels": [{"label": "x", "min": 0.5}, {"label": "y", "min": 0.5}]}},
            "E_LABELS",
            "scoring.labels",
        ),
        ({"scoring": {"method": "points"}}, "E_POINTS", "scoring.method"),
        ({"criteria": [{"id": "a", "weight": 0}]}, "E_ZERO_WEIGHTS", "criteria"),
    ],
)
def test_hard_errors_name_code_and_path(overrides, code, path):
    bundle, issues = compile_rubric(rubric(**overrides))
    assert bundle is None
    assert (code, path) in {(i.code, i.path) for i in issues if i.severity == "error"}


def test_unknown_fields_are_rejected():
    with pytest.raises(ValidationError, match="weigth"):
        rubric(criteria=[{"id": "a", "weigth": 2}])


def test_bundle_is_deeply_immutable():
    bundle = compile_or_raise(
        rubric(
            metadata={"id": "t", "provenance": {"k": "v"}},
            goldens=[{"name": "g", "output": "x", "expected_scores": {"a": 1}}],
        )
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        bundle.hash = "x"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        bundle.rubric.goal = "changed"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        bundle.rubric.criteria[0].weight = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        bundle.rubric.metadata.provenance["k"] = "w"  # type: ignore[index]
    with pytest.raises(TypeError):
        bundle.rubric.goldens[0].expected_scores["a"] = 0  # type: ignore[index]
    assert isinstance(bundle.rubric.criteria, tuple)


def test_hash_is_content_addressed():
    a, b = compile_or_raise(rubric()), compile_or_raise(rubric())
    assert a.hash == b.hash
    assert compile_or_raise(rubric(goal="Another goal.")).hash != a.hash


def test_bundle_save_and_reload(tmp_path):
    bundle = compile_or_raise(
        rubric(patterns=[{"id": "p", "words": ["ok"]}], criteria=[{"id": "a", "patterns": ["p"]}])
    )
    path = bundle.save(tmp_path / "b.json")
    again = load_bundle(path)
    assert again.hash == bundle.hash and again.rubric == bundle.rubric and again.profile == bundle.profile
    payload = json.loads(path.read_text())
    payload["rubric"]["goal"] = "tampered"
    path.write_text(json.dumps(payload))
    with pytest.raises(InputError, match="does not match"):
        load_bundle(path)


def test_profiles():
    from rubricflow.rubrics.compiler import profile_of

    assert profile_of(rubric()) == "scoring"
    assert profile_of(rubric(criteria=[{"id": "a"}, {"id": "b"}])) == "compliance"
    assert profile_of(rubric(criteria=[], output={"constraints": [{"id": "c", "prefix": "X"}]})) == "constraint"
    detect = rubric(patterns=[{"id": "p", "regex": "x"}], criteria=[{"id": "a", "patterns": ["p"]}])
    assert profile_of(detect) == "detection"


@pytest.mark.parametrize(
    "path, patch",
    [
        ("criteria.0.weight", {"criteria": [{"id": "a", "weight": float("inf")}]}),
        ("criteria.0.pass_threshold", {"criteria": [{"id": "a", "pass_threshold": float("nan")}]}),
        ("scoring.pass_threshold", {"criteria": [{"id": "a"}], "scoring": {"pass_threshold": float("inf")}}),
        ("criteria.0.points", {"criteria": [{"id": "a", "points": float("-inf")}]}),
    ],
)
def test_non_finite_numbers_are_refused_with_their_field(path, patch):
    """`weight: .inf` and `pass_threshold: .nan` used to compile (reliability pass, compiler finding)."""
    from rubricflow.rubrics.documents import RubricImportError, rubric_from_data

    with pytest.raises(RubricImportError, match=rf"field {path.replace('.', '[.]')}: Input should be a finite number"):
        rubric_from_data({"metadata": {"id": "x"}, **patch}, "r.yaml")


def test_a_rubric_whose_criteria_all_need_a_genre_is_refused():
    """Texts of other genres would be calls about nothing: it crashed `score` or burned calls."""
    bundle, issues = compile_rubric(rubric(criteria=[{"id": "a", "genre": ["news"]}, {"id": "b", "genre": ["sport"]}]))
    assert bundle is None
    assert [(i.code, i.path) for i in issues if i.severity == "error"] == [("E_EMPTY_CALL_UNIT", "criteria")]
    ok, _ = compile_rubric(rubric(criteria=[{"id": "a", "genre": ["news"]}, {"id": "b"}]))
    assert ok is not None


def test_a_rubric_without_criteria_is_a_valid_document_but_refused_for_scoring():
    """F13: a rubric of decision rules and an output template validated, then `score` crashed."""
    from rubricflow.rubrics.compiler import RubricCompileError, compile_for_scoring, compile_rubric
    from rubricflow.rubrics.model import Rubric

    rubric = Rubric.model_validate(
        {
            "metadata": {"id": "no-criteria", "version": "1.0.0"},
            "goal": "judge the texts",
            "decision_rules": ["a good text is short"],
            "output": {"template": '{"verdict": "good|bad"}'},
        }
    )
    assert compile_rubric(rubric)[0] is not None
    with pytest.raises(RubricCompileError, match=r"(?s)no-criteria.yaml: rubric does not compile:.*E_NO_CRITERIA"):
        compile_for_scoring(rubric, "no-criteria.yaml")


SEED = (SHARED.parent / "seeds" / "000_c0ea53250dcb8cd9.txt").read_text(encoding="utf-8")
ANCHORED = {
    "kind": "ordinal",
    "anchors": [{"value": v, "description": d} for v, d in enumerate(("poor", "fair", "good"))],
}


def seed_rubric(**extra) -> Rubric:
    criteria = [{"id": f"C{i}", "scale": ANCHORED} for i in (1, 2, 3)]
    return rubric(goal="Judge the clarity of technical prose for a general reader.", **{"criteria": criteria, **extra})


def test_s3_needs_a_mechanical_criterion_not_a_bare_pattern_library():
    """Seed 000 S3: "At least one criterion includes a <mechanical_rules> or <uses_patterns> reference"
    (`any(c.mechanical_rules or c.uses_patterns for c in r.criteria.values())`). A library used only by a
    disqualifier is no mechanical criterion (before: S3 held); a criterion naming a pattern is."""
    assert "any(c.mechanical_rules or c.uses_patterns for c in r.criteria.values())" in SEED
    library = {
        "patterns": [{"id": "hedge", "regex": r"\bsort of\b"}],
        "disqualifiers": [{"id": "DQ1", "kind": "pattern", "patterns": ["hedge"], "description": "hedging"}],
    }
    bundle, issues = compile_rubric(seed_rubric(**library))
    assert dict(bundle.lattice)["S3"] is False and "S3_NOT_MECHANICAL" in [i.code for i in issues]
    criteria = [{"id": "C1", "scale": ANCHORED, "patterns": ["hedge"]}, *seed_rubric().model_dump()["criteria"][1:]]
    assert dict(compile_or_raise(seed_rubric(**library, criteria=criteria)).lattice)["S3"] is True


@pytest.mark.parametrize(
    "template, aligned",
    [
        ('{"score": 0, "class": "", "subscores": {"C1": 0, "C2": 0, "C3": 0, "A_VOX": 0}}', True),
        ("<C1>0-2</C1><C2>0-2</C2><C3>0-2</C3><Score>0</Score>", True),
        ('{"scores": {"C1": 0, "C10": 0, "C20": 0, "C30": 0}}', False),  # C20 does not name C2, nor C30 C3
    ],
)
def test_s2_is_p_aligned_for_json_and_xml_templates(template, aligned):
    """Seed 000: P_aligned is the "Fraction of criteria IDs that appear in output template" and the
    alignment check's message "Output schema does not reference all criterion IDs"; its ComplianceJudge's
    template is XML. S2 is P_aligned == 1 (before: only a JSON dict of exactly the ids aligned)."""
    assert '"Fraction of criteria IDs that appear in output template"' in SEED
    assert '"Output schema does not reference all criterion IDs"' in SEED
    r = seed_rubric(output={"template": template})
    bundle, issues = compile_rubric(r)
    assert dict(bundle.lattice)["S2"] is aligned is (properties(r)["P_aligned"] == 1.0)
    assert ("S2_SCHEMA_MISALIGNED" in [i.code for i in issues]) is not aligned


@pytest.mark.parametrize(
    "extra, mirrored",
    [
        (  # the ritual demanded in the rubric definition (criterion C1) and the output schema
            {
                "criteria": [
                    {"id": "C1", "description": "The rationale must begin with 'BECAUSE:'.", "scale": ANCHORED}
                ]
                + [{"id": f"C{i}", "scale": ANCHORED} for i in (2, 3)],
                "output": {"constraints": [{"id": "ritual", "field": "rationale", "prefix": "BECAUSE:"}]},
            },
            True,
        ),
        (  # a 35-word cap only in the output; "words" in validation is not the constraint `word`
            {
                "output": {"constraints": [{"id": "word", "field": "rationale", "max_words": 35}]},
                "validation": ["Use plain words."],
            },
            False,
        ),
    ],
)
def test_s6_and_p_mirror_read_the_rubric_definition_and_whole_ids(extra, mirrored):
    """Seed 000 S6: "Critical constraints appear in at least two structural locations (rubric definition,
    output schema, and/or validation section)" (before: the criteria were never read, and an id matched
    inside any word)."""
    assert "(rubric definition, output schema, and/or validation section)" in SEED
    r = seed_rubric(**extra)
    assert dict(compile_or_raise(r).lattice)["S6"] is mirrored and properties(r)["P_mirror"] == int(mirrored)
