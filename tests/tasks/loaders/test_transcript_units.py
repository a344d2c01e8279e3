"""A scoped criterion's units of a transcript (#51 item 2): which messages each scope and selector
picks, and the text the judge reads for one unit (its message ids, a few messages of context)."""

import pytest

from rubricflow.rubrics.model import Criterion, Rubric
from rubricflow.tasks.loaders.transcript_units import transcript_units, unit_positions
from rubricflow.warehouse import db
from rubricflow.warehouse.scopes import load_units


def call(cid, name):
    return {"id": cid, "name": name, "arguments": "{}"}


MESSAGES = [
    {"position": 0, "role": "system", "content": "You are a travel agent."},
    {"position": 1, "role": "user", "content": "Flights to Paris?"},
    {"position": 2, "role": "assistant", "content": None, "tool_calls": [call("a", "search"), call("b", "weather")]},
    {"position": 3, "role": "tool", "content": "AF123", "tool_call_id": "a"},
    {"position": 4, "role": "tool", "content": "sunny", "tool_call_id": "b"},
    {"position": 5, "role": "assistant", "content": "AF123 it is; sunny there."},
    {"position": 6, "role": "user", "content": "Book it."},
    {"position": 7, "role": "assistant", "content": None, "tool_calls": [call("c", "search")]},
    {"position": 8, "role": "assistant", "content": "Booked."},
]


@pytest.mark.parametrize(
    ("scope", "select", "expected"),
    [
        ("final", None, [[8]]),
        ("turn", None, [[2], [5], [7], [8]]),  # assistant turns by default
        ("turn", {"role": "user"}, [[1], [6]]),
        ("turn", {"role": "user", "position": "last"}, [[6]]),
        ("turn", {"position": 1}, [[5]]),
        ("turn", {"position": -2}, [[7]]),
        ("turn", {"position": 9}, []),  # no such unit: nothing to judge
        ("step", None, [[2, 3, 4], [5], [7], [8]]),  # an assistant message and the results of its calls
        ("tool_call", None, [[2, 3], [2, 4], [7]]),  # each call and its result (the last has none)
        ("tool_call", {"tool": "search"}, [[2, 3], [7]]),
        ("tool_call", {"tool": "search", "position": "first"}, [[2, 3]]),
    ],
)
def test_each_scope_and_selector_picks_its_units(scope, select, expected):
    criterion = Criterion(id="x", scope=scope, select=select)
    assert unit_positions(MESSAGES, criterion) == expected


def test_a_unit_text_names_the_messages_judged_after_its_context():
    [unit] = transcript_units("t1", MESSAGES, Criterion(id="x", scope="tool_call", select={"tool": "weather"}))
    assert unit.unit_id == "t1#x#M2.2"  # M2's second call
    lines = unit.text.splitlines()
    assert lines[0] == "Judge only tool call M2 (call 2 of 2: weather #b), M4; the messages before it are context."
    assert lines[lines.index("Judged:") + 1 :] == [
        "[M2] assistant: ",
        "  -> call search({}) #a",
        "  -> call weather({}) #b",
        "[M4] tool (result of weather #b): sunny",
    ]
    assert "[M1] user: Flights to Paris?" in lines[: lines.index("Judged:")]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"scope": "transcript", "select": {"role": "user"}}, "select applies to a turn, step or tool_call"),
        ({"scope": "turn", "select": {"tool": "search"}}, "select.tool applies to the tool_call scope"),
        ({"scope": "turn", "check": {"kind": "tool_used", "tool": "x"}}, "a check reads the whole transcript"),
        ({"scope": "turn", "reducer": "median"}, "reducer"),
    ],
)
def test_a_scope_that_cannot_apply_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        Criterion(id="x", **fields)


def long_chat(turns: int, words: str = "word " * 30) -> list[dict]:
    """A system message, then `turns` turns of a user question and an answer of ~150 characters."""
    messages = [{"position": 0, "role": "system", "content": "You are a travel agent."}]
    for turn in range(turns):
        messages.append({"position": len(messages), "role": "user", "content": f"Question {turn}?"})
        messages.append({"position": len(messages), "role": "assistant", "content": f"Answer {turn}: {words}"})
    return messages


def segments_criterion(**long):
    rubric = Rubric.model_validate(
        {"metadata": {"id": "long"}, "criteria": [{"id": "polite", "reducer": "all"}], "long_transcripts": long}
    )
    return rubric.criteria[0], rubric.long_transcripts


def test_a_transcript_over_the_context_is_cut_into_overlapping_segments_of_whole_turns():
    criterion, long = segments_criterion(context_tokens=195, overlap_turns=1)  # 780 characters
    assert criterion.scope == "segments"  # declared per rubric: the transcript-scoped criteria take it
    units = transcript_units("t", long_chat(10), criterion, long)
    # each turn 200 characters, the head 33 and the note 100: three turns a segment, the last of each repeated
    assert [u.part for u in units] == ["segment"] * 5
    assert [u.position for u in units] == [1, 5, 9, 13, 17]
    assert all(u.text.count("[M0] system") == 1 and len(u.text) <= 780 for u in units)
    assert "segment 2 of 5, messages M5 to M10" in units[1].text and "[M5] user: Question 2?" in units[0].text
    assert transcript_units("t", long_chat(2), criterion, long)[0].part == "whole"  # within the context


@pytest.mark.parametrize(
    ("mode", "kept"), [("last_turns", ["[M17] user", "[M20] assistant"]), ("tool_calls", ["[M20] assistant"])]
)
def test_a_long_transcript_is_judged_on_its_stated_view(mode, kept):
    criterion, long = segments_criterion(context_tokens=150, mode=mode, last_turns=2)
    [unit] = transcript_units("t", long_chat(10), criterion, long)
    assert unit.part == mode and unit.text.startswith("A transcript too long to judge whole")
    assert all(k in unit.text for k in kept) and "[M1] user" not in unit.text and "[M0] system" in unit.text


def test_scope_segments_needs_the_rubric_declaration():
    with pytest.raises(ValueError, match="scope segments needs the rubric's long_transcripts"):
        Rubric.model_validate({"metadata": {"id": "x"}, "criteria": [{"id": "a", "scope": "segments"}]})


def test_a_reused_call_id_is_answered_by_the_result_after_its_own_call():
    """call_0 used again: each unit's result was looked up across the whole transcript (the search
    call's unit took the book call's result's name, the book call's unit the search's result)."""
    messages = [
        {"position": 0, "role": "user", "content": "Find and book"},
        {"position": 1, "role": "assistant", "content": None, "tool_calls": [call("call_0", "search")]},
        {"position": 2, "role": "tool", "content": "A", "tool_call_id": "call_0"},
        {"position": 3, "role": "assistant", "content": None, "tool_calls": [call("call_0", "book")]},
        {"position": 4, "role": "tool", "content": "B", "tool_call_id": "call_0", "is_error": True},
    ]
    assert unit_positions(messages, Criterion(id="x", scope="tool_call")) == [[1, 2], [3, 4]]
    assert unit_positions(messages, Criterion(id="x", scope="step")) == [[1, 2], [3, 4]]
    first, second = transcript_units("t", messages, Criterion(id="x", scope="tool_call"))
    assert first.text.splitlines()[-1] == "[M2] tool (result of search #call_0): A"
    assert second.text.splitlines()[-1] == "[M4] tool (result of book #call_0, failed): B"


def test_parallel_calls_of_one_message_are_units_apart(tmp_path):
    """Both calls of M2 were units `t1#x#M2`: the unit corpus kept one (the other call and its result
    were never judged), and each unit's text said only "tool call M2", not which of its calls."""
    units = transcript_units("t1", MESSAGES, Criterion(id="x", scope="tool_call"))
    assert [u.unit_id for u in units] == ["t1#x#M2.1", "t1#x#M2.2", "t1#x#M7"]
    assert [u.text.splitlines()[0].split(";")[0] for u in units] == [
        "Judge only tool call M2 (call 1 of 2: search #a), M3",
        "Judge only tool call M2 (call 2 of 2: weather #b), M4",
        "Judge only tool call M7",
    ]
    with db.writer(tmp_path / "w.duckdb") as con:
        load_units(con, "c", units, tmp_path / "units")
        kept = con.execute("SELECT text_id FROM texts WHERE corpus_id = 'c.units' ORDER BY 1").fetchall()
    assert kept == [("t1#x#M2.1",), ("t1#x#M2.2",), ("t1#x#M7",)]
    [last] = transcript_units("t1", MESSAGES, Criterion(id="x", scope="tool_call", select={"position": 1}))
    assert last.unit_id == "t1#x#M2.2"  # a selector picks the call, and its unit says which
