"""RE2 matching outside the warehouse (rf.Judge's pattern hits, the reward server's batches) runs on
google-re2 in the process, and on the process's one in-memory DuckDB for a pattern that build
refuses (a database a call cost ~100 ms a batch on the judge loop)."""

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


def test_re2_in_process_matches_as_duckdb_does():
    """The reward server's patterns run on google-re2 in the process: every hit as DuckDB's RE2 finds it."""
    from rubricflow.api_judge import _duckdb_hits, _re2_hits

    sources = [
        r"(?i)\bstunning\b", r"\w+ café", r"(?i)ÉTÉ", r"^\s*$", r"\d{3}", r"(?m)^end$", r"a.b", r"(?s)a.b",
        r"\bnaïve\b", r"[[:alpha:]]+\d", r"\x{1F600}", r"(?U)a+",
    ]  # fmt: skip
    texts = [
        "A Stunning view",
        "un café noir",
        "l'été",
        "   ",
        "٣٤٥ and 345",
        "start\nend\nx",
        "a\nb",
        "naïve",
        "ab1",
        "😀",
        "",
    ]
    expected = [(i, hit) for i, hit in _duckdb_hits(texts, sources) if any(hit)]
    assert _re2_hits(texts, sources) == expected
    assert len(expected) > 5


def test_a_long_text_finds_every_pattern():
    from rubricflow.rubrics.regex import Re2Matcher

    sources = (r"(?i)\bstunning\b", r"\d{3}", r"zzz$")
    text = "x " * 20_000 + "a Stunning 345 zzz"
    assert Re2Matcher(sources)(text) == {0, 1, 2}
    assert Re2Matcher(sources)(text[:40_000]) == set()
