"""`rubricflow ingest`: a corpus file or folder into Parquet and the warehouse."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from .common import WarehouseOpt, err, fail, out, warehouse_path


def ingest(
    source: Path = typer.Argument(
        ...,
        help="JSONL, CSV, TSV, Excel's Unicode Text (.txt), Parquet, a folder of .txt/.md files, or a "
        "Hugging Face dataset folder (save_to_disk, or the Hub's Parquet shards).",
    ),
    corpus: str | None = typer.Option(None, "--corpus", "-c", help="Corpus id (default: from the file name)."),
    text_field: str | None = typer.Option(
        None, help="Column holding the text (default: text/output/completion/response/content)."
    ),
    id_field: str | None = typer.Option(
        None,
        help="Column holding each text's id (default: text_id, else id, "
        "else the first 16 hex digits of the text's sha256).",
    ),
    input_field: str | None = typer.Option(None, help="Column holding each text's input (default: input)."),
    context_field: str | None = typer.Option(None, help="Column holding each text's context (default: context)."),
    genre_field: str | None = typer.Option(None, help="Column holding each text's genre (default: genre)."),
    max_chars: int = typer.Option(1_000_000, help="Rows with longer texts are quarantined."),
    allow_quarantine: bool = typer.Option(False, help="Exit 0 even when rows were quarantined."),
    limit: int | None = typer.Option(
        None,
        min=1,
        help="Read only the source's first N rows (a trial: the corpus's other texts are not marked removed).",
    ),
    encoding: str | None = typer.Option(
        None,
        help="A CSV/TSV's text encoding, e.g. cp1252 for Excel's \"CSV (Comma delimited)\" "
        "(default: UTF-8, or UTF-16 after its byte-order mark).",
    ),
    split: str | None = typer.Option(
        None, help="A Hugging Face dataset folder's split to read (default: train, or its only split)."
    ),
    allow_removal: bool = typer.Option(
        False, help="Load even when more than half the corpus's texts would be marked removed (gone from the source)."
    ),
    trace_format: str | None = typer.Option(
        None,
        "--format",
        help="An agent-trace format: openai (chat JSONL), otel (OpenTelemetry GenAI spans), openinference, "
        "inspect (an Inspect AI .eval log), atif (a Harbor trajectory). Default: detected from the file.",
    ),
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """Load a corpus into normalised Parquet and the warehouse; bad rows go to a quarantine file.
    Exits 1 when any row was quarantined (the good rows are loaded all the same)."""
    if not source.exists():
        fail(f"{source}: no such file or folder")
    from rubricflow.api_warehouse import run_ingest

    roles = {"input": input_field, "context": context_field, "genre": genre_field}
    fields = {role: column for role, column in roles.items() if column}
    report = run_ingest(
        source,
        warehouse_path(warehouse),
        corpus,
        text_field,
        id_field,
        fields,
        max_chars,
        limit,
        encoding,
        split,
        allow_removal,
        trace_format,
    )
    print_ingest(report)
    if report["rows_quarantined"] and not report["rows_ok"]:  # --allow-quarantine or not: nothing landed
        fail(f"every row of {source} was quarantined ({report['rows_quarantined']}): no text was loaded", code=1)
    if report["rows_quarantined"] and not allow_quarantine:
        fail(
            f"{report['rows_quarantined']} rows of {source} were quarantined (the other rows are loaded); "
            "fix them or pass --allow-quarantine",
            code=1,
        )


def print_ingest(report: dict) -> None:
    split = f" (split {report['split']})" if report.get("split") else ""
    out.print(
        f"corpus [bold]{report['corpus_id']}[/]{split}: {report['rows_ok']} texts loaded, "
        f"{report['rows_quarantined']} rows quarantined, {report['duplicates_identical']} identical duplicates skipped"
        + (f", {report['removed']} texts the source no longer holds marked removed" if report.get("removed") else ""),
        highlight=False,
    )
    if report["rows_quarantined"]:
        reasons = ", ".join(f"{k}: {v}" for k, v in report["reasons"].items())
        out.print(f"  quarantine: {report['quarantine']} ({reasons})", markup=False, highlight=False)
        with open(report["quarantine"], encoding="utf-8") as fh:
            for line in list(fh)[:5]:
                row = json.loads(line)
                folder = row.get("text_id") is not None and Path(row["source"]).is_dir()
                named = f" (file {row['text_id']})" if folder else ""  # a folder's row is one of its files
                err.print(f"  {row['source']}: row {row['row']}{named}: {row['reason']}", highlight=False, markup=False)
