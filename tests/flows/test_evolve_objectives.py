"""Multi-objective `improve evolve` on real human labels (Topical-Chat) with the offline judge: every
objective reported on validation and test (recomputed here from the raw rows), rounds accepted by the
validation figures alone, a Pareto front; structural invariants refuse what the reflection proposes
before it is scored; the proposal gate (the lattice validator rubrics) refuses a proposal that lowers
a property, over real HTTP."""

from types import SimpleNamespace

import duckdb
import pytest

from rubricflow.flows.evolve import _screen, evolve_flow
from rubricflow.rubrics.algebra import evolve
from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.formats import load_rubric
from rubricflow.tasks.improve.evolve import split
from rubricflow.tasks.improve.objectives import Objectives, compute, dominates, refusal
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.loaders.labels import import_topical_chat
from rubricflow.tasks.standins.judge_server import RunningServer
from tests.conftest import ROOT, rows
from tests.flows.test_evolve import small_topical_chat

RUBRIC = str(ROOT / "flows" / "samples" / "topical-chat-dialogue.yaml")
SETTINGS = {"weights": {"agreement": 1.0, "discrimination": 1.0}, "select": "pareto", "tolerances": {"agreement": 0.05}}


def raw_values(warehouse, rubric_hash: str, texts: list[str]) -> dict:
    """Seed 001's objectives recomputed from the raw rows (one sample: consistency undefined)."""
    low, high = rows(
        warehouse,
        "SELECT min(h), max(h) FROM (SELECT avg(score) AS h FROM labels WHERE rater = 'human' "
        "AND criterion_id = 'overall' GROUP BY text_id)",
    )[0]
    found = rows(
        warehouse,
        "SELECT s.score, avg(l.score), (SELECT list(c.unit_score) FROM criterion_scores c WHERE c.text_id = s.text_id "
        "AND c.rubric_hash = s.rubric_hash AND c.unit_score IS NOT NULL) FROM text_scores s JOIN labels l "
        "ON l.corpus_id = s.corpus_id AND l.text_id = s.text_id AND l.rater = 'human' AND l.criterion_id = 'overall' "
        "WHERE s.rubric_hash = ? AND list_contains(?, s.text_id) GROUP BY s.text_id, s.score, s.rubric_hash "
        "ORDER BY s.text_id",
        [rubric_hash, texts],
    )
    return compute(
        [
            {"score": s, "human": h, "human_min": low, "human_max": high, "units": u, "cv": None, "samples": 1}
            for s, h, u in found
        ]
    )


@pytest.mark.slow
def test_every_objective_on_validation_and_test_and_rounds_accepted_on_validation_only(tmp_path, thread_judge_server):
    server = thread_judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    import_topical_chat(small_topical_chat(tmp_path, 120), "tc", warehouse)  # a round judges 120 cells
    common = ("tc", RUBRIC, warehouse, ["human"], "overall", {"base_url": server.base_url}, None, 2, None, 3, 0.2, 0.2)
    result = evolve_flow(*common, str(tmp_path / "evo"), settings=SETTINGS, options={"minibatch": 6})
    figures = result["objectives"]
    assert set(figures["validation"]["start"]) == {"agreement", "consistency", "discrimination"}
    with duckdb.connect(warehouse, read_only=True) as con:
        parts = split(con, "tc", ["human"], "overall", 3, 0.2, 0.2)
    for name, texts in (("validation", parts.validation), ("test", parts.test)):
        for version in ("start", "best"):
            want = raw_values(warehouse, result[version], texts)
            got = figures[name][version]
            assert got["agreement"] == pytest.approx(want["agreement"]) and got["discrimination"] == pytest.approx(
                want["discrimination"]
            )
    parents = {result["start"]: raw_values(warehouse, result["start"], parts.validation)}
    current = result["start"]
    for r in result["rounds"]:
        after = raw_values(warehouse, r["candidate_hash"], parts.validation)
        assert (refusal(parents[current], after, Objectives(**SETTINGS)) is None) == (r["status"] == "accepted")
        if r["status"] == "accepted":
            parents[r["candidate_hash"]], current = after, r["candidate_hash"]
    front = result["front"]
    assert front and all(
        not dominates(o["validation"], p["validation"], ["agreement", "discrimination"]) for p in front for o in front
    )

    again = evolve_flow(*common, str(tmp_path / "evo"), settings=SETTINGS, options={"minibatch": 6})
    assert again["evolution_id"] == result["evolution_id"] and again["calls_this_run"] == 0  # replayed, unpaid
    assert again["objectives"] == figures and again["front"] == front and again["best"] == result["best"]

    kept = evolve_flow(*common, str(tmp_path / "kept"), settings=SETTINGS, options={"invariants": True})
    assert kept["evolution_id"] != result["evolution_id"] and kept["calls_this_run"] == 0
    assert [r["status"] for r in kept["rounds"]] == ["refused", "refused"]
    assert all("only text and weights may evolve" in r["reason"] for r in kept["rounds"])


def test_the_proposal_gate_refuses_a_candidate_that_lowers_a_lattice_property(tmp_path):
    parent = compile_or_raise(load_rubric(RUBRIC))
    cid = parent.rubric.criteria[0].id
    more = [{"op": "add_criterion", "criterion": {"id": f"extra-{n}", "description": "More."}} for n in range(3)]
    worse = compile_or_raise(evolve(parent.rubric, more))  # 8 criteria: past seed 000's 3-7, economy falls
    reworded = evolve(parent.rubric, [{"op": "rewrite_criterion", "id": cid, "changes": {"title": "Reworded"}}])
    with RunningServer() as server:
        ev = SimpleNamespace(
            best=parent,
            options={"invariants": False, "gate": True},
            reflect_config=JudgeConfig(base_url=server.base_url),
            folder=tmp_path,
        )
        assert "the proposal gate refused it: it lowers economy (3 -> 2)" in _screen(ev, worse)  # counted
        assert _screen(ev, compile_or_raise(reworded)) is None
        calls = server.app.stats.requests
        assert _screen(ev, worse) is not None and server.app.stats.requests == calls  # judged once, journaled
    assert (tmp_path / ".gate.jsonl").exists()
