"""The scoring flow's Prefect tasks: prepare a run (recover, register, plan, estimate), judge one
shard, load one landed shard, finish the run. Every warehouse write happens in the flow's own
process, in these short steps; a shard task writes only Parquet."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from rubricflow.errors import InputError
from rubricflow.rubrics.compiler import Bundle
from rubricflow.rubrics.render import render
from rubricflow.tasks.judging import layout_plan
from rubricflow.tasks.judging.costs import Estimate, PriceError, estimate_cost, price_of, price_table
from rubricflow.tasks.judging.judge import Outcome
from rubricflow.tasks.judging.run import Run
from rubricflow.tasks.judging.shard import ShardResult, run_shard
from rubricflow.tasks.presentation.tables import run_rows
from rubricflow.tasks.runtime.progress import notify
from rubricflow.tasks.stats.compare import refresh_stored
from rubricflow.warehouse import checks, db, steps
from rubricflow.warehouse.locks import runs_root
from rubricflow.warehouse.run_folder import RunFolder


@task(name="prepare-run", cache_policy=NO_CACHE)
def prepare_run(run: Run) -> tuple[steps.Plan, int, Estimate]:
    """Load what earlier runs landed, register the rubric, plan the cells still missing into the
    run's folder, estimate their cost and record the run as running."""
    path, config, bundle, corpus_id = Path(run.warehouse), run.judge, run.bundle, run.corpus_id
    if config.budget_usd is not None and price_of(config.model, price_table(config.prices)) is None:
        raise PriceError(
            f"--budget needs a price for model {config.model!r}, and neither genai-prices nor "
            "--prices / $RUBRICFLOW_PRICES has one: add it (USD per 1M tokens: {model: {input: ..., "
            "output: ...}}) or run without --budget"
        )
    with db.writer(path) as con:
        if not steps.corpus_exists(con, corpus_id):
            raise InputError(f"no corpus {corpus_id!r} in {path}; run `rubricflow ingest` first")
        if run.texts is None and not steps.live_texts(con, corpus_id):  # a run that scores nothing fails
            raise InputError(
                f"corpus {corpus_id!r} has no live texts (every row quarantined, or every text removed): "
                "nothing to score; see `rubricflow ingest`"
            )
        check_required_inputs(con, corpus_id, bundle, run.texts)
        steps.close_stale_runs(con, path)
        recovered = steps.load_pending(con, runs_root(path))
        recovered += steps.load_legacy(con, path.parent / "runs")
        db.register_rubric(con, bundle, run.rubric)
        steps.count_pattern_hits(con, corpus_id, bundle)
        checks.evaluate_checks(con, corpus_id, bundle, run.run_id, run.judge_hash)  # decided in SQL, no judge call
        try:
            return _plan_and_start(con, run, recovered)
        except BaseException:  # a run that fails in preparation (a full disk) leaves no copy of the texts
            run.folder.drop_plan()
            run.folder.remove_if_empty()
            raise


def _plan_and_start(con, run: Run, recovered: int) -> tuple[steps.Plan, int, Estimate]:
    """Plan the missing cells into the run's plan files and write the run's row."""
    config, bundle, corpus_id = run.judge, run.bundle, run.corpus_id
    texts = list(run.texts) if run.texts is not None else None
    rendering = render(bundle.rubric, config.strategy)
    units = [u.system for u in rendering.of_genre(None)]
    choice = _choose_layout(con, run, texts, units, rendering.shared)
    plan = steps.plan_cells(
        con,
        corpus_id,
        bundle,
        run.judge_hash,
        config.strategy,
        config.samples,
        run.folder.plan,
        run.options.model_dump() | {"layout": choice.layout},
        run.run_id,
        texts,
    )
    plan.layout = choice.layout  # the judges send it (flows/score.py puts it in the run's options)
    run.folder.keep_room()  # room for what a full disk would otherwise lose
    price = price_of(config.model, price_table(config.prices))
    seen = steps.mean_completion_tokens(con, bundle.hash, run.judge_hash)
    estimate = estimate_cost(bundle.rubric, config.strategy, plan.cells, plan.text_chars, seen, price)
    with db.transaction(con):
        steps.start_run(
            con,
            run=run.run_id,
            corpus=corpus_id,
            rubric=bundle.hash,
            judge=run.judge_hash,
            model=config.model,
            strategy=config.strategy,
            samples=config.samples,
            parameters=json.dumps(run.parameters()),
            planned=plan.total,
            skipped=plan.skipped,
            estimated_usd=estimate.usd,
            budget_usd=config.budget_usd,
            layout=choice.layout,
            layout_reason=choice.reason,
            minimum_prompt_tokens=layout_plan.minimum_tokens(
                layout_plan.Shape.of(plan.texts, plan.texts_chars, units, rendering.shared)
            ),
        )
        if price is not None:
            steps.record_price(con, price)
    return plan, recovered, estimate


def _choose_layout(con, run: Run, texts: list[str] | None, units: list[str], shared: frozenset[str]):
    """The run's cache layout (layout_plan.py), from the corpus's texts and the rubric's units."""
    minimum = layout_plan.cache_minimum(run.judge.provider, run.judge.resolved_base_url())
    shape = layout_plan.Shape.of(*steps.layout_shape(con, run.corpus_id, texts), units, shared)
    return layout_plan.choose(shape, run.options.layout, minimum)


def check_required_inputs(con, corpus_id: str, bundle: Bundle, texts: Sequence[str] | None = None) -> None:
    """A rubric's `required: true` input or context must be there for every text it judges (`texts`,
    or the whole corpus): judged without it, the verdict means nothing. Refused before any call,
    naming the texts."""
    for needed in bundle.rubric.inputs:
        if not needed.required or needed.name not in ("input", "context"):
            continue
        found = db.fetch(
            con,
            "missing_inputs.sql",
            corpus=corpus_id,
            column=needed.name,
            texts=None if texts is None else list(texts),
        )
        missing = [r["text_id"] for r in found]
        if missing:
            shown = ", ".join(repr(t) for t in missing[:5]) + (" and more" if len(missing) > 5 else "")
            raise InputError(
                f"rubric {bundle.id} requires each text's {needed.name}, and corpus {corpus_id!r} has texts "
                f"without one: {shown}; ingest it with --{needed.name}-field (or {needed.name}=) naming the column"
            )


def cell_done(outcome: Outcome) -> None:
    notify("cell", outcome.completion)


@task(name="judge-shard", cache_policy=NO_CACHE)
def judge_shard(plan_file: Path, run: Run) -> ShardResult:
    return run_shard(plan_file, run, cell_done)


@task(name="load-shard", cache_policy=NO_CACHE)
def load_shard(run: Run, completions_files: list[str]) -> int:
    """Load a shard's landed parts (each in one transaction, then removed). The analytics follow
    at most every LOAD_REFRESH_LAG_S (the run's end catches up)."""
    with db.writer(run.warehouse, refresh_lag_s=steps.LOAD_REFRESH_LAG_S) as con:
        return sum(steps.load_landed(con, Path(f)) for f in completions_files)


@task(name="finish-run", cache_policy=NO_CACHE)
def finish_run(run: Run, status: str, message: str | None) -> None:
    """Record how the run ended and clear its folder (and any other finished run's)."""
    with db.writer(run.warehouse) as con:
        steps.finish_run(con, run.run_id, status, message)
        refresh_stored(con, run.run_id)
    runs = run.folder.runs
    RunFolder.prune(runs, live={f.run_id for f in RunFolder.all(runs)} - {run.run_id})


def finish_interrupted(run: Run, message: str) -> None:
    """An interrupt during the run's finish step: `interrupted`, unless the step had recorded its end
    already. Left `running`, a later run recorded that its process had ended, which it had not."""
    with db.writer(run.warehouse) as con:
        steps.finish_unfinished_run(con, run.run_id, "interrupted", message)


@task(name="run-report", cache_policy=NO_CACHE)
def run_report(run: Run) -> tuple[list[dict], list[dict], list[dict]]:
    """The finished run's summary row, label distribution and criteria (for its artifacts and event)."""
    with db.reader(run.warehouse) as con:
        summary, labels, criteria, _ = run_rows(con, run.run_id, with_scores=False)
    return summary, labels, criteria


@task(name="run-refusals", cache_policy=NO_CACHE)
def run_refusals(run: Run) -> dict:
    """How many of the run's cells the endpoint never answered usably, or failed for a setup reason."""
    with db.reader(run.warehouse) as con:
        return db.fetch(con, "run_refusals.sql", run=run.run_id)[0]


@task(name="pending-batches", cache_policy=NO_CACHE)
def pending_batches(run: Run, status: str = "submitted") -> list[str]:
    """Batches of this run's rubric and judge that earlier runs left unfinished (see steps.pending_batches)."""
    with db.reader(run.warehouse) as con:
        return steps.pending_batches(con, run.corpus_id, run.bundle.hash, run.judge_hash, status)
