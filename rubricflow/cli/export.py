"""`rubricflow export`: a run's scores or judgments, or an A/B comparison, to Parquet, CSV or
JSONL with the run's metadata (tasks/presentation/export.py)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from rubricflow.errors import InputError

from .common import WarehouseOpt, err, reading, warehouse_path

KINDS = ("scores", "judgments", "comparison")


def export(
    kind: str = typer.Argument(..., metavar="KIND", help="scores, judgments or comparison."),
    output: Path = typer.Option(..., "--out", "-o", help="File to write: .parquet, .csv or .jsonl."),
    run_id: str | None = typer.Option(None, "--run", help="The run to export (see `rubricflow runs`)."),
    corpus: str | None = typer.Option(None, "--corpus", "-c", help="Corpus id (with --rubric, or --a/--b)."),
    rubric: str | None = typer.Option(None, "--rubric", "-r", help="With --corpus: that rubric's latest run."),
    a: str | None = typer.Option(None, "--a", help="comparison: side A (id, id@version, hash prefix, file)."),
    b: str | None = typer.Option(None, "--b", help="comparison: side B."),
    format: str | None = typer.Option(None, "--format", "-f", help="parquet, csv or jsonl (default: from --out)."),
    warehouse: Path | None = WarehouseOpt,
    force: bool = typer.Option(False, "--force", help="Overwrite --out if it exists (never the warehouse)."),
) -> None:
    """Write a run's text scores or judgments, or the A/B of two rubric versions, to a file other
    tools read. The run's metadata (rubric, hashes, model, parameters, coverage) goes in the
    Parquet file's metadata (key `rubricflow`), or for CSV and JSONL in FILE.meta.json."""
    from rubricflow.tasks.presentation import export as exporting

    if kind not in KINDS:
        raise InputError(f"unknown export {kind!r}; use {', '.join(KINDS)}")
    fmt = exporting.format_of(output, format)
    path = warehouse_path(warehouse)
    exporting.check_target(output, path, force, fmt)
    if kind == "comparison":
        if not (corpus and a and b):
            raise InputError("export comparison needs --corpus, --a and --b")
        written = exporting.export_comparison(_comparison(path, corpus, a, b), output, fmt)
    else:
        done = exporting.export_run(path, kind, _run_of(path, run_id, corpus, rubric), output, fmt)
        written = done.rows
        if done.coverage < 1:  # said where it is seen, not only in the metadata: the rest are blank
            err.print(
                f"coverage {done.coverage:.1%}: {done.scored} of {done.texts} texts scored; "
                "the others are exported with blank scores (score again to fill them)"
            )
    beside = "" if fmt == "parquet" else f" (metadata in {exporting.metadata_path(output).name})"
    err.print(f"wrote {written} rows to {escape(str(output))}{escape(beside)}")


def _run_of(warehouse: Path, run_id: str | None, corpus: str | None, rubric: str | None) -> str:
    """The run named, or the latest run of the rubric on the corpus."""
    if run_id:
        return run_id
    if not (corpus and rubric):
        raise InputError("name the run: --run RUN_ID, or --corpus and --rubric for its latest run")
    from rubricflow.tasks.stats.compare import CompareError, judgment_sets
    from rubricflow.warehouse import db

    with reading(warehouse) as con:
        try:  # its errors name a comparison's side and exit 1 (a check failed): here the input is wrong
            found = judgment_sets(con, corpus, rubric, None, True, "export")
        except CompareError:
            raise InputError(
                f"no judgments of {rubric!r} on corpus {corpus!r}; score it first (`rubricflow score`)"
            ) from None
        if len(found) > 1:
            listed = "; ".join(f"rubric {rh[:12]} judge {jh[:12]}" for rh, jh in found)
            raise InputError(
                f"{rubric!r} matches {len(found)} judgment sets on corpus {corpus!r} ({listed}); "
                "name one version (id@version or a rubric hash prefix), or the run with --run"
            )
        rubric_hash, judge_hash = found[0]
        return db.fetch(con, "latest_run.sql", corpus=corpus, rubric=rubric_hash, judge=judge_hash)[0]["run_id"]


def _comparison(warehouse: Path, corpus: str, a: str, b: str):
    """The A/B of two landed sides: the stored one while current, else computed (and stored)."""
    from rubricflow.tasks.stats.compare import compared, judgment_sets

    with reading(warehouse) as con:
        side_a = judgment_sets(con, corpus, a, None, False, "A")
        side_b = judgment_sets(con, corpus, b, None, False, "B")
    return compared(warehouse, corpus, side_a, side_b)
