"""Scoped criteria (#51 item 2): a turn-scoped criterion is judged once per matching turn (counted by
the offline judge's /stats) and each transcript's score is its reducer over those turns' scores;
a tool_call-scoped one with a tool selector judges only that tool's calls."""

import json

import rubricflow as rf
from tests.conftest import rows

RUBRIC = {
    "metadata": {"id": "agent-turns", "version": "1.0.0"},
    "goal": "The agent answers each request plainly.",
    "criteria": [
        {
            "id": "plain-turns",
            "description": "The assistant message is plain and free of filler.",
            "scope": "turn",
            "select": {"role": "assistant"},
            "reducer": "all",
            "patterns": ["names-budget"],  # the offline judge scores a unit up when it hits
        },
        {
            "id": "search-calls",
            "description": "The search call asks for what the user wanted.",
            "scope": "tool_call",
            "select": {"tool": "search"},
            "reducer": "mean",
        },
    ],
    "patterns": [{"id": "names-budget", "regex": "budget passed"}],
}


def transcript(i: int) -> dict:
    """1 to 3 assistant turns; every third transcript's turns say nothing of the budget; one search
    call in half."""
    answer = "Certainly! I hope this helps." if i % 3 == 0 else "the road budget passed."
    messages = [{"role": "system", "content": "You are a travel agent."}]
    for turn in range(1 + i % 3):
        messages.append({"role": "user", "content": f"Question {turn} of traveller {i}?"})
        messages.append({"role": "assistant", "content": f"Answer {turn} for traveller {i}: {answer}"})
    if i % 2:
        call = {"id": f"c{i}", "type": "function", "function": {"name": "search", "arguments": json.dumps({"q": i})}}
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": "ok"},
        ]
    return {"id": f"t{i:03d}", "messages": messages}


def test_one_call_per_matching_turn_and_the_transcript_score_is_the_reducer(tmp_path, judge_server):
    """100 transcripts, 250 unit calls against the offline judge (~30 s unloaded)."""
    server = judge_server()
    records = [transcript(i) for i in range(100)]
    turns = sum(1 for r in records for m in r["messages"] if m["role"] == "assistant")
    calls = sum(
        1
        for r in records
        for m in r["messages"]
        for c in m.get("tool_calls") or []
        if c["function"]["name"] == "search"
    )
    (tmp_path / "r.yaml").write_text(json.dumps(RUBRIC))
    wh = rf.Warehouse(tmp_path / "w.duckdb")
    wh.ingest(records, corpus="c")
    run = wh.score("c", str(tmp_path / "r.yaml"), rf.Judge(base_url=server.base_url, strategy="per_criterion"))
    assert server.stats()["answered"] == turns + calls  # one call per unit, none for the transcripts
    w = str(tmp_path / "w.duckdb")
    units = rows(
        w,
        "SELECT (t.metadata::JSON)->>'transcript_id', (t.metadata::JSON)->>'criterion_id', j.unit_score FROM judgments j "
        "JOIN texts t ON t.text_id = j.text_id AND t.corpus_id = 'c.units' WHERE j.corpus_id = 'c.units'",
    )
    assert len(units) == turns + calls
    by: dict = {}
    for transcript_id, criterion_id, score in units:
        by.setdefault((transcript_id, criterion_id), []).append(score)
    landed = {
        (t, c): s
        for t, c, s in rows(w, f"SELECT text_id, criterion_id, unit_score FROM judgments WHERE run_id = '{run.run_id}'")
    }
    assert len(landed) == 200  # each transcript, each criterion
    for (transcript_id, criterion_id), scores in by.items():
        reduced = min(scores) if criterion_id == "plain-turns" else sum(scores) / len(scores)
        assert abs(landed[(transcript_id, criterion_id)] - reduced) < 1e-9
    assert (
        len({s for (t, c), s in landed.items() if c == "plain-turns"}) == 2
    )  # the transcripts without the budget fail
    no_search = [t for (t, c), s in landed.items() if c == "search-calls" and s is None]
    assert len(no_search) == 50  # no search call: unscored, said so
    assert rows(
        w,
        "SELECT DISTINCT reason FROM judgments WHERE criterion_id = 'search-calls' AND unit_score IS NULL AND corpus_id = 'c'",
    ) == [("no matching unit",)]
