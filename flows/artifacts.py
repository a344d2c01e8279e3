"""Markdown summaries that each flow run leaves as a Prefect artifact (what the UI shows per run)."""

from __future__ import annotations

import re

import duckdb
from prefect.artifacts import create_markdown_artifact

from warehouse import db


def md_table(rows: list[dict], columns: list[str] | None = None) -> str:
    if not rows:
        return "_(none)_\n"
    columns = columns or list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row.get(c)) for c in columns) + " |")
    return "\n".join(lines) + "\n"


def show(value, spec: str = ".3f") -> str:
    """One value as a table cell: numbers rounded by `spec`, (low, high) intervals as [low, high]."""
    if value is None:
        return ""
    if isinstance(value, float):
        return "nan" if value != value else format(value, spec if abs(value) < 1e6 else ".4g")
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, float) for v in value):
        return f"[{format(value[0], spec)}, {format(value[1], spec)}]"
    return str(value)


def _cell(value) -> str:
    return show(value, ".4g").replace("|", "\\|").replace("\n", " ")[:200]


def artifact_key(*parts: str) -> str:
    """Prefect keys allow lowercase letters, digits and dashes only."""
    return re.sub(r"[^a-z0-9-]+", "-", "-".join(parts).lower()).strip("-")[:100]


def publish(markdown: str, key: str, description: str) -> None:
    create_markdown_artifact(markdown=markdown, key=key, description=description)


def run_rows(con: duckdb.DuckDBPyConnection, run_id: str, with_scores: bool = True) -> tuple[list[dict], list[dict], list[dict], list]:
    """A run's summary row, label distribution, criteria and text scores (for markdown and HTML)."""
    run = db.fetch(con, "run_report.sql", run=run_id)
    if not run:
        raise db.WarehouseError(f"no run {run_id!r} in this warehouse (see `rubricflow runs`)")
    scores = [r["score"] for r in db.fetch(con, "run_text_scores.sql", run=run_id)] if with_scores else []
    return run, db.fetch(con, "run_labels.sql", run=run_id), db.fetch(con, "run_criteria.sql", run=run_id), scores


def run_markdown(con: duckdb.DuckDBPyConnection, run_id: str) -> str:
    run, labels, criteria, _ = run_rows(con, run_id, with_scores=False)
    r = run[0]
    return (f"# Run {run_id}\n\nrubric **{r['rubric']}** ({r['rubric_hash'][:12]}), model `{r['model']}`, "
            f"corpus `{r['corpus_id']}`, status **{r['status']}**\n\n"
            + md_table(run, ["planned_cells", "skipped_cells", "landed_cells", "ok_cells", "failed_cells", "errors",
                             "calls", "retries", "prompt_tokens", "completion_tokens", "coverage", "wall_s"])
            + "\n## Labels\n\n" + md_table(labels) + "\n## Criteria\n\n" + md_table(criteria))
