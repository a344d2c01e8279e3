"""`rubricflow improve ...`: make a rubric agree better with human labels (fit, evolve)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from .common import WarehouseOpt, fail, out, print_rows, warehouse_path
from .improve_evolve import evolve as evolve_command
from .improve_evolve import parse_target as _target

if TYPE_CHECKING:
    from rubricflow.rubrics.model import Rubric
    from rubricflow.tasks.stats.fit import FitData, FitReport

app = typer.Typer(
    help="Make a rubric agree better with human labels: fit its weights and cut-offs, or evolve it.",
    no_args_is_help=True,
)


@app.command()
def fit(
    corpus: str = typer.Option(..., "--corpus", "-c"),
    rubric: str = typer.Option(..., "--rubric", "-r", help="The rubric to fit (a file or a library name)."),
    labels: str = typer.Option(
        "human:overall",
        help="What to fit to: RATER[,RATER...][:CRITERION], the mean of "
        "these raters' labels on this criterion (default human:overall).",
    ),
    from_rater: str | None = typer.Option(
        None,
        help="Fit another rater's labels of the rubric's criteria "
        "(another judge's scores) instead of this warehouse's judgments.",
    ),
    model: str | None = typer.Option(None, help="The judge model whose judgments to fit."),
    judge_hash: str | None = typer.Option(None, help="The judge setup whose judgments to fit (a hash prefix)."),
    folds: int = typer.Option(5, help="Cross-validation folds (texts shuffled with --seed)."),
    seed: int = typer.Option(0),
    pass_at: float | None = typer.Option(
        None, help="Also fit the pass threshold: a text passes for the humans when their score is at least this."
    ),
    label_at: str | None = typer.Option(
        None,
        help="Also fit the labels' cut-offs: the human scores that "
        "separate the rubric's labels, lowest first, comma-separated.",
    ),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Where to write the fitted rubric (default: ID@VERSION.yaml here)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """Fit criterion weights (and with --pass-at / --label-at the pass threshold and label
    cut-offs) to human labels from scores already in the warehouse: no judge call. Prints the
    cross-validated held-out agreement of equal, the rubric's and the fitted weights, and writes
    the next version with its provenance."""
    from rubricflow.rubrics.algebra import diff
    from rubricflow.rubrics.compiler import compile_or_raise
    from rubricflow.rubrics.formats import dump_yaml
    from rubricflow.rubrics.library import resolve
    from rubricflow.tasks.stats import fit as fitting
    from rubricflow.tasks.stats.calibration import one_judge_setup
    from rubricflow.warehouse import db

    bundle = compile_or_raise(resolve(rubric))
    cuts = [float(x) for x in label_at.split(",")] if label_at else None
    fitting.check_fittable(bundle.rubric, cuts)
    raters, criterion = _target(labels)
    path = warehouse_path(warehouse)
    if not path.exists():
        fail(f"no warehouse at {path}; import labels and score the corpus first")
    with db.writer(path) as con:  # writes nothing; brings an older warehouse's views up to date
        judge = None if from_rater else one_judge_setup(con, corpus, bundle.hash, model, judge_hash)[1]
        data = fitting.load(con, corpus, bundle, raters, criterion, judge, from_rater)
    report = fitting.cross_validate(data, bundle.rubric, folds, seed, pass_at, cuts)
    target = f"{','.join(raters)}:{criterion}"
    provenance = fitting.provenance(bundle, corpus, data, report, target, f"{folds}-fold by text, seed {seed}")
    new = fitting.fitted_rubric(bundle.rubric, report, provenance)
    compile_or_raise(new)
    written = output or Path(f"{new.metadata.id}@{new.metadata.version}.yaml")
    written.write_text(dump_yaml(new), encoding="utf-8")
    if as_json:
        print(json.dumps(_fit_figures(report, data, folds, seed, written), indent=2))
        return
    out.print(
        escape(
            f"fit {bundle.id}@{bundle.version} on corpus {corpus}: {report.texts} texts ({data.source} -> "
            f"{target}; {data.left_out} left out, not every criterion scored), "
            f"{folds}-fold by text, seed {seed}; 0 judge calls; weights moved {report.fitted.shrinkage:.0%} of the way "
            "from the rubric's own to the least-squares fit"
        )
    )
    _print_fit(report, bundle.rubric, folds)
    for change in diff(bundle.rubric, new):
        out.print(escape(f"  {change}"))
    out.print(escape(f"wrote {written} ({new.metadata.id}@{new.metadata.version})"))


def _fit_figures(report: FitReport, data: FitData, folds: int, seed: int, written: Path) -> dict[str, Any]:
    """What `fit --json` prints."""
    return {
        "texts": report.texts,
        "left_out": data.left_out,
        "folds": folds,
        "seed": seed,
        "held_out": report.held_out,
        "weights": report.fitted.weights,
        "shrinkage": report.fitted.shrinkage,
        "pass_threshold": report.fitted.pass_threshold,
        "label_mins": report.fitted.label_mins,
        "output": str(written),
        "judge_calls": 0,
    }


def _print_fit(report: FitReport, rubric: Rubric, folds: int) -> None:
    print_rows(
        f"held out (mean over {folds} folds)",
        [
            {"weights": side, **{m: v for m, v in report.held_out[side].items()}}
            for side in ("equal", "rubric", "fitted")
        ],
    )
    print_rows(
        "weights",
        [{"criterion": c.id, "before": c.weight, "fitted": report.fitted.weights[c.id]} for c in rubric.criteria],
    )


app.command("evolve")(evolve_command)
