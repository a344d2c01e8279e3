"""`rubricflow score`: judge a corpus with rubrics through the scoring flow, then print the run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from rubricflow.errors import CheckFailed, InputError

from .common import (
    WarehouseOpt,
    judge_settings,
    out,
    print_query,
    print_rows,
    reading,
    warehouse_path,
)
from .flow_start import start_flows
from .judge_options import judge_options, run_options, run_settings, typed

if TYPE_CHECKING:
    from rubricflow.tasks.judging.run_options import RunOptions


@judge_options()
@run_options()
def score(
    corpus: str = typer.Option(..., "--corpus", "-c", help="Corpus id (see `rubricflow ingest`)."),
    rubric: list[str] = typer.Option(..., "--rubric", "-r", help="Rubric file or library name (repeatable)."),
    model: list[str] | None = typer.Option(
        None,
        help="Judge model (repeatable: a panel of judges, each a judge "
        "setup of its own; default: the offline stand-in).",
    ),
    base_url: str | None = typer.Option(
        None,
        help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL). The key is read from its provider's usual variable (GROQ_API_KEY for api.groq.com, ...), else OPENAI_API_KEY.",
    ),
    workers: int = typer.Option(0, help="Spread shards over this many local Dask worker processes (>= 2)."),
    warehouse: Path | None = WarehouseOpt,
    cascade: str | None = typer.Option(
        None,
        help="cheap=MODEL,strong=MODEL: the cheap judge answers every text, the strong one only where the cheap "
        "one's confidence (token logprobs) is below a threshold chosen on a calibration sample (docs/operations.md).",
    ),
    agreement: float = typer.Option(0.9, help="--cascade: the rate kept texts must agree with the strong judge at."),
    delta: float = typer.Option(0.1, help="--cascade: the chance the agreement guarantee may fail."),
    calibration: int = typer.Option(200, help="--cascade: texts both judges answer to choose the threshold."),
    human_below: float | None = typer.Option(
        None,
        help="--cascade: a human level above the strong judge: texts it decides with a confidence below this "
        "go to the labelling queue, and their labels decide them (docs/operations.md).",
    ),
    route: str | None = typer.Option(
        None,
        help="Route each text to one rubric by this field (genre, or metadata.KEY): give the rubrics as "
        "-r VALUE=RUBRIC, and one plain -r RUBRIC for any other value (a coproduct; docs/rubrics.md).",
    ),
    judge: dict | None = None,
    options: dict | None = None,
) -> None:
    """Judge a corpus with one or more rubrics; landed cells are reused (re-running costs nothing).
    The cost estimate is printed before any call. With --cascade, a cheap judge answers every text
    and a strong judge only those the cheap one is unsure of, with an agreement guarantee; with
    --human-below, a human label decides the texts the strong judge is itself unsure of (they head
    the labelling queue)."""
    if cascade and model:
        raise InputError("--cascade names both judges' models: drop --model")
    judges = [
        judge_settings(one, base_url, need_endpoint=True, **(judge or {}))
        for one in (model or [None])  # type: ignore[list-item]  # None: the default model
    ]
    run = run_settings(options)
    failures: list[str | None] = []
    if route and (cascade or len(judges) > 1):
        raise InputError("--route scores with one judge: drop --cascade / the extra --model")
    if route:  # one rubric per text, chosen by its field: each rubric judges its own texts
        from rubricflow.flows.routing import check_selector, parse_choices, score_routed

        check_selector(route)  # both refused before the flows start
        parse_choices(rubric)
        start_flows()
        routed = score_routed(warehouse_path(warehouse), corpus, rubric, route, typed(judges[0]), run, workers)
        failures += [print_run(warehouse_path(warehouse), summary["run_id"]) for summary in routed]
        rubric = []
    check_rubrics(rubric)  # every -r before the first call: a bad second rubric must not leave the first bought
    for ref in rubric:
        if cascade:
            from .cascade import run_cascade

            levels = {"agreement": agreement, "delta": delta, "calibration": calibration, "human_below": human_below}
            run_cascade(corpus, ref, warehouse_path(warehouse), judges[0], cascade, levels)
            continue
        if len(judges) == 1:
            summaries = [run_score(corpus, ref, warehouse_path(warehouse), judges[0], run, workers)]
        else:
            summaries = run_panel(corpus, ref, warehouse_path(warehouse), judges, run)
        for summary in summaries:
            failures.append(print_run(warehouse_path(warehouse), summary["run_id"]))
            if summary.get("deferred_cells"):
                out.print(f"{summary['deferred_cells']} cells left for the next run (--max-cells): run again for them")
    if len(judges) > 1:
        out.print(
            f"a panel of {len(judges)} judges: `rubricflow panel -c {escape(corpus)} -r RUBRIC` for their agreement"
        )
    if any(failures):
        raise ScoredNothing("; ".join(f for f in failures if f))


def check_rubrics(refs: list[str]) -> None:
    """Resolve and compile every rubric as a run will (a one-line error, exit 2, naming the bad one)
    before any is scored: a typo in the last -r must not come after the first rubric's calls are bought."""
    from rubricflow.rubrics.compiler import compile_for_scoring
    from rubricflow.rubrics.library import resolve

    for ref in refs:
        compile_for_scoring(resolve(ref), source=ref)


def run_score(
    corpus: str,
    rubric: str,
    warehouse: Path,
    judge: dict,
    options: RunOptions | None = None,
    workers: int = 0,
) -> dict:
    """Run the scoring flow (the same path as `Warehouse.score`) with a live progress bar: calls/s,
    tokens, errors, ETA. `judge`: JudgeConfig fields as `judge_settings` checked them."""
    from rubricflow.api_warehouse import run_score as score_flow

    from .progress import scoring_progress

    with scoring_progress():
        return score_flow(warehouse, corpus, rubric, typed(judge), options or run_settings(None), workers)


def run_panel(
    corpus: str,
    rubric: str,
    warehouse: Path,
    judges: list[dict],
    options: RunOptions | None = None,
) -> list[dict]:
    """Several judges as one flow run (flows/panel.py), with the live progress bar."""
    start_flows()
    from rubricflow.flows.panel import panel_flow

    from .progress import scoring_progress

    with scoring_progress():
        return panel_flow(corpus, rubric, str(warehouse), [typed(j) for j in judges], options or run_settings(None))


class ScoredNothing(CheckFailed):
    """A run completed but scored nothing: no cell of its own ok, or none of the corpus (exit 1)."""


def scored_nothing(run: dict) -> str | None:
    """Why a completed run still fails: it judged cells and none came back ok (every answer cut off,
    refused, unusable), or its corpus has no score at all (coverage 0%: nothing judged or adopted)."""
    if run["status"] == "waiting":  # its cells are in a submitted batch: the next run collects them
        return None
    if run["landed_cells"] and not run["ok_cells"]:
        return f"run {run['run_id']}: none of its {run['landed_cells']} judged cells is ok ({run['errors'] or 'no reason'})"
    if run["planned_cells"] and not run["coverage"]:
        return f"run {run['run_id']}: coverage 0% of {run['planned_cells']} cells: nothing of the corpus is scored"
    return None


def print_run(warehouse: Path, run_id: str) -> str | None:
    """A run's counts, then its labels, criteria, disqualifiers and pattern hits; returns why the
    run scored nothing, if it did (see `scored_nothing`)."""

    from rubricflow.warehouse import db

    with reading(warehouse) as con:
        run = db.fetch(con, "run_report.sql", run=run_id)[0]
        out.print(
            f"\n[bold]run {run_id}[/]  rubric {escape(run['rubric'])} ({run['rubric_hash'][:12]})  "
            f"model {escape(run['model'])}  status {run['status']}"
        )
        adopted = (
            f" ({run['adopted_cells']} copied: the same question answered for another rubric version or corpus)"
            if run["adopted_cells"]
            else ""
        )
        out.print(
            f"cells: {run['planned_cells']} planned, {run['skipped_cells']} reused from earlier runs{adopted}, "
            f"{run['landed_cells']} judged now ({run['ok_cells']} ok, {run['failed_cells']} failed"
            f"{'; ' + run['errors'] if run['errors'] else ''}); calls {run['calls']} (retries {run['retries']}); "
            f"tokens {run['prompt_tokens'] + run['completion_tokens']:,}; coverage {run['coverage'] or 0:.0%}",
            markup=False,
            highlight=False,
        )
        print_query(con, "labels", "run_labels.sql", run=run_id)
        criteria = db.fetch(con, "run_criteria.sql", run=run_id)
        if all(r["flip_rate"] is None for r in criteria):  # one sample per cell: no consistency to show
            criteria = [{k: v for k, v in r.items() if k not in ("sample_stddev", "flip_rate")} for r in criteria]
        print_rows("criteria", criteria)
        print_query(con, "disqualifiers", "run_disqualifiers.sql", run=run_id)
        print_query(con, "top pattern hits", "run_patterns.sql", run=run_id)
    return scored_nothing(run)
