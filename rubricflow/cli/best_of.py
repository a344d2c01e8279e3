"""`rubricflow best-of`: judge every candidate set of a corpus by a rubric's best-of-n form, one
call per set (every candidate scored, and the winner named, in the same answer)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from rubricflow.errors import InputError

from .common import WarehouseOpt, judge_settings, out, print_rows, warehouse_path
from .judge_options import judge_options, run_options, run_settings


@judge_options()
@run_options(exclude=("skip_disqualified",))
def best_of(
    corpus: str = typer.Option(..., "--corpus", "-c", help="A candidate-set corpus (rows with `candidates`)."),
    rubric: str = typer.Option(..., "--rubric", "-r", help="Rubric file or library name."),
    model: str | None = typer.Option(None, help="Judge model."),
    base_url: str | None = typer.Option(None, help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)."),
    warehouse: Path | None = WarehouseOpt,
    judge: dict | None = None,
    options: dict | None = None,
) -> None:
    """Which of n responses is best: each candidate set (a row with `prompt` and a list of
    `candidates`, optionally `systems` and the human's pick as `label`, 1-based) is judged in ONE
    call by the rubric's best-of form: a 1-5 judgment per candidate (`response-1` ... `response-n`)
    and the `winner`. An OpenAI Evals best-of-n grader (`choice_strings: from_n`) is such a rubric.
    Per candidate, the `best_of_candidates` view; prints each judge's agreement with the labels
    and how often the response shown first won."""
    from rubricflow.rubrics.library import Library, default_roots, resolve
    from rubricflow.tasks.pipeline.best_of import best_of_form, set_size
    from rubricflow.warehouse import db

    from .score import run_score

    path = warehouse_path(warehouse)
    if (judge or {}).get("strategy") not in (None, "holistic"):
        raise InputError("--strategy: best-of judges each set in one call (holistic); other strategies split it")
    settings = judge_settings(model, base_url, need_endpoint=True, **{**(judge or {}), "strategy": "holistic"})
    source = resolve(rubric, Library(default_roots(None)) if not Path(rubric).is_file() else None)
    target, bundle = best_of_form(source, rubric, path, set_size(path, corpus))
    run_score(corpus, str(target), path, settings, run_settings(options))
    with db.reader(path) as con:
        rows = db.fetch(con, "best_of_report.sql", corpus=corpus, rubric=bundle.hash)
    print_rows(f"best of n on {corpus}: one call per set", rows)
    if not rows:
        out.print(escape(f"no candidate sets judged on corpus {corpus}"))
