"""Scoped criteria (#51 item 2): a turn-scoped criterion is judged once per matching turn (counted by
the offline judge's /stats) and each transcript's score is its reducer over those turns' scores.
The other scopes and selectors are cut in tests/tasks/loaders/test_transcript_units.py."""

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


def test_one_call_per_matching_turn_and_the_transcript_score_is_the_reducer(tmp_path, thread_judge_server):
    """100 transcripts, 249 turn calls against the offline judge (a scoring run and its unit subflow)."""
    server = thread_judge_server()
    records = [transcript(i) for i in range(100)]
    turns = sum(1 for r in records for m in r["messages"] if m["role"] == "assistant")
    (tmp_path / "r.yaml").write_text(json.dumps(RUBRIC))
    wh = rf.Warehouse(tmp_path / "w.duckdb")
    wh.ingest(records, corpus="c")
    run = wh.score("c", str(tmp_path / "r.yaml"), rf.Judge(base_url=server.base_url, strategy="per_criterion"))
    assert server.stats()["answered"] == turns == 249  # one call per assistant turn, none for the transcripts
    w = str(tmp_path / "w.duckdb")
    units: dict = {}
    for transcript_id, score in rows(
        w,
        "SELECT (t.metadata::JSON)->>'transcript_id', j.unit_score FROM judgments j "
        "JOIN texts t ON t.text_id = j.text_id AND t.corpus_id = 'c.units' WHERE j.corpus_id = 'c.units'",
    ):
        units.setdefault(transcript_id, []).append(score)
    landed = dict(rows(w, f"SELECT text_id, unit_score FROM judgments WHERE run_id = '{run.run_id}'"))
    assert len(landed) == 100 and sum(len(s) for s in units.values()) == turns
    assert all(landed[t] == min(scores) for t, scores in units.items())  # reducer: all
    assert set(landed.values()) == {0.0, 1.0}  # the transcripts that never name the budget fail
    [(rationale,)] = rows(w, f"SELECT rationale FROM judgments WHERE run_id = '{run.run_id}' AND text_id = 't002'")
    assert rationale.startswith("all of 3 unit(s): M2 ")


def long_transcript(name: str, turns: int, budget_at: int | None) -> dict:
    """`turns` turns of a 200-character exchange; the answer of turn `budget_at` names the budget."""
    messages = [{"role": "system", "content": "You are a travel agent."}]
    for turn in range(turns):
        words = "budget passed " + "word " * 27 + "w" if turn == budget_at else "word " * 30
        messages += [
            {"role": "user", "content": f"Question {turn}?"},
            {"role": "assistant", "content": f"Answer {turn}: {words}"},
        ]
    return {"id": name, "messages": messages}


def test_a_long_transcript_is_judged_in_segments_and_the_reducer_combines_them(tmp_path, thread_judge_server):
    """2 transcripts over a 195-token context in 5 segments each, 3 within it whole: 13 calls."""
    server = thread_judge_server()
    rubric = {
        **RUBRIC,
        "criteria": [{"id": "names-budget", "reducer": "any", "patterns": ["names-budget"]}],
        "long_transcripts": {"context_tokens": 195, "overlap_turns": 1},
    }
    records = [long_transcript("late", 10, 9), long_transcript("never", 10, None)]
    records += [long_transcript(f"short{i}", 1, 0 if i else None) for i in range(3)]
    (tmp_path / "r.yaml").write_text(json.dumps(rubric))
    wh = rf.Warehouse(tmp_path / "w.duckdb")
    wh.ingest(records, corpus="c")
    run = wh.score("c", str(tmp_path / "r.yaml"), rf.Judge(base_url=server.base_url, strategy="per_criterion"))
    assert server.stats()["answered"] == 2 * 5 + 3  # one call per segment, one per short transcript
    assert (run.segmented_transcripts, run.transcript_segments, run.cut_transcripts) == (2, 10, 0)
    w = str(tmp_path / "w.duckdb")
    late = [
        s for (s,) in rows(w, "SELECT unit_score FROM judgments WHERE corpus_id = 'c.units' AND text_id LIKE 'late#%'")
    ]
    assert sorted(late) == [0.0] * 4 + [1.0]  # only the last segment names the budget
    landed = dict(rows(w, f"SELECT text_id, unit_score FROM judgments WHERE run_id = '{run.run_id}'"))
    assert landed == {"late": 1.0, "never": 0.0, "short0": 0.0, "short1": 1.0, "short2": 1.0}  # reducer: any


def test_a_tool_call_unit_shows_the_judge_that_its_result_failed(tmp_path, thread_judge_server):
    """A unit is cut from the warehouse's messages: a result the source marked as an error is shown
    as failed, so an agent that reports a failed booking as done can be judged on it."""
    server = thread_judge_server()
    call = {"id": "c1", "type": "function", "function": {"name": "book", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "Book it."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "503 Service Unavailable", "is_error": True},
        {"role": "assistant", "content": "Booked."},
    ]
    rubric = RUBRIC | {"criteria": [{**RUBRIC["criteria"][0], "scope": "tool_call", "select": None}]}
    (tmp_path / "r.yaml").write_text(json.dumps(rubric))
    wh = rf.Warehouse(tmp_path / "w.duckdb")
    wh.ingest([{"id": "t", "messages": messages}], corpus="c")
    wh.score("c", str(tmp_path / "r.yaml"), rf.Judge(base_url=server.base_url, strategy="per_criterion"))
    [(text,)] = rows(str(tmp_path / "w.duckdb"), "SELECT text FROM texts WHERE corpus_id = 'c.units'")
    assert text.splitlines()[-1] == "[M2] tool (result of book #c1, failed): 503 Service Unavailable"
