"""RE2 validation. The warehouse runs patterns with DuckDB's RE2 engine, so DuckDB itself is the
judge of whether a pattern is valid: a pattern Python's `re` accepts (look-behind, back-references)
must be refused here, not fail later inside a nightly SQL query."""

from __future__ import annotations

import functools
import threading

import duckdb

_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def _connection() -> duckdb.DuckDBPyConnection:
    return duckdb.connect(":memory:")


@functools.lru_cache(maxsize=4096)
def re2_error(pattern: str) -> str | None:
    """Return RE2's reason for refusing `pattern`, or None when it compiles."""
    with _lock:
        try:
            _connection().execute("SELECT regexp_matches('', $1)", [pattern]).fetchall()
        except duckdb.Error as exc:
            message = str(exc)
            return message.split("Error: ", 1)[-1].strip()
    return None
