"""Reading the warehouse: `runs`, `show` and `query` (read-only SQL)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.markup import escape

from rubricflow.errors import CheckFailed, InputError

from .common import WarehouseOpt, err, out, print_query, reading, warehouse_path


def runs(warehouse: Path | None = WarehouseOpt, limit: int = typer.Option(20)) -> None:
    """Recent runs with their counts, tokens and coverage, then their prompt tokens: sent, cached,
    the least the judgments needed, and what the cache saved."""
    with reading(warehouse) as con:
        print_query(con, "runs", "recent_runs.sql", limit=limit)
        print_query(con, "prompt tokens", "run_prompts.sql", limit=limit)


def show(
    text_id: str, corpus: str | None = typer.Option(None, "--corpus", "-c"), warehouse: Path | None = WarehouseOpt
) -> None:
    """One text: its scores under every rubric, and each criterion's judgment and rationale."""
    from rubricflow.warehouse import db

    with reading(warehouse) as con:
        texts = db.fetch(con, "text_versions.sql", text=text_id, corpus=corpus)
        if not texts:
            raise CheckFailed(f"no text {text_id!r}" + (f" in corpus {corpus!r}" if corpus else ""))
        for t in texts:
            out.print(
                f"[bold]{escape(t['corpus_id'])}/{escape(text_id)}[/]"
                + (f" (genre {escape(t['genre'])})" if t["genre"] else "")
            )
            text = t["text"]
            out.print(text if len(text) < 1200 else text[:1200] + " ...", markup=False, highlight=False)
            print_query(con, "scores", "text_scores_of.sql", corpus=t["corpus_id"], text=text_id)
            print_query(con, "judgments", "text_judgments.sql", corpus=t["corpus_id"], text=text_id)


def query(
    sql_text: str = typer.Argument(..., metavar="SQL"),
    format: str = typer.Option("table", "--format", "-f", help="table, csv, json or parquet."),
    output: Path | None = typer.Option(None, "--out", "-o", help="File to write (required for parquet)."),
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """Run one read-only SELECT against the warehouse: statements of any other kind are refused,
    and the query can reach no file, network or setting, only the warehouse's tables and views."""
    from rich.table import Table

    from rubricflow.warehouse import db

    if format not in ("table", "csv", "json", "parquet"):
        raise InputError(f"unknown format {format!r}; use table, csv, json or parquet")
    if format == "parquet" and output is None:
        raise InputError("--format parquet needs --out FILE")
    result = db.read_only_query(warehouse_path(warehouse), sql_text)
    import polars as pl  # after the query: a refused one exits without its import (~0.3 s of CPU)

    frame = pl.DataFrame(pl.from_arrow(result))
    if format == "table":
        table = Table(show_lines=False)
        for name in frame.columns:
            table.add_column(escape(name))
        for row in frame.head(1000).iter_rows():
            table.add_row(*[escape("" if v is None else str(v)) for v in row])
        out.print(table)
        if frame.height > 1000:
            err.print(f"({frame.height} rows; first 1000 shown: use --format csv for all)")
        return
    target = output or sys.stdout
    if format == "csv":  # CSV has no nested values: lists and structs are written as JSON
        nested = [c for c, t in frame.schema.items() if t.is_nested()]
        frame.with_columns(pl.col(c).map_elements(_json, return_dtype=pl.Utf8) for c in nested).write_csv(target)
    elif format == "json":
        frame.write_ndjson(target)
    elif output is not None:  # parquet: --out is required (checked above)
        frame.write_parquet(output)
    if output:
        err.print(f"wrote {frame.height} rows to {escape(str(output))}")


def _json(value) -> str:
    import json

    return json.dumps(value.to_list() if hasattr(value, "to_list") else value, default=str, ensure_ascii=False)
