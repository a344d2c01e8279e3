"""RE2 validation. The warehouse runs patterns with DuckDB's RE2 engine, so DuckDB itself is the
judge of whether a pattern is valid: a pattern Python's `re` accepts (look-behind, back-references)
must be refused here, not fail later inside a nightly SQL query."""

from __future__ import annotations

import duckdb

_known: dict[str, str | None] = {}


def re2_errors(patterns: list[str]) -> dict[str, str | None]:
    """RE2's reason for refusing each pattern, or None when it compiles."""
    todo = [p for p in dict.fromkeys(patterns) if p not in _known]
    if todo:
        con = duckdb.connect(":memory:")  # short-lived: no DuckDB object outlives the call
        try:
            for pattern in todo:
                try:
                    con.execute("SELECT regexp_matches('', $1)", [pattern]).fetchall()
                    _known[pattern] = None
                except duckdb.Error as exc:
                    _known[pattern] = str(exc).split("Error: ", 1)[-1].strip()
        finally:
            con.close()
    return {p: _known[p] for p in patterns}
