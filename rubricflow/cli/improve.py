"""`rubricflow improve ...`: make a rubric agree better with human labels (fit, evolve)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from .common import WarehouseOpt, fail, out, print_rows, warehouse_path

if TYPE_CHECKING:
    from rubricflow.rubrics.model import Rubric
    from rubricflow.tasks.stats.fit import FitData, FitReport

app = typer.Typer(
    help="Make a rubric agree better with human labels: fit its weights and cut-offs, or evolve it.",
    no_args_is_help=True,
)


def _target(labels: str) -> tuple[list[str], str]:
    raters, _, criterion = labels.partition(":")
    return [r for r in raters.split(",") if r], criterion or "overall"


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


@app.command()
def evolve(
    corpus: str = typer.Option(..., "--corpus", "-c"),
    rubric: str = typer.Option(..., "--rubric", "-r", help="The starting rubric (a file or a library name)."),
    labels: str = typer.Option("human:overall", help="What to agree with: RATER[,RATER...][:CRITERION]."),
    base_url: str | None = typer.Option(None, help="The judge's endpoint (default: $OPENAI_BASE_URL)."),
    model: str | None = typer.Option(None, help="The judge model."),
    max_in_flight: int | None = typer.Option(None, min=1, help="Judge calls in flight at once (default 64)."),
    reflect_base_url: str | None = typer.Option(None, help="The reflection model's endpoint (default: the judge's)."),
    reflect_model: str | None = typer.Option(None, help="The reflection model (default: the judge model)."),
    shard_size: int = typer.Option(2000, min=1, help="Cells per shard: what a killed run loses at most."),
    max_rounds: int = typer.Option(3, min=1),
    max_calls: int | None = typer.Option(
        None, min=1, help="Stop before a round once the judge calls spent reach this."
    ),
    seed: int = typer.Option(0, help="Of the train / validation / test split by text."),
    validation: float = typer.Option(
        0.2, min=0.05, max=0.45, help="Share of the labelled texts that rounds are accepted on."
    ),
    test: float = typer.Option(
        0.2, min=0.05, max=0.45, help="Share of the labelled texts read once, for the final version."
    ),
    output_dir: Path | None = typer.Option(
        None, help="Where candidates and the best version go (default: evolve-RUBRIC-ID)."
    ),
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """Rounds of: find the criterion that agrees least with the humans (training texts), ask a
    reflection model for mutations, judge the candidate (only its changed criteria cost calls),
    keep it if the agreement (Pearson r) on the validation texts improves; the test texts are read
    once, for the final version. Every round is recorded in the warehouse (`evolution_rounds`); the
    same command again resumes an interrupted evolution."""
    from rubricflow.rubrics.library import resolve

    from .common import judge_settings, start_flows
    from .progress import scoring_progress

    raters, criterion = _target(labels)
    judge = judge_settings(model, base_url, need_endpoint=True, max_in_flight=max_in_flight)
    reflection = judge_settings(reflect_model, reflect_base_url)
    folder = output_dir or Path(f"evolve-{resolve(rubric).metadata.id}")
    start_flows()
    from rubricflow.flows.evolve import evolve_flow

    with scoring_progress():
        result = evolve_flow(
            corpus,
            rubric,
            str(warehouse_path(warehouse)),
            raters,
            criterion,
            judge,
            reflection,
            max_rounds,
            max_calls,
            seed,
            validation,
            test,
            str(folder),
            shard_size,
        )
    rows = _round_rows(result["rounds"])
    print_rows(
        f"evolution {result['evolution_id']} of {rubric} on {corpus}: {result['training_texts']} training, "
        f"{result['validation_texts']} validation, {result['test_texts']} test texts",
        rows,
    )
    print_rows(
        "agreement with the humans (Pearson r): rounds were accepted on validation; test was read once, now",
        [
            {"version": "start", "validation": result["validation_start"], "test": result["test_start"]},
            {"version": "best", "validation": result["validation_best"], "test": result["test_best"]},
        ],
    )
    refused = sum(r["status"] == "refused" for r in result["rounds"])
    out.print(
        escape(
            f"{result['calls']} judge calls in {len(rows)} rounds, {result['calls_this_run']} of them in this run "
            f"(rounds recorded earlier are replayed); {refused} reflection answers refused; the starting "
            f"version cost {result['first_run_calls']} calls now; best version: {result['best_file']}"
        )
    )


def _round_rows(rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per round; `bound` is what re-judging only the changed criteria should cost."""
    rows = []
    for r in rounds:
        bound = (
            (r["changed_criteria"] / r["total_criteria"] * r["full_rescore_calls"]) if r.get("total_criteria") else None
        )
        rows.append(
            {
                "round": r["round"],
                "criterion": r["criterion"],
                "status": r["status"],
                "validation r before": r["metric_before"],
                "after": r["metric_after"],
                "judge calls": r["calls"],
                "bound": bound,
                "full re-score": r["full_rescore_calls"],
                "mutations": ", ".join(m["op"] for m in json.loads(r["mutations"] or "[]")) or r["reason"],
            }
        )
    return rows
