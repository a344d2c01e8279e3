"""What every command shares: the two consoles, printing tables, the --warehouse option, and the
one place a judge setup is assembled from command-line options.

Nothing here imports Prefect, DuckDB or the rubric code: a command module that does not run a
flow stays as quick to start as the rubric code alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from rubricflow.errors import InputError
from rubricflow.settings import endpoint, settings

# C0 and C1 control characters but newline and tab: an ESC in a rubric, a text or an answer would
# otherwise recolour the terminal, move its cursor or plant an OSC 8 link.
_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))}
# Bidirectional controls (U+202E and kin) reorder what follows them on screen: a title could show
# text other than what it holds. Shown as \uXXXX too.
_CONTROL |= {c: f"\\u{c:04x}" for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))}


class SafeConsole(Console):
    """rich's Console, showing control characters in any text it renders as visible escapes."""

    def render_str(self, text: str, *args, **kwargs):
        return super().render_str(text.translate(_CONTROL), *args, **kwargs)


out = SafeConsole()
err = SafeConsole(stderr=True)

WarehouseOpt = typer.Option(
    None, "--warehouse", "-w", help="DuckDB file (default: $RUBRICFLOW_WAREHOUSE or warehouse/rubricflow.duckdb)."
)


def debugging() -> bool:
    return (settings().debug or "") not in ("", "0")


def machine_error(exc: BaseException) -> str | None:
    """One line for what the machine refused a command, wherever it surfaced: DuckDB out of
    memory under its limit names the variable that set it; a full disk (DuckDB's or Python's write)
    says so with the file DuckDB names. None for anything else."""
    import duckdb

    from rubricflow.warehouse.db import MEMORY_ENV, disk_full

    first = (str(exc).strip().splitlines() or [""])[0]
    if isinstance(exc, duckdb.OutOfMemoryException):
        limit = settings().duckdb_memory
        cause = f"${MEMORY_ENV}={limit} is too small for it" if limit else "the machine's memory is not enough"
        return f"the warehouse ran out of memory ({first}): {cause}; raise or unset ${MEMORY_ENV}"
    if disk_full(exc):
        return f"the disk is full: {first}; free space (what has landed is kept) and run the command again"
    return None


def said_in_one_line(exc: BaseException | None) -> bool:
    """Errors the CLI states in one line, with no traceback: rubricflow's own, the machine's refusals
    of a named path and those `machine_error` words (DuckDB's full disk in a Prefect task)."""
    from rubricflow.errors import RubricflowError

    named = isinstance(exc, RubricflowError) or (isinstance(exc, OSError) and exc.filename is not None)
    return named or (exc is not None and machine_error(exc) is not None)


def fail(message: str, code: int = 2) -> None:
    """End the command with one line on stderr and the exit code (2 usage/input, 1 a check failed)."""
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)  # a path is never cut
    raise typer.Exit(code)


def warehouse_path(path: Path | None) -> Path:
    from rubricflow.warehouse.db import default_path

    return Path(path) if path else default_path()


@contextmanager
def reading(path: Path | None) -> Iterator:
    """A read-only connection to the warehouse; a missing or locked one is a WarehouseError."""
    from rubricflow.warehouse import db

    with db.reader(warehouse_path(path)) as con:
        yield con


def print_rows(title: str, rows: list[dict]) -> None:
    """A list of dicts as one table; nothing at all for no rows."""
    from rich.table import Table

    from rubricflow.tasks.presentation.tables import show

    if not rows:
        return
    table = Table(title=title, title_justify="left")
    for name in rows[0]:
        table.add_column(escape(str(name)))
    for row in rows:
        table.add_row(*[escape(show(v)) for v in row.values()])
    out.print(table)


def print_query(con, title: str, name: str, **params) -> None:
    """The rows of one warehouse `.sql` file as a table."""
    from rubricflow.warehouse import db

    print_rows(title, db.fetch(con, name, **params))


def clip(value, n: int = 160) -> str:
    """A value as text of at most n characters ("" for None)."""
    text = "" if value is None else str(value)
    return text if len(text) <= n else text[: n - 3] + "..."


def write_report(path: Path, page: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    out.print(f"wrote {escape(str(path))} ({len(page) / 1024:.0f} KiB, self-contained)")


def judge_settings(
    model: str | None = None, base_url: str | None = None, *, need_endpoint: bool = False, **fields
) -> dict:
    """JudgeConfig fields from command-line options, checked here so a bad combination is a usage
    error before any flow starts. Options left as None keep JudgeConfig's defaults. With
    `need_endpoint`, a run that would judge with neither a model nor an endpoint is refused."""
    from rubricflow.tasks.judging.config import checked_config

    settings = {k: v for k, v in fields.items() if v is not None}
    if model:
        settings["model"] = model
    if base_url:
        settings["base_url"] = base_url
    if need_endpoint and not base_url and not model and not endpoint("OPENAI_BASE_URL"):
        raise InputError(
            "no judge endpoint: pass --base-url (or set OPENAI_BASE_URL), or run `rubricflow judge-server` "
            "and point --base-url at it, or try `rubricflow demo`"
        )
    checked_config(settings, need_endpoint)
    return settings
