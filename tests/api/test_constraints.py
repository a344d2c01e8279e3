"""Seed 001's output constraints and RoleSpec: TokenConstraint, scopes (call / criterion /
judgment), a hard constraint that fails disqualifies the judgment (in the result object, the
warehouse and its views) and a soft one warns; a role with authority and domain in the prompt."""

import pytest

import rubricflow as rf
from rubricflow.rubrics.compiler import compile_rubric, content_hash
from rubricflow.rubrics.formats import dump_yaml
from rubricflow.rubrics.model import OutputConstraint, Rubric
from rubricflow.rubrics.render import CallUnit, render_system_prompt
from rubricflow.tasks.judging.verify import (
    check_constraint,
    count_tokens,
    hard_violations,
    judgment_problems,
    verify_answer,
)

TEXT = "The council met on Tuesday and approved the road budget by seven votes to two."


def _rubric(constraints, **extra) -> Rubric:
    return Rubric.model_validate(
        {
            "metadata": {"id": "c"},
            "goal": "g",
            "criteria": [
                {"id": "a", "scale": {"kind": "binary"}},
                {"id": "b", "scale": {"kind": "binary"}},
            ],
            "output": {"constraints": constraints},
            **extra,
        }
    )


def test_token_constraint_counts_words_and_punctuation():
    c = OutputConstraint(id="t", min_tokens=3, max_tokens=5)
    assert count_tokens("BECAUSE: it is.") == 5
    assert check_constraint(c, "BECAUSE: it is.") is None
    assert check_constraint(c, "yes") == "1 tokens < 3"
    assert check_constraint(c, "BECAUSE: it is clear.") == "6 tokens > 5"


def test_scopes_call_criterion_and_judgment():
    rubric = _rubric(
        [
            {"id": "each", "field": "rationale", "prefix": "BECAUSE:", "scope": "criterion", "severity": "soft"},
            {"id": "once", "field": "rationale", "max_words": 3, "scope": "call", "severity": "soft"},
            {"id": "whole", "field": "rationale", "min_words": 6, "scope": "judgment", "severity": "hard"},
            {"id": "total", "field": "rationale", "max_tokens": 100, "scope": "judgment", "severity": "hard"},
        ]
    )
    shared = "a shared rationale, too long"
    answer = {"criteria": {"a": {"value": 1, "rationale": shared}, "b": {"value": 0, "rationale": shared}}}
    a, b = verify_answer(rubric, CallUnit("_all", ("a", "b")), answer, TEXT)[0]
    # criterion scope: each criterion's value; call scope: a value the call's criteria share, once
    assert [w for w in a.warnings if w.startswith("each")] and [w for w in b.warnings if w.startswith("each")]
    assert [w for w in a.warnings if w.startswith("once")] and not [w for w in b.warnings if w.startswith("once")]
    # judgment scope: every criterion's rationale joined (5 + 5 words >= 6), checked once
    assert judgment_problems(rubric, [a, b]) == []
    assert [c.id for c, _ in judgment_problems(rubric, [a])] == ["whole"] and hard_violations(rubric, [a]) == {"whole"}
    assert [(c.id, p) for c, p in judgment_problems(rubric, [a])] == [("whole", "5 words < 6")]


def test_compiler_refuses_a_judgment_scope_off_the_criteria_and_an_id_shared_with_a_disqualifier():
    bad = _rubric(
        [{"id": "dq", "field": "rationale"}, {"id": "sum", "field": "summary", "scope": "judgment"}],
        disqualifiers=[{"id": "dq", "kind": "judge"}],
    )
    codes = {(i.code, i.path) for i in compile_rubric(bad)[1]}
    assert ("E_DUPLICATE_ID", "output.constraints[0].id") in codes
    assert ("E_CONSTRAINT_SCOPE", "output.constraints[1].scope") in codes


def test_a_role_with_authority_and_domain_is_rendered_and_new_defaults_keep_old_hashes():
    rubric = rf.load_rubric("llm-slop").rubric
    with_role = rubric.model_copy(
        update={"role": rubric.role.model_copy(update={"authority": "advisory", "domain": "newspaper copy"})}
    )
    prompt = render_system_prompt(with_role, CallUnit("_all", ("puffery",)))
    assert "Authority: advisory. Your verdict is a recommendation that a person reviews." in prompt
    assert "Domain: newspaper copy" in prompt and "- You must: Judge only the text given" in prompt
    assert "Authority:" not in render_system_prompt(rubric, CallUnit("_all", ("puffery",)))
    # the fields seed 001 added are left out of the hashed document at their defaults
    assert content_hash(with_role) != content_hash(rubric)
    assert "authority" not in dump_yaml(rubric) and "scope" not in dump_yaml(rubric)
    with pytest.raises(ValueError, match="authority"):
        rubric.role.model_validate({"authority": "supreme"})


def _constrained_slop():
    """llm-slop with a hard constraint the offline judge's rationales break, and a soft one."""
    base = rf.load_rubric("llm-slop").rubric
    output = base.output.model_copy(
        update={
            "constraints": (
                OutputConstraint(id="terse", field="rationale", max_words=2, severity="hard", scope="criterion"),
                OutputConstraint(id="essay", field="rationale", min_tokens=10_000, scope="judgment"),
                OutputConstraint(id="capped", field="rationale", max_words=3, scope="judgment", severity="hard"),
            )
        }
    )
    return rf.load_rubric(dump_yaml(base.model_copy(update={"output": output})))


@pytest.mark.slow
def test_a_hard_constraint_disqualifies_in_the_result_the_warehouse_and_the_views(thread_judge_server, tmp_path):
    judge = rf.Judge(base_url=thread_judge_server().base_url, strategy="holistic")
    rubric = _constrained_slop()
    r = judge.evaluate(rubric, TEXT)
    assert r.disqualified and r.disqualifiers == ("capped", "terse") and r.score == 0.0 and r.passed is False
    assert r.label == "disqualified" and all(c.status == "scored" for c in r.criteria.values())
    assert any(w.startswith("terse (hard) on rationale") for w in r.criteria["puffery"].warnings)
    assert r.warnings and r.warnings[0].startswith("essay: ") and "tokens < 10000" in r.warnings[0]
    plain = judge.evaluate("llm-slop", TEXT)
    assert not plain.disqualified and plain.score > 0

    wh = rf.Warehouse(tmp_path / "w.duckdb")
    wh.ingest([{"id": "t1", "text": TEXT}], corpus="c")
    run = wh.score("c", rubric, judge)
    assert run.status == "completed"
    scores = wh.text_scores(corpus="c")
    assert scores["disqualifiers"].to_list() == [["capped", "terse"]] and scores["label"].to_list() == ["disqualified"]
    assert scores["score"].to_list() == [0.0] and scores["passed"].to_list() == [False]
    hits = wh.query("SELECT disqualifier_id, kind, detail FROM disqualifier_hits ORDER BY 1").rows()
    assert hits[1] == ("terse", "constraint", "_all")  # a call's hard violation: the call unit that broke it
    assert hits[0][:2] == ("capped", "constraint") and hits[0][2].endswith("words > 3")  # the whole answer's
    assert wh.query("SELECT constraint_violations FROM completions")["constraint_violations"].to_list() == [["terse"]]
    # the soft judgment-scoped one is stored as a warning, not only printed: the same problem as r.warnings
    warned = wh.query("SELECT text_id, sample, constraint_id, problem FROM constraint_warnings").rows()
    assert warned == [("t1", 0, "essay", r.warnings[0].removeprefix("essay: "))]


@pytest.mark.slow
def test_the_refresh_checks_judgment_constraints_once_for_both_severities(thread_judge_server, tmp_path):
    """The hard and soft judgment-scoped constraints come from one pass over each sample's answer
    (analytics_refresh.sql: refresh_judgment_problems); both views equal the judge's own check
    (rubrics/constraints.judgment_problems) run here on the warehouse's raw judgments."""
    import json

    from rubricflow.rubrics.constraints import judgment_problems as whole_answer_problems
    from rubricflow.warehouse.judgment_constraints import _Judged

    base = rf.load_rubric("llm-slop").rubric
    constraints = (
        OutputConstraint(id="capped", field="rationale", max_words=3, scope="judgment", severity="hard"),
        OutputConstraint(id="roomy", field="rationale", max_words=100_000, scope="judgment", severity="hard"),
        OutputConstraint(id="essay", field="rationale", min_tokens=10_000, scope="judgment"),
        OutputConstraint(id="cited", field="evidence", min_items=50, scope="judgment"),
    )
    rubric = rf.load_rubric(
        dump_yaml(base.model_copy(update={"output": base.output.model_copy(update={"constraints": constraints})}))
    )
    wh = rf.Warehouse(tmp_path / "w.duckdb")
    wh.ingest([{"id": f"t{i}", "text": TEXT * (i + 1)} for i in range(3)], corpus="c")
    judge = rf.Judge(base_url=thread_judge_server().base_url, strategy="holistic", samples=2, temperature=0.7)
    assert wh.score("c", rubric, judge).status == "completed"

    raw = wh.query(
        "SELECT text_id, sample, criterion_id, rationale, evidence FROM judgments WHERE status = 'scored'"
    ).rows()
    answers: dict[tuple, list] = {}
    for text_id, sample, criterion, rationale, evidence in raw:
        answers.setdefault((text_id, sample), []).append(_Judged(criterion, "scored", rationale, list(evidence or [])))
    want = {"hard": set(), "soft": set()}
    for (text_id, sample), judged in answers.items():
        for c, problem in whole_answer_problems(rubric.rubric, judged):
            want[c.severity].add((text_id, c.id, problem) if c.severity == "hard" else (text_id, sample, c.id, problem))
    hits = wh.query("SELECT text_id, disqualifier_id, detail FROM disqualifier_hits WHERE kind = 'constraint'").rows()
    warned = wh.query("SELECT text_id, sample, constraint_id, problem FROM constraint_warnings").rows()
    assert len(answers) == 6 and {h[1] for h in want["hard"]} == {"capped"}
    assert {w[2] for w in want["soft"]} == {"essay", "cited"}, json.dumps(sorted(want["soft"]))
    assert set(hits) == want["hard"] and len(hits) == len(want["hard"])
    assert set(warned) == want["soft"] and len(warned) == len(want["soft"])
