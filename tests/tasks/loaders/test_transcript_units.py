"""A scoped criterion's units of a transcript (#51 item 2): which messages each scope and selector
picks, and the text the judge reads for one unit (its message ids, a few messages of context)."""

import pytest

from rubricflow.rubrics.model import Criterion
from rubricflow.tasks.loaders.transcript_units import transcript_units, unit_positions


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
    assert unit.unit_id == "t1#x#M2"
    lines = unit.text.splitlines()
    assert lines[0] == "Judge only tool call M2, M4; the messages before it are context."
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
