"""How results look as tables: one value formatter for CLI tables, HTML reports and markdown
artifacts, markdown tables, and a run's summary rows read from the warehouse."""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

import duckdb

from rubricflow.warehouse import db

if TYPE_CHECKING:
    from rubricflow.tasks.stats.compare import Comparison


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
    if isinstance(value, float):  # NaN: undefined (say so); -0.0 reads as 0
        return "n/a" if value != value else format(value + 0.0, spec if abs(value) < 1e6 else ".4g")
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, float) for v in value):
        return f"[{format(value[0] + 0.0, spec)}, {format(value[1] + 0.0, spec)}]"
    return str(value)


_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]|~])")  # what makes emphasis, code, links, cells


def md_text(value) -> str:
    """A value as Markdown text that renders as written: HTML escaped (no `<img onerror>`), Markdown
    punctuation backslash-escaped (no link, no `javascript:` URL, no emphasis), on one line (else
    texts, rationales and ids would reach Prefect's artifacts as live Markdown and HTML)."""
    text = html.escape(str(value), quote=False).replace("\n", " ").replace("\r", " ")
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


def _cell(value) -> str:
    return md_text(show(value, ".4g")[:200])


def run_rows(
    con: duckdb.DuckDBPyConnection, run_id: str, with_scores: bool = True
) -> tuple[list[dict], list[dict], list[dict], list]:
    """A run's summary row, label distribution, criteria and text scores (for markdown and HTML)."""
    run = db.fetch(con, "run_report.sql", run=run_id)
    if not run:
        raise db.WarehouseError(f"no run {run_id!r} in this warehouse (see `rubricflow runs`)")
    scores = [r["score"] for r in db.fetch(con, "run_text_scores.sql", run=run_id)] if with_scores else []
    return run, db.fetch(con, "run_labels.sql", run=run_id), db.fetch(con, "run_criteria.sql", run=run_id), scores


CRITERION_FIGURES = (
    "n",
    "mean_delta",
    "mean_delta_ci",
    "exact_agreement",
    "within_one",
    "qwk",
    "pass_to_fail",
    "fail_to_pass",
    "mcnemar_p",
)


def criterion_rows(c: Comparison) -> list[dict]:
    """An A/B's per-criterion figures as the artifact and the HTML report show them."""
    return [
        {
            "criterion": r["criterion_id"] + (" (changed)" if r["changed"] else ""),
            **{k: r[k] for k in CRITERION_FIGURES},
        }
        for r in c.criteria
    ]
