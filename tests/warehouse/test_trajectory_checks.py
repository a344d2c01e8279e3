"""Trajectory checks (#51 item 2): declared as criteria, decided in SQL over the messages (no judge
call), landed as judgments."""

import json
import random

import pytest

from rubricflow.rubrics.compiler import compile_or_raise, rubric_document
from rubricflow.rubrics.model import Rubric
from rubricflow.rubrics.render import call_units
from rubricflow.tasks.loaders.ingest import ingest_corpus
from rubricflow.warehouse import checks, db, steps


def call(cid, name, **arguments):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


TRANSCRIPTS = {
    # search, lookup, book: in order with a call between, one error result, ends with a booking reference
    "a": [
        {"role": "system", "content": "You book travel."},
        {"role": "user", "content": "Fly me to Paris on Friday"},
        {"role": "assistant", "content": None, "tool_calls": [call("1", "search", to="Paris", day="Fri")]},
        {"role": "tool", "tool_call_id": "1", "content": "AF123"},
        {"role": "assistant", "content": None, "tool_calls": [call("2", "lookup", code="AF123")]},
        {"role": "tool", "tool_call_id": "2", "content": "ERROR: timeout", "is_error": True},
        {"role": "assistant", "content": None, "tool_calls": [call("3", "book", flight="AF123", seats=2)]},
        {"role": "tool", "tool_call_id": "3", "content": "booked"},
        {"role": "assistant", "content": "Booked: reference ZX9Q."},
    ],
    # book before search, no error, apologises at the end
    "b": [
        {"role": "user", "content": "Fly me to Rome"},
        {"role": "assistant", "content": None, "tool_calls": [call("1", "book", flight="AZ1", seats=1)]},
        {"role": "tool", "tool_call_id": "1", "content": "booked"},
        {"role": "assistant", "content": None, "tool_calls": [call("2", "search", to="Rome")]},
        {"role": "tool", "tool_call_id": "2", "content": "AZ1"},
        {"role": "assistant", "content": "Sorry, I booked before searching."},
    ],
    # no tools at all
    "c": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello!"}],
}

CHECKS = {
    "used-search": {"kind": "tool_used", "tool": "search"},
    "never-cancel": {"kind": "tool_not_used", "tool": "cancel"},
    "search-then-book": {"kind": "tool_sequence", "tools": ["search", "book"]},
    "both-any-order": {"kind": "tool_sequence", "tools": ["book", "search"], "order": "any_order"},
    "exactly-book-search": {"kind": "tool_sequence", "tools": ["book", "search"], "order": "exact"},
    "to-paris": {"kind": "argument", "tool": "search", "path": "$.to", "equals": "Paris"},
    "two-seats": {"kind": "argument", "tool": "book", "path": "$.seats", "equals": 2},
    "flight-code": {"kind": "argument", "tool": "book", "path": "$.flight", "matches": "^[A-Z]{2}\\d+$"},
    "at-most-3-steps": {"kind": "step_count", "max": 3},
    "two-calls-or-more": {"kind": "step_count", "count": "tool_calls", "min": 2},
    "no-errors": {"kind": "error_results"},
    "no-timeouts": {"kind": "error_results", "matches": "(?i)timeout", "max": 0},
    "gives-reference": {"kind": "final_message", "matches": "reference [A-Z0-9]{4}"},
    "no-apology": {"kind": "final_message", "not_matches": "(?i)sorry"},
}
EXPECTED = {  # criterion: (a, b, c) passed
    "used-search": (1, 1, 0),
    "never-cancel": (1, 1, 1),
    "search-then-book": (1, 0, 0),
    "both-any-order": (1, 1, 0),
    "exactly-book-search": (0, 1, 0),
    "to-paris": (1, 0, 0),
    "two-seats": (1, 0, 0),
    "flight-code": (1, 1, 0),
    "at-most-3-steps": (0, 1, 1),
    "two-calls-or-more": (1, 1, 0),
    "no-errors": (0, 1, 1),
    "no-timeouts": (0, 1, 1),
    "gives-reference": (1, 0, 0),
    "no-apology": (1, 0, 1),
}


def rubric(criteria: dict, judged: bool = False) -> Rubric:
    listed = [{"id": cid, "check": check} for cid, check in criteria.items()]
    if judged:
        listed.append({"id": "helpful", "description": "The answer helps."})
    return Rubric.model_validate({"metadata": {"id": "agent"}, "goal": "The agent books well.", "criteria": listed})


@pytest.fixture
def warehouse(tmp_path):
    source = tmp_path / "chats.jsonl"
    lines = [json.dumps({"id": tid, "messages": msgs}) for tid, msgs in TRANSCRIPTS.items()]
    source.write_text("\n".join([*lines, json.dumps({"id": "plain", "messages": "not a list"})]) + "\n")
    report = ingest_corpus(source, tmp_path / "corpora" / "c")
    path = tmp_path / "rf.duckdb"
    with db.writer(path) as con:
        steps.load_corpus(con, "c", str(source), report.parquet, report.rows_ok, report.rows_quarantined)
    return path


def test_every_kind_of_check_lands_as_a_judgment(warehouse):
    bundle = compile_or_raise(rubric(CHECKS))
    with db.writer(warehouse) as con:
        db.register_rubric(con, bundle)
        assert checks.evaluate_checks(con, "c", bundle, "run-1", "judge-1") == len(CHECKS)
        rows = con.execute(
            "SELECT criterion_id, text_id, value::INTEGER, unit_score, status FROM judgments WHERE run_id = 'run-1'"
        ).fetchall()
    got: dict[str, list[int]] = {}
    for criterion, _text_id, value, score, status in sorted(rows, key=lambda r: (r[0], r[1])):
        assert status == "scored" and score == value
        got.setdefault(criterion, []).append(value)
    assert {k: tuple(v) for k, v in got.items()} == EXPECTED


def test_a_second_run_lands_nothing_twice(warehouse):
    bundle = compile_or_raise(rubric(CHECKS))
    with db.writer(warehouse) as con:
        db.register_rubric(con, bundle)
        checks.evaluate_checks(con, "c", bundle, "run-1", "judge-1")
        checks.evaluate_checks(con, "c", bundle, "run-2", "judge-1")
        assert con.execute("SELECT count(*), count(DISTINCT cell_key) FROM judgments").fetchall() == [
            (3 * len(CHECKS), 3 * len(CHECKS))
        ]


def test_a_check_runs_judgments_are_stored_in_text_order(tmp_path):
    """The analytics refresh after a check run recomputes the texts in text order, batch by batch, and
    DuckDB skips the row groups outside a batch by their min/max: stored in the file's order, every
    batch read all of the run's judgments (1,000,000 transcripts: a refresh growing as the corpus squared)."""
    ids = [f"t{k:03d}" for k in range(60)]
    random.Random(51).shuffle(ids)
    source = tmp_path / "chats.jsonl"
    source.write_text("".join(json.dumps({"id": tid, "messages": TRANSCRIPTS["a"]}) + "\n" for tid in ids))
    report = ingest_corpus(source, tmp_path / "corpora" / "c")
    bundle = compile_or_raise(rubric({k: CHECKS[k] for k in ("used-search", "no-errors")}))
    with db.writer(tmp_path / "rf.duckdb") as con:
        steps.load_corpus(con, "c", str(source), report.parquet, report.rows_ok, report.rows_quarantined)
        db.register_rubric(con, bundle)
        checks.evaluate_checks(con, "c", bundle, "run-1", "judge-1")
        stored = [text_id for (text_id,) in con.execute("SELECT text_id FROM judgments ORDER BY rowid").fetchall()]
    assert len(stored) == 2 * len(ids) and stored == sorted(stored)


def test_the_judge_is_never_asked_about_a_check():
    mixed = rubric({"used-search": CHECKS["used-search"]}, judged=True)
    assert [u.criteria for u in call_units(mixed, "per_criterion")] == [("helpful",)]
    assert call_units(rubric({"used-search": CHECKS["used-search"]}), "holistic") == []


def test_a_rubric_without_checks_keeps_its_hash():
    plain = Rubric.model_validate(
        {"metadata": {"id": "agent"}, "goal": "g", "criteria": [{"id": "helpful", "description": "d"}]}
    )
    assert "check" not in rubric_document(plain)["criteria"][0]


@pytest.mark.parametrize(
    ("check", "message"),
    [
        ({"kind": "tool_used"}, "a tool_used check needs tool"),
        ({"kind": "argument", "tool": "x", "path": "$.a"}, "needs equals or matches"),
        ({"kind": "final_message"}, "needs matches or not_matches"),
    ],
)
def test_an_incomplete_check_is_refused_by_name(check, message):
    with pytest.raises(ValueError, match=message):
        rubric({"x": check})


def test_a_reused_call_id_links_each_result_to_the_call_just_made_and_a_function_error_counts(tmp_path):
    """A server numbering each turn's calls from call_0: the `tool_calls` view gave the first call both
    results (3 rows for 2 calls); a legacy function_call's failed result was no error result (it passed)."""
    reused = [
        {"role": "user", "content": "Find and book"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_0", "search")]},
        {"role": "tool", "tool_call_id": "call_0", "content": "A"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_0", "book")]},
        {"role": "tool", "tool_call_id": "call_0", "content": "B"},
    ]
    legacy = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": "{}"}},
        {"role": "function", "name": "get_weather", "content": "error: timeout", "is_error": True},
    ]
    source = tmp_path / "chats.jsonl"
    source.write_text("".join(json.dumps({"id": i, "messages": m}) + "\n" for i, m in (("r", reused), ("f", legacy))))
    report = ingest_corpus(source, tmp_path / "corpora" / "c")
    bundle = compile_or_raise(rubric({"no-errors": CHECKS["used-search"] | {"kind": "error_results"}}))
    with db.writer(tmp_path / "rf.duckdb") as con:
        steps.load_corpus(con, "c", str(source), report.parquet, report.rows_ok, report.rows_quarantined)
        assert con.execute(
            "SELECT position, tool_name, result_position, result FROM tool_calls WHERE transcript_id = 'r' ORDER BY 1"
        ).fetchall() == [(1, "search", 2, "A"), (3, "book", 4, "B")]
        db.register_rubric(con, bundle)
        checks.evaluate_checks(con, "c", bundle, "run-1", "judge-1")
        verdicts = dict(con.execute("SELECT text_id, value::INTEGER FROM judgments").fetchall())
    assert verdicts == {"r": 1, "f": 0}
