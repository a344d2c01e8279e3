"""Reading and checking the judge's answer."""

import pytest

from rubricflow.rubrics.model import Rubric
from rubricflow.rubrics.render import CallUnit
from rubricflow.tasks.judging.verify import AnswerError, check_constraint, parse_json_answer, verify_answer

RUBRIC = Rubric.model_validate(
    {
        "metadata": {"id": "v"},
        "goal": "g",
        "criteria": [
            {"id": "a", "scale": {"kind": "ordinal", "anchors": [{"value": 1}, {"value": 5}]}},
            {"id": "b", "evidence": {"required": True, "min_items": 1}},
        ],
        "disqualifiers": [{"id": "dq", "kind": "judge"}],
        "output": {
            "constraints": [
                {"id": "because", "field": "rationale", "prefix": "BECAUSE:", "severity": "soft"},
                {"id": "short", "field": "rationale", "max_words": 8, "severity": "hard"},
            ]
        },
    }
)
UNIT = CallUnit("_all", ("a", "b"))
TEXT = "The bridge closed on Monday because of a cracked beam."


@pytest.mark.parametrize(
    "content",
    [
        '{"criteria": {"a": {"value": 3}}}',
        'Sure, here it is:\n```json\n{"criteria": {"a": {"value": 3}}}\n```\nThanks.',
        'My verdict {"criteria": {"a": {"value": 3},},} as requested',
    ],
)
def test_tolerant_parsing(content):
    assert parse_json_answer(content)["criteria"]["a"]["value"] == 3


@pytest.mark.parametrize("content", ["", "no json here", "[1, 2, 3]", '{"criteria": {"a": '])
def test_unparseable_answers_raise(content):
    with pytest.raises(AnswerError):
        parse_json_answer(content)


def test_values_outside_the_scale_are_flagged_not_clamped():
    answer = {
        "criteria": {
            "a": {"value": 9, "rationale": "BECAUSE: x", "evidence": []},
            "b": {"value": 1, "rationale": "BECAUSE: y", "evidence": ["cracked beam"]},
        }
    }
    results, _, _ = verify_answer(RUBRIC, UNIT, answer, TEXT)
    a, b = results
    assert (a.status, a.value, a.unit_score) == ("unscored", 9, None) and a.reason.startswith("out of scale")
    assert (b.status, b.unit_score, b.evidence_verified) == ("scored", 1.0, True)


def test_evidence_and_constraints():
    answer = {
        "criteria": {
            "a": {"value": 5, "rationale": "fine", "evidence": ["a quote that is not there"]},
            "b": {"value": 1, "rationale": "BECAUSE: y", "evidence": []},
        },
        "disqualifiers": ["dq", "made-up"],
    }
    results, declared, warnings = verify_answer(RUBRIC, UNIT, answer, TEXT)
    a, b = results
    assert a.status == "scored" and a.evidence_verified is False
    assert "evidence quote not found in the text" in a.warnings and any(w.startswith("because:") for w in a.warnings)
    assert (b.status, b.reason) == ("unscored", "required evidence missing")
    assert declared == ["dq"] and any("made-up" in w for w in warnings)
    long = {"criteria": {"a": {"value": 5, "rationale": "BECAUSE: " + "word " * 20, "evidence": []}}}
    results, _, _ = verify_answer(RUBRIC, CallUnit("a", ("a",)), long, TEXT)
    # seed 001: a hard constraint that fails disqualifies the judgment; the criterion stays scored
    assert results[0].status == "scored" and results[0].violations == ["short"]
    assert any(w.startswith("short (hard) on rationale: 21 words > 8") for w in results[0].warnings)


def test_missing_criteria_and_wrong_shape():
    results, _, _ = verify_answer(RUBRIC, UNIT, {"criteria": {"a": 4}}, TEXT)
    assert results[0].unit_score == 0.75 and results[1].reason == "missing from the answer"
    with pytest.raises(AnswerError, match="no `criteria`"):
        verify_answer(RUBRIC, UNIT, {"scores": {}}, TEXT)


def test_item_constraints_with_separator():
    rule = RUBRIC.output.constraints[0].model_copy(
        update={"prefix": "FIX:", "min_items": 3, "max_items": 3, "separator": ";"}
    )
    assert check_constraint(rule, "FIX: a; b; c") is None
    assert check_constraint(rule, "FIX: a; b") == "2 items < 3"


def test_an_empty_quote_verifies_nothing():
    """An empty evidence string used to count as found in the text (reliability pass)."""
    from rubricflow.tasks.judging.verify import quotes_in_text

    assert quotes_in_text(["", "the road budget"], "the council approved the road budget") is False
    assert quotes_in_text(["   "], "anything") is False
    assert quotes_in_text([], "anything") is None
    assert quotes_in_text(["road  budget"], "the road\nbudget") is True


def test_a_quote_differing_in_case_or_wrapped_in_quote_marks_is_found():
    """Seed 001: quotes are checked by "exact containment, then normalized containment", which
    rubrify normalises by stripping quote marks, collapsing whitespace and lowercasing both sides
    (secemp9/rubrify engine/judge_loop.py `_normalize_text`): such quotes were "not found"."""
    answer = {
        "criteria": {
            "a": {"value": 5, "evidence": ["the bridge closed on monday", "\u201cA cracked  beam.\u201d"]},
            "b": {"value": 1, "evidence": ["'because of a CRACKED beam'"]},
        }
    }
    a, b = verify_answer(RUBRIC, UNIT, answer, TEXT)[0]
    assert (a.evidence_verified, b.evidence_verified) == (True, True)
    assert "evidence quote not found in the text" not in a.warnings + b.warnings
    made_up = {"criteria": {"a": {"value": 5, "evidence": ["the bridge opened on monday"]}, "b": {"value": 1}}}
    assert verify_answer(RUBRIC, UNIT, made_up, TEXT)[0][0].evidence_verified is False


def test_the_viewer_marks_a_quote_where_verification_found_it():
    """A quote verified by normalized containment (case, space, quote marks aside) is marked in the
    viewer's text too: it looked for the exact string and marked nothing."""
    from rubricflow.tasks.presentation.viewer import highlight

    page = str(highlight("The Council met on <b>Tuesday</b>.", ["\u201cthe council  met\u201d"], []))
    assert '<mark class="evidence" title="verified evidence quote">The Council met</mark>' in page
    assert "&lt;b&gt;Tuesday" in page  # the text still escaped


def test_the_decision_rules_decide_the_verdict_from_the_same_answers_criterion_values():
    """Seed 000's ComplianceJudge: R3 (C1 = 2, C2 = 1) gives Somewhat whatever the judge wrote, and an
    out-of-scale verdict too; the written word stays in the note. A call that asks the verdict alone
    (per_criterion) has no criterion values to apply the rules to: the judge's verdict stands."""
    from rubricflow.rubrics.formats import load_rubric
    from tests.conftest import TEST_DATA

    judge = load_rubric(TEST_DATA / "rubrics/xml/compliance-judge-layout.xml")
    unit = CallUnit("_all", ("C1", "C2", "C3", "Judgement"))
    for written in ("Yes", "Maybe"):
        answer = {"criteria": {"C1": {"value": 2}, "C2": {"value": 1}, "C3": {"value": 2}, "Judgement": written}}
        results, _, _ = verify_answer(judge, unit, answer, TEXT)
        verdict = next(r for r in results if r.criterion_id == "Judgement")
        assert (verdict.value, verdict.unit_score, verdict.status) == ("Somewhat", 0.5, "scored")
        note = f"Judgement: the judge said {written!r}; R3 gives 'Somewhat' from its criterion scores"
        assert verdict.overruled == note and note in verdict.warnings
    alone, _, _ = verify_answer(judge, CallUnit("Judgement", ("Judgement",)), {"criteria": {"Judgement": "Yes"}}, TEXT)
    assert (alone[0].value, alone[0].overruled) == ("Yes", None)
