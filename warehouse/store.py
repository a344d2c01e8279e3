"""The warehouse as a flow reaches it: one object per file, each method holding the file only for
its own statements (datasette's `Database` is the model: `execute` / `execute_fn` read on a
read-only connection, `execute_write` / `execute_write_fn` write on this process's one writer). A flow
module opens no connection itself (tests/flows/test_run_value.py keeps `duckdb`, `db` and `sqlfiles`
out of every one), so the writer's waiting, schema upkeep and analytics catch-up are never skipped."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import duckdb

from . import db
from .sqlfiles import fetch, run_sql, transaction

P = ParamSpec("P")
T = TypeVar("T")
Connection = duckdb.DuckDBPyConnection


class Store:
    """One warehouse file, read and written in short holds (a long one would keep a `query`, the
    viewer or another run waiting)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def execute(self, name: str, **params: Any) -> list[dict]:
        """The rows of a one-query `.sql` file, read on a read-only connection."""
        with db.reader(self.path) as con:
            return fetch(con, name, **params)

    def execute_fn(self, fn: Callable[Concatenate[Connection, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(con, ...)` on a read-only connection: several reads that must see one state."""
        with db.reader(self.path) as con:
            return fn(con, *args, **kwargs)

    def execute_write(self, name: str, **params: Any) -> None:
        """Every statement of a `.sql` file, committed together."""
        with db.writer(self.path) as con, transaction(con):
            run_sql(con, name, **params)

    def execute_write_fn(self, fn: Callable[Concatenate[Connection, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(con, ...)` on the writer: a write of several steps (warehouse/steps.record_routes, an
        evolution's round) that must hold the file once."""
        with db.writer(self.path) as con:
            return fn(con, *args, **kwargs)
