"""`rubricflow estimate`: corpus figures corrected by human labels (prediction-powered inference)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from .common import WarehouseOpt, out, print_rows, reading, warehouse_path

if TYPE_CHECKING:
    from rubricflow.tasks.stats.estimate import Estimate
    from rubricflow.tasks.stats.ppi import Interval


def estimate(
    corpus: str = typer.Option(..., "--corpus", "-c"),
    rubric: str = typer.Option(..., "--rubric", "-r", help="The rubric (id, id@version or a hash prefix)."),
    human: str = typer.Option(..., "--human", help="The rater whose labels correct the judge's figures."),
    model: str | None = typer.Option(None, help="The judge model, when several scored the rubric."),
    judge_hash: str | None = typer.Option(None, help="The judge setup (a judge hash prefix), when several did."),
    rubric_b: str | None = typer.Option(None, help="A/B: side B's rubric (default: side A's)."),
    model_b: str | None = typer.Option(None, help="A/B: side B's judge model."),
    judge_hash_b: str | None = typer.Option(None, help="A/B: side B's judge setup (a judge hash prefix)."),
    confidence: float = typer.Option(0.9, help="The intervals' nominal coverage."),
    plan: str = typer.Option(
        "latest",
        help="The labelling plan whose inclusion probabilities weight the labels: latest (the newest for "
        "this rubric version, if any), a plan id, or none.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON (one record per figure)."),
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """Per criterion and overall: the judge-only figure, the labels-only figure with its interval, and
    the prediction-powered one (the judge's scores of every text corrected by the labels) with its
    interval, for the mean score and the pass rate, and the effective number of labels gained. With
    --rubric-b / --model-b / --judge-hash-b, side B's figures too, and which side agrees better with
    the labels: each side's error against them and A's less B's, paired, with its interval.
    The figures are kept in the warehouse's `estimates` table."""
    from rubricflow.tasks.stats.estimate import estimate as compute
    from rubricflow.tasks.stats.estimate import record
    from rubricflow.warehouse import db

    path = warehouse_path(warehouse)
    side_b = None
    if rubric_b or model_b or judge_hash_b:
        side_b = (rubric_b or rubric, model_b or model, judge_hash_b)
    with reading(path) as con:
        result = compute(con, corpus, human, (rubric, model, judge_hash), side_b, confidence, plan)
    with db.writer(path) as con:
        record(con, result)
    if as_json:
        print(json.dumps(result.as_records(), indent=2))
        for note in result.notes:  # the warnings too, beside the records (stdout stays JSON)
            print(f"note: {note}", file=sys.stderr)
        return
    print_estimate(result)


def print_estimate(result: Estimate) -> None:
    from rubricflow.tasks.presentation.tables import show

    def span(interval) -> str:
        return f"[{interval.low:.4f}, {interval.high:.4f}]" if interval else ""

    print_rows(
        f"{result.corpus}: judge figures corrected by {result.rater}'s labels "
        f"({result.confidence:.0%} intervals{', plan ' + result.plan_id if result.plan_id else ''})",
        [
            {
                "side": f.side,
                "criterion": f.criterion_id,
                "figure": f.figure,
                "labels": f.n_labels,
                "texts": f.n_texts,
                "judge only": show(f.judge_only, ".4f"),
                "labels only": show(f.labels_only.estimate, ".4f") if f.labels_only else "",
                "interval": span(f.labels_only),
                "powered": show(f.powered.estimate, ".4f"),
                "powered interval": span(f.powered),
                "labels gained": show(f.effective_labels - f.n_labels, ".1f") if f.effective_labels else "",
            }
            for f in result.figures
            if f.powered is not None
        ],
    )
    print_agreement(result, span)
    for note in result.notes:
        out.print(escape(f"note: {note}"))


def print_agreement(result: Estimate, span) -> None:
    """A/B: each side's error against the labels and A's less B's, paired, with which agrees better."""
    rows = [f for f in result.figures if f.powered is None]
    if not rows:
        return
    by = {(f.side, f.criterion_id, f.figure): f for f in rows}
    print_rows(
        f"which side agrees better with {result.rater}'s labels (error: mean |judge - label|; disagreement: "
        f"share of texts whose pass/fail differs; {result.confidence:.0%} intervals, paired)",
        [
            {
                "criterion": f.criterion_id,
                "figure": f.figure,
                "labels": f.n_labels,
                "A": _figure(by[("A", f.criterion_id, f.figure)].labels_only),
                "B": _figure(by[("B", f.criterion_id, f.figure)].labels_only),
                "A - B": _figure(f.labels_only),
                "interval": span(f.labels_only),
                "agrees better": f.better or "undecided (the interval holds 0)",
            }
            for f in rows
            if f.side == "A-B"
        ],
    )


def human_figures(result, human: str, warehouse: Path | None) -> None:
    """`estimate` of the two sides the comparison judged: each corrected by the rater's labels, and
    which agrees better with them (A's error less B's, paired); kept in `estimates` as there."""
    from rubricflow.tasks.stats.estimate import estimate, record
    from rubricflow.warehouse import db

    path = warehouse_path(warehouse)
    (rubric_a, judge_a, *_), (rubric_b, judge_b, *_) = result.a[0], result.b[0]
    with reading(path) as con:
        found = estimate(con, result.corpus, human, (rubric_a, None, judge_a), (rubric_b, None, judge_b), 0.9, "latest")
    with db.writer(path) as con:
        record(con, found)
    print_estimate(found)


def _figure(interval: Interval | None) -> str:
    """An interval's estimate to 4 places, or '-' where a side has none."""
    return "-" if interval is None else f"{interval.estimate:.4f}"
