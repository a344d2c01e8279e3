"""RE2 matching outside the warehouse (rf.Judge's pattern hits, the reward server's batches) runs on
the process's one in-memory DuckDB: a database a call cost ~100 ms a batch on the judge loop."""

import multiprocessing

from rubricflow.api_judge import patterns_of
from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.regex import re2_cursor

from .factories import rubric


def test_every_call_is_a_cursor_on_one_database_of_the_process():
    with re2_cursor() as first:
        first.execute("CREATE OR REPLACE TABLE probe_one_engine AS SELECT 42 AS v")
    try:
        with re2_cursor() as second:
            assert second.execute("SELECT v FROM probe_one_engine").fetchone() == (42,)
    finally:
        with re2_cursor() as con:
            con.execute("DROP TABLE probe_one_engine")


def test_batches_after_batches_match_by_re2_and_by_the_backtracking_engine():
    patterns = [{"id": "cheer", "regex": r"(?i)\bhooray\b"}, {"id": "not_because", "regex": r"\bmay\b(?!\s+because)"}]
    bundle = compile_or_raise(rubric(patterns=patterns, criteria=[{"id": "a", "patterns": ["cheer", "not_because"]}]))
    texts = ["Hooray, it may rain.", "It may because of it.", "nothing here"]
    for _ in range(3):
        assert patterns_of(texts, bundle) == [{"cheer", "not_because"}, set(), set()]


def _match_in_child(pipe) -> None:
    with re2_cursor() as con:
        pipe.send(con.execute("SELECT regexp_matches('abc', 'b')").fetchone()[0])


def test_a_forked_child_opens_a_database_of_its_own():
    with re2_cursor() as con:  # the parent's is open before the fork
        con.execute("SELECT 1").fetchall()
    parent, child = multiprocessing.get_context("fork").Pipe()
    process = multiprocessing.get_context("fork").Process(target=_match_in_child, args=(child,))
    process.start()
    assert parent.poll(30) and parent.recv() is True
    process.join(30)
    assert process.exitcode == 0
