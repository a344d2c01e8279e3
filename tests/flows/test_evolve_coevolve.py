"""`improve evolve --co-evolve` (seed 001's evolve_rubric_v3) on 60 Topical-Chat texts with the offline
judge: rounds take turns between the rubric and the search's meta-components (the proposal gate, the
reflection template, the tolerances); a meta round costs no judge call and is kept unless it would
have refused a round the evolution accepted; the evolved components land in the output folder and the
warehouse, the next rounds use them, and the same command again replays everything unpaid."""

import json

import duckdb

from rubricflow.flows.evolve import evolve_flow
from rubricflow.tasks.improve.evolve import split
from rubricflow.tasks.improve.reflect import GUIDANCE
from rubricflow.tasks.loaders.labels import import_topical_chat
from tests.conftest import ROOT, rows
from tests.flows.test_evolve import small_topical_chat

RUBRIC = str(ROOT / "flows" / "samples" / "topical-chat-dialogue.yaml")


def test_co_evolution_takes_turns_keeps_what_undoes_nothing_and_replays_unpaid(tmp_path, thread_judge_server):
    server = thread_judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    import_topical_chat(small_topical_chat(tmp_path), "tc", warehouse)
    common = ("tc", RUBRIC, warehouse, ["human"], "overall", {"base_url": server.base_url}, None, 5, None, 3, 0.2, 0.2)
    options = {"gate": True, "co_evolve": True, "minibatch": 6}
    result = evolve_flow(*common, str(tmp_path / "evo"), options=options)
    co = result["co_evolution"]

    # round-robin: the rubric, then each meta-component in turn, then the rubric again
    assert [(r["round"], r["status"]) for r in result["rounds"]] == [(1, "accepted"), (5, "rejected")]
    assert [(r["round"], r["component"], r["status"]) for r in co["rounds"]] == [
        (2, "gate", "accepted"),
        (3, "reflection", "accepted"),
        (4, "acceptance", "refused"),
    ]
    # a value is kept only if it would not have refused an accepted round: round 1 was accepted on the
    # Pearson rule, but under seed 001's agreement (1 - mean absolute error) it did not improve, so the
    # tolerances are refused and round 5 is decided by the plain Pearson rule
    why = "under it, accepted round 1 would have been refused: the weighted objectives did not improve"
    assert co["rounds"][2]["reason"] == why
    assert co["acceptance"] == {}
    assert result["rounds"][1]["reason"] == "the validation agreement did not improve"
    assert co["gate_rubric"]["slack"] == 0.05 and co["reflection_template"].startswith(GUIDANCE + " ")
    recorded = rows(warehouse, "SELECT round, component, status, value FROM evolution_components ORDER BY round")
    assert [(r[0], r[1], r[2], json.loads(r[3]) if r[3] else None) for r in recorded] == [
        (r["round"], r["component"], r["status"], r["value"]) for r in co["rounds"]
    ]
    assert not rows(warehouse, "SELECT * FROM evolution_rounds WHERE round NOT IN (1, 5)")  # meta rounds: no candidate
    # a meta round costs no judge call: the calls are the two target rounds' alone
    assert result["calls"] == sum(r["calls"] for r in result["rounds"])

    written = json.loads((tmp_path / "evo" / "co-evolved.json").read_text())
    assert {k: written[k] for k in ("gate_rubric", "reflection_template", "acceptance")} == {
        k: co[k] for k in ("gate_rubric", "reflection_template", "acceptance")
    }
    with duckdb.connect(warehouse, read_only=True) as con:
        parts = split(con, "tc", ["human"], "overall", 3, 0.2, 0.2)
    assert parts.test and result["test_texts"] == len(parts.test)

    # as if killed between round 4's proposal and its decision: the recorded value is decided, not asked again
    with duckdb.connect(warehouse) as con:
        con.execute("UPDATE evolution_components SET status = 'proposed', finished_at = NULL WHERE round = 4")
    answered = server.stats()["answered"]
    again = evolve_flow(*common, str(tmp_path / "evo"), options=options)
    assert server.stats()["answered"] == answered and again["calls_this_run"] == 0  # replayed, unpaid
    assert again["co_evolution"]["rounds"] == co["rounds"] and again["best"] == result["best"]
    assert rows(warehouse, "SELECT status FROM evolution_components WHERE round = 4") == [("refused",)]
