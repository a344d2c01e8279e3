"""Detection and compliance results beside scores (`text_outcomes`), and an executable coproduct
(`score --route`): real HTTP to the offline judge, real DuckDB, real Prefect flow runs."""

from __future__ import annotations

import json
import re

import pytest

from rubricflow.errors import InputError
from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.routing import score_routed
from tests.conftest import TEST_DATA, ThreadServer, rows

COMPLIANCE = str(TEST_DATA / "rubrics/xml/compliance-judge-layout.xml")
ANSWERS = [
    ("a1", "Plan my week.", "I can't help with that.", "essay", "travel"),
    ("a2", "Plan my week.", "I refuse to work on this.", "essay", "travel"),
    ("a3", "Plan my week.", "Monday: gym. Tuesday: groceries. Wednesday: call mum.", "essay", "food"),
    ("a4", "Name three colours.", "Red, green and blue.", "news", "food"),
    ("a5", "Name three colours.", "Certainly! Nestled in the heart of colour, red plays a vital role.", "review", None),
]


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """One corpus routed by genre: essays to the ComplianceJudge, the rest to llm-slop (one server, one
    warehouse, two flow runs)."""
    tmp = tmp_path_factory.mktemp("outcomes")
    corpus = tmp / "answers.jsonl"
    with corpus.open("w", encoding="utf-8") as fh:
        for text_id, ask, answer, genre, topic in ANSWERS:
            record = {"id": text_id, "input": ask, "text": answer, "genre": genre}
            fh.write(json.dumps(record | ({"topic": topic} if topic else {})) + "\n")
    warehouse = tmp / "w.duckdb"
    ingest_flow(str(corpus), str(warehouse), "c")
    server = ThreadServer()
    try:
        judge = {"base_url": server.base_url}
        routed = score_routed(warehouse, "c", [f"essay={COMPLIANCE}", "llm-slop"], "genre", judge)
        yield warehouse, judge, routed
    finally:
        server.stop()


def test_a_compliance_verdict_and_the_patterns_that_fired_stand_beside_each_score(scored):
    warehouse, _, _ = scored
    found = rows(
        warehouse,
        "SELECT text_id, profile, score, verdict, patterns_fired, detected FROM text_outcomes "
        "WHERE rubric_id = 'compliance-judge' AND score IS NOT NULL ORDER BY text_id",
    )
    assert [r[0] for r in found] == ["a1", "a2", "a3"] and {r[1] for r in found} == {"compliance"}
    space = {"Yes": 1.0, "Somewhat": 0.5, "No": 0.0}  # the seed's <scoring_guidance> mapping
    for text_id, _, score, verdict, fired, detected in found:
        nearest = min(space, key=lambda v: (abs(space[v] - score), space[v]))
        assert verdict == nearest, (text_id, score, verdict)
        refusal = text_id in ("a1", "a2")
        assert any(p.startswith("refusal_regexes.") for p in fired) == refusal, (text_id, fired)
        assert detected == bool(fired)
    # the texts routed elsewhere have the judgment set's empty row (no criterion scored), no verdict
    unrouted = rows(
        warehouse,
        "SELECT text_id, verdict, routed_by FROM text_outcomes WHERE rubric_id = 'compliance-judge' "
        "AND score IS NULL ORDER BY 1",
    )
    assert unrouted == [("a4", None, None), ("a5", None, None)]
    verdicts = rows(warehouse, "SELECT label, score FROM rubric_verdicts ORDER BY position")
    assert verdicts == [("Yes", 1.0), ("Somewhat", 0.5), ("No", 0.0)]


def test_score_routes_each_text_to_the_rubric_its_genre_chooses(scored):
    warehouse, _, routed = scored
    assert sorted(r["rubric_id"] for r in routed) == ["compliance-judge", "llm-slop"]
    judged = rows(
        warehouse,
        "SELECT DISTINCT c.text_id, r.rubric_id FROM completions c JOIN rubrics r USING (rubric_hash) ORDER BY 1",
    )
    expected = [("a1", "compliance-judge"), ("a2", "compliance-judge"), ("a3", "compliance-judge")]
    assert judged == [*expected, ("a4", "llm-slop"), ("a5", "llm-slop")]  # each text judged once, by its rubric
    routes = rows(warehouse, "SELECT text_id, selector, value, choice, rubric_id FROM routed_texts ORDER BY 1")
    assert routes[0] == ("a1", "genre", "essay", "essay", "compliance-judge")
    assert routes[3] == ("a4", "genre", "news", "*", "llm-slop")
    outcomes = rows(
        warehouse,
        "SELECT text_id, rubric_id, routed_by, route_value FROM text_outcomes WHERE routed_by IS NOT NULL ORDER BY 1",
    )
    assert [o[:2] for o in outcomes] == judged and outcomes[4][2:] == ("genre", "review")


def test_a_route_by_metadata_and_a_text_no_choice_takes(scored, tmp_path):
    warehouse, judge, _ = scored
    with pytest.raises(InputError, match=r"text 'a5': no rubric for metadata.topic=None"):
        score_routed(warehouse, "c", ["travel=llm-slop", "food=writing-quality"], "metadata.topic", judge)
    with pytest.raises(InputError, match="route by genre, or metadata.KEY"):
        score_routed(warehouse, "c", ["x=llm-slop"], "colour", judge)
    with pytest.raises(InputError, match="at most one --rubric without VALUE="):
        score_routed(warehouse, "c", ["x=llm-slop", "llm-slop", "writing-quality"], "genre", judge)


def test_each_text_keeps_the_advice_its_rubric_gives_it(scored):
    """Coaching recorded per text: llm-slop's advice rules whose patterns fired on the text."""
    warehouse, _, _ = scored
    advice = rows(
        warehouse,
        "SELECT a.text_id, a.advice, a.because FROM text_advice a JOIN rubrics r USING (rubric_hash) "
        "WHERE r.rubric_id = 'llm-slop' ORDER BY a.text_id, a.rule",
    )
    assert advice and {a[0] for a in advice} == {"a5"}  # the one slop answer among llm-slop's texts
    fired = {a[1]: a[2] for a in advice}
    assert "puffery_words" in fired["Replace hype with concrete facts."]


def test_a_text_routed_to_another_rubric_is_not_routed_here_not_missing(scored, capsys):
    """Each rubric's rows for the texts the route sent elsewhere say so (`route_status`, `routed_to`),
    in the views and in the run summary's labels (before, they counted as texts without a label)."""
    from rubricflow.cli.score import print_run

    warehouse, _, routed = scored
    status = rows(
        warehouse,
        "SELECT rubric_id, text_id, route_status, routed_to FROM text_outcomes ORDER BY 1, 2",
    )
    judge_of = {"a1": "compliance-judge", "a2": "compliance-judge", "a3": "compliance-judge"}
    for rubric_id, text_id, route_status, routed_to in status:
        chosen = judge_of.get(text_id, "llm-slop")
        assert routed_to == chosen and route_status == ("routed" if chosen == rubric_id else "not routed")
    assert len(status) == 10  # five texts, two rubrics: every pair says which
    compliance = next(r["run_id"] for r in routed if r["rubric_id"] == "compliance-judge")
    print_run(warehouse, compliance)
    labels = capsys.readouterr().out
    assert re.search(r"\(not routed\)\s*│\s*2\s*│", labels), labels  # a4, a5: not texts without a label
