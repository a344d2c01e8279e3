"""The warehouse's `.sql` files: read one, split it into statements, run it, fetch its rows, and
group statements into one transaction. Every SQL statement rubricflow runs lives in `sql/`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

SQL_DIR = Path(__file__).parent / "sql"


def sql(name: str) -> str:
    """The text of one `.sql` file of the warehouse."""
    return (SQL_DIR / name).read_text(encoding="utf-8")


def statements(con: duckdb.DuckDBPyConnection, name: str, params: dict) -> Iterator[tuple[Any, dict]]:
    """The statements of a `.sql` file as DuckDB's own parser splits them (comments, strings and
    semicolons in them are its business), each with the named parameters it uses (DuckDB refuses
    unused ones; a missing one is a KeyError naming it)."""
    for statement, names in parsed(con, sql(name)):
        yield statement, {p: params[p] for p in names}


def parsed(con: duckdb.DuckDBPyConnection, text: str) -> tuple[tuple[duckdb.Statement, tuple[str, ...]], ...]:
    """A file's statements parsed once a process, keyed by their text: DuckDB's parser took ~9 ms
    of CPU for analytics_refresh.sql, at every refresh (a run's shard loads, each writer's open).
    The parser needs no database, so one connection's parse serves every connection; DuckDB
    executes a copy of a parsed statement, never the cached one, so sharing it is safe."""
    found = _parsed.get(text)
    if found is None:
        found = tuple((s, tuple(s.named_parameters)) for s in con.extract_statements(text))
        _parsed[text] = found  # a race parses twice and keeps either: the same statements
    return found


_parsed: dict[str, tuple[tuple[duckdb.Statement, tuple[str, ...]], ...]] = {}


def literal(value: object) -> str:
    """A value as a quoted SQL string, for the statements DuckDB takes no parameters in (ATTACH,
    COPY ... TO)."""
    return "'" + str(value).replace("'", "''") + "'"


def fetch(con: duckdb.DuckDBPyConnection, name: str, **params) -> list[dict]:
    """The rows of a one-query `.sql` file, as dicts."""
    [(statement, used)] = statements(con, name, params)
    cursor = con.execute(statement, used)
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def fetch_tuples(con: duckdb.DuckDBPyConnection, name: str, **params) -> list[tuple]:
    """The rows of a one-query `.sql` file as tuples, in its columns' order: for results of
    100,000s of rows, where a dict per row costs as much as the query."""
    [(statement, used)] = statements(con, name, params)
    return con.execute(statement, used).fetchall()


def run_sql(con: duckdb.DuckDBPyConnection, name: str, **params) -> None:
    """Run every statement of a `.sql` file, giving each the named parameters it uses."""
    for statement, used in statements(con, name, params):
        con.execute(statement, used)


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """All the statements inside commit together or not at all."""
    con.execute("BEGIN")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
