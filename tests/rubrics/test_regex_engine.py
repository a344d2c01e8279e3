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


def test_the_literal_prefilter_never_skips_a_text_the_pattern_matches():
    """Every pattern of the library's rubrics, against slices of the real labelled data and their
    upper case: where `may_match` says no, the `regex` engine finds no match (the offline judge
    skips the scan there, #55). And it does skip: a prefilter that never says no is no prefilter."""
    from pathlib import Path

    from rubricflow.rubrics.library import Library
    from rubricflow.rubrics.regex import backtracking, may_match, required_literals

    library = Library()
    sources = {p.effective_regex() for e in library.entries() for p in library.bundle(e.id).rubric.patterns}
    data = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "calibration"
    raw = "".join(f.read_text(encoding="utf-8")[:40_000] for f in sorted(data.rglob("*.json*")))
    texts = [raw[i : i + 500] for i in range(0, len(raw), 500)]
    texts += [t.upper() for t in texts]
    skipped = 0
    for source in sources:
        compiled, literals = backtracking(source), required_literals(source)
        for text in texts:
            if compiled is not None and not may_match(literals, text, text.lower()):
                skipped += 1
                assert compiled.search(text) is None, (source, literals, text[:80])
    assert len(sources) > 50 and skipped > len(texts)


def test_the_literals_a_pattern_needs():
    from rubricflow.rubrics.regex import may_match, required_literals

    assert required_literals(r"(?i)\b(stunning|rich (?:cultural )?heritage|nestled)\b") == {
        "stunning",
        "heritage",
        "nestled",
    }
    assert required_literals(r"\x{41}BC") == {"abc"}  # RE2's escape, compared in lower case
    assert required_literals(r"(ab)*cd") == {"cd"}  # an optional part needs nothing
    for unknown in (r"[a-z]+", r"a(b)?c", r"(?:colour){e<=1}", r"\p{L}+", r"(a|)"):
        assert required_literals(unknown) is None, unknown
    # Where Python's parser reads what the `regex` module matches otherwise (an outside probe's
    # cases): a literal it "needed" was in no match, and the scan was skipped on a text that matches.
    from rubricflow.rubrics.regex import backtracking

    for source, text in (
        (r"[[:space:]]delve", "we delve"),  # a POSIX class: to Python a set, then a literal `]`
        (r"(?:abcd){1<=e<=2}", "abxd"),  # fuzzy matching: to Python, literal braces
        (r"(?:abcd){1s<=1}", "abxd"),
        (r"(?x)\d{1, 2}px", "7px"),  # verbose mode: a quantifier with a space
        ("(?x)zzzz #c \\\n|ab", "ab"),  # verbose: a comment ending in a backslash
    ):
        assert backtracking(source).search(text) is not None, source
        assert may_match(required_literals(source), text, text.lower()), source
    deep = "(ab|" * 400 + "c" + ")" * 400  # nested past the parsers' recursion limit: unknown, not a crash
    assert required_literals(deep) is None and backtracking(deep) is None
    words = required_literals(r"(?i)stunning")
    assert not may_match(words, "A plain text.", "a plain text.")
    assert may_match(words, "STUNNING", "stunning")
    # a non-ASCII text is scanned: the long s `ſ` matches `s` under IGNORECASE, and lower() keeps it
    assert may_match(words, "ſtunning", "ſtunning")
