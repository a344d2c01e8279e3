"""Two regex engines. The warehouse runs patterns with DuckDB's RE2 engine (linear time, no
look-around or back-references), so DuckDB itself judges whether a pattern is RE2. A pattern RE2
refuses but the backtracking `regex` module reads (a look-ahead `(?!...)`, a look-behind) is kept:
its hits are counted in Python under a per-text time limit and land in the same `pattern_hits`
table. Only a pattern neither engine reads is refused."""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import threading
from collections.abc import Iterator
from typing import Any

import duckdb
import regex

BACKTRACKING_TIMEOUT_S = 0.5  # per text: a catastrophic pattern, e.g. `(a+)+$`, counts as unknown, not a hang

_known: dict[str, str | None] = {}
_engine: dict[int, Any] = {}  # process id -> its in-memory DuckDB for RE2 matching (see re2_cursor)
_inherited: list[Any] = []  # a parent's, after a fork: never used nor closed in the child
_engine_lock = threading.Lock()
_matchers: dict[tuple[str, ...], Any] = {}  # patterns -> their Re2Matcher, or None (see re2_matcher)


@contextlib.contextmanager
def re2_cursor() -> Iterator[Any]:
    """A cursor on this process's one in-memory DuckDB, for matching with RE2 as the warehouse does.
    A database a call cost ~30 ms CPU and ~100 ms wall (its start), each reward-server batch, on the
    judge loop; a cursor costs ~10 us. Opened on first use with one thread, closed at exit."""
    with _engine_lock:
        engine = _engine.get(os.getpid())
        if engine is None:
            _inherited.extend(_engine.values())
            _engine.clear()
            engine = _engine[os.getpid()] = duckdb.connect(":memory:", config={"threads": 1})
            atexit.register(_close_engine, os.getpid())
        cursor = engine.cursor()
    try:
        yield cursor
    finally:
        cursor.close()


def _close_engine(pid: int) -> None:
    with _engine_lock:
        engine = _engine.pop(pid, None) if pid == os.getpid() else None
    if engine is not None:
        engine.close()


def re2_errors(patterns: list[str]) -> dict[str, str | None]:
    """RE2's reason for refusing each pattern, or None when it compiles."""
    todo = [p for p in dict.fromkeys(patterns) if p not in _known]
    if todo:
        with re2_cursor() as con:
            for pattern in todo:
                try:
                    con.execute("SELECT regexp_matches('', $1)", [pattern]).fetchall()
                    _known[pattern] = None
                except duckdb.Error as exc:
                    _known[pattern] = str(exc).split("Error: ", 1)[-1].strip()
    return {p: _known[p] for p in patterns}


def re2_matcher(sources: tuple[str, ...]) -> Re2Matcher | None:
    """The RE2 matcher of `sources` in this process, built once; None when google-re2's build
    refuses one of them, or is not installed (the caller asks DuckDB)."""
    if sources not in _matchers:
        try:
            import re2
        except ImportError:
            _matchers[sources] = None
            return None
        try:
            _matchers[sources] = Re2Matcher(sources)
        except re2.error:
            _matchers[sources] = None
    return _matchers[sources]


class Re2Matcher:
    """Patterns matched by RE2 itself in the process (google-re2: the engine DuckDB embeds, with
    `regexp_matches`' options: RE2's defaults, errors not logged): a DuckDB query cost ~4.7 ms of CPU
    a batch of one text with llm-slop's 7 patterns, this 0.05 ms (1.5 against 5.0 ms for 32 texts
    of ~400 characters), and the reward server's batches are small (#55). Pattern by pattern, never one RE2 set: a set whose DFA runs out of memory reports no
    match (a wrong verdict), where one pattern's search falls back to RE2's NFA."""

    def __init__(self, sources: tuple[str, ...]):
        import re2

        options = re2.Options()
        options.log_errors = False  # as DuckDB sets it; a refusal is reported by the caller, not on stderr
        self.each = [re2.compile(source, options) for source in sources]

    def __call__(self, text: str) -> set[int]:
        """The indices of the patterns matching somewhere in `text`."""
        return {k for k, compiled in enumerate(self.each) if compiled.search(text) is not None}


def backtracking(source: str) -> regex.Pattern | None:
    """The pattern compiled by the `regex` module (RE2's `\\x{...}` and leading inline flags
    translated), or None when it cannot read it either."""
    translated = re.sub(r"\\x\{([0-9A-Fa-f]+)\}", lambda m: f"\\U{int(m.group(1), 16):08x}", source)
    flags = 0
    m = re.match(r"^\(\?([imsU]+)\)", translated)
    if m:
        translated = translated[m.end() :]
        flags = (
            (regex.I if "i" in m.group(1) else 0)
            | (regex.M if "m" in m.group(1) else 0)
            | (regex.S if "s" in m.group(1) else 0)
        )
    try:
        return regex.compile(translated, flags)
    except (regex.error, re.error, ValueError):
        return None


def backtracking_hits(compiled: regex.Pattern, text: str) -> int | None:
    """Non-overlapping matches, as RE2's regexp_extract_all counts them; None past the time limit."""
    try:
        return sum(1 for _ in compiled.finditer(text, timeout=BACKTRACKING_TIMEOUT_S))
    except TimeoutError:
        return None
