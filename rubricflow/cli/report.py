"""`rubricflow report run | compare | calibration | pairwise | evolution`: self-contained HTML reports with plots."""

from __future__ import annotations

from pathlib import Path

import typer

from rubricflow.tasks.stats import compare_defaults

from .common import WarehouseOpt, reading, write_report

app = typer.Typer(help="Self-contained HTML reports with plots (no network needed to view them).", no_args_is_help=True)
ReportOut = typer.Option(..., "--out", "-o", help="HTML file to write.")


@app.command("run")
def report_run(run_id: str, output: Path = ReportOut, warehouse: Path | None = WarehouseOpt) -> None:
    """One run: its counts, score distribution, labels and per-criterion scores and consistency."""
    from rubricflow.tasks.presentation.report import run_report

    with reading(warehouse) as con:
        page = run_report(con, run_id)
    write_report(output, page)


@app.command("compare")
def report_compare(
    corpus: str = typer.Option(..., "--corpus", "-c"),
    a: str = typer.Option(..., "--a"),
    b: str | None = typer.Option(None, "--b"),
    model_a: str | None = typer.Option(None),
    model_b: str | None = typer.Option(None),
    allow_mixed: bool = typer.Option(False),
    top: int = typer.Option(compare_defaults.TOP),
    output: Path = ReportOut,
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """An A/B of landed judgments (see `rubricflow compare`): distributions, deltas with intervals,
    flip matrix, score scatter, rates and the texts that moved most."""
    from rubricflow.tasks.judging.config import JudgeConfig
    from rubricflow.tasks.presentation.report import comparison_report
    from rubricflow.tasks.stats.compare import compare as compare_sets
    from rubricflow.tasks.stats.compare import judgment_sets

    with reading(warehouse) as con:
        sides = [
            judgment_sets(con, corpus, ref, JudgeConfig(model=m).judge_hash() if m else None, allow_mixed, name)
            for ref, m, name in ((a, model_a, "A"), (b or a, model_b, "B"))
        ]
        result = compare_sets(con, corpus, sides[0], sides[1], top=top)
    write_report(output, comparison_report(result))


@app.command("calibration")
def report_calibration(
    corpus: str = typer.Option(..., "--corpus", "-c"),
    judge: str | None = typer.Option(None, help="A label rater (default: the corpus's own judgments)."),
    human: list[str] | None = typer.Option(None),
    rubric: str | None = typer.Option(None),
    model: str | None = typer.Option(None),
    step: float = typer.Option(1.0),
    output: Path = ReportOut,
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """Judge vs human agreement (see `rubricflow calibrate`): table, scatter plots, confusion matrices."""
    from rubricflow.tasks.presentation.report import calibration_report
    from rubricflow.tasks.stats.calibration import calibration

    with reading(warehouse) as con:
        result = calibration(con, corpus, judge, human, rubric, model, step)
    write_report(output, calibration_report(result))


@app.command("pairwise")
def report_pairwise(
    corpus: str = typer.Option(..., "--corpus", "-c"),
    rubric: str = typer.Option(..., "--rubric", "-r", help="The rubric as given to `pairwise`."),
    output: Path = ReportOut,
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """Pairwise judging (see `rubricflow pairwise`): bias and consistency per judge, win rates,
    rankings, and the pairs where orders or judges disagree with both rationales."""
    from rubricflow.rubrics.compiler import compile_or_raise
    from rubricflow.rubrics.library import Library, default_roots, resolve
    from rubricflow.rubrics.pairwise import pairwise_rubric
    from rubricflow.tasks.presentation.report import pairwise_html

    form = pairwise_rubric(resolve(rubric, Library(default_roots(None)) if not Path(rubric).is_file() else None))
    with reading(warehouse) as con:
        page = pairwise_html(con, corpus, compile_or_raise(form).hash, f"Pairwise: {form.metadata.id} on {corpus}")
    write_report(output, page)


@app.command("evolution")
def report_evolution(
    corpus: str | None = typer.Option(None, "--corpus", "-c", help="Its latest evolution."),
    evolution_id: str | None = typer.Option(None, "--id", help="An evolution id (as printed)."),
    output: Path = ReportOut,
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """An `improve evolve` history: validation agreement per round, accepted mutations, calls spent."""
    from rubricflow.tasks.presentation.report import evolution_report
    from rubricflow.warehouse import db

    from .common import fail

    with reading(warehouse) as con:
        if evolution_id is None:
            latest = db.fetch(con, "latest_evolution.sql", corpus=corpus) if corpus else []
            if not latest:
                fail(
                    f"no evolution of corpus {corpus!r}; run `rubricflow improve evolve` first"
                    if corpus
                    else "name an evolution: --id ID or --corpus CORPUS"
                )
            evolution_id = latest[0]["evolution_id"]
        if not db.fetch(con, "evolution_rounds.sql", evolution=evolution_id):
            fail(f"evolution {evolution_id!r} has no recorded rounds")
        page = evolution_report(con, evolution_id)
    write_report(output, page)
