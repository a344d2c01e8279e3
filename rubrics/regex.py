"""Two regex engines. The warehouse runs patterns with DuckDB's RE2 engine (linear time, no
look-around or back-references), so DuckDB itself judges whether a pattern is RE2. A pattern RE2
refuses but the backtracking `regex` module reads (a look-ahead `(?!...)`, a look-behind) is kept:
its hits are counted in Python under a per-text time limit and land in the same `pattern_hits`
table. Only a pattern neither engine reads is refused."""

from __future__ import annotations

import atexit
import contextlib
import functools
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
    translated, flags = _translated(source)
    try:
        return regex.compile(translated, flags)
    except (regex.error, re.error, ValueError, RecursionError):  # RecursionError: nested ~400 deep
        return None


def _translated(source: str) -> tuple[str, int]:
    """An RE2 pattern as the `regex` module reads it: `\\x{...}` written `\\U...`, and its leading
    inline flags (RE2 has `U`, Python does not) as flags."""
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
    return translated, flags


def backtracking_hits(compiled: regex.Pattern, text: str) -> int | None:
    """Non-overlapping matches, as RE2's regexp_extract_all counts them; None past the time limit."""
    try:
        return sum(1 for _ in compiled.finditer(text, timeout=BACKTRACKING_TIMEOUT_S))
    except TimeoutError:
        return None


@functools.lru_cache(maxsize=4096)
def required_literals(source: str) -> frozenset[str] | None:
    """Lowercase ASCII strings one of which every match of `source` contains (a literal prefilter,
    as RE2 and Hyperscan use): an ASCII text whose lowercase holds none cannot match, and its scan
    is skipped (the offline judge's scans were ~40% of its CPU judging a group of 8, #55). None:
    no such strings are known (a pattern Python's parser cannot read, a class, an optional part)."""
    from re import _parser  # type: ignore[attr-defined]

    translated = _translated(source)[0]
    if _READ_OTHERWISE.search(translated):
        return None
    try:
        needed = _needed(list(_parser.parse(translated)))
    except (re.error, ValueError, OverflowError, RecursionError):  # ValueError: a brace read as a literal
        return None
    return frozenset(needed) if needed and min(map(len, needed)) >= 2 else None


# What the `regex` module reads otherwise than Python's parser, whose reading the literals come
# from: a POSIX class `[[:space:]]` (to Python a set, then a literal `]`) and verbose mode (a
# quantifier `{1, 2}`, a comment ending in a backslash). A brace Python reads as a literal is
# refused in _needed: `regex` may read it as a quantifier or fuzzy matching (`{1<=e<=2}`).
_READ_OTHERWISE = re.compile(r"\[:|\(\?[a-zA-Z^-]*x")


def may_match(literals: frozenset[str] | None, text: str, lowered: str) -> bool:
    """Whether `text` (`lowered`: its lowercase) can match a pattern of `required_literals`: False
    only for an ASCII text holding none of them (a non-ASCII text's case folding is not lower())."""
    return literals is None or not text.isascii() or any(word in lowered for word in literals)


def _needed(items: list) -> set[str] | None:
    """For a parsed sequence: the best set of strings one of which every match contains."""
    from re import _constants as c  # type: ignore[attr-defined]

    found: list[set[str]] = []
    run: list[str] = []
    for op, av in items + [(None, None)]:  # the sentinel ends the last run
        if op is c.LITERAL and av < 128:
            if chr(av) in "{}":
                raise ValueError("a literal brace: `regex` may read a quantifier there")
            run.append(chr(av).lower())
            continue
        if run:
            found.append({"".join(run)})
            run = []
        inner: set[str] | None = None
        if op is c.SUBPATTERN:
            inner = _needed(list(av[-1]))
        elif op is c.ATOMIC_GROUP:
            inner = _needed(list(av))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and av[0] >= 1:
            inner = _needed(list(av[2]))
        elif op is c.BRANCH:
            branches = [_needed(list(b)) for b in av[1]]
            inner = None if any(b is None for b in branches) else set().union(*branches)  # type: ignore[arg-type]
        if inner and len(inner) <= 64:
            found.append(inner)
    return max(found, key=lambda s: (min(map(len, s)), -len(s)), default=None)
