"""The scoring flow: plan the cells a run still needs, judge them shard by shard, land and load.

Only this flow's process writes the warehouse, in short steps (prepare, load each shard,
finish). Shards write Parquet. Killing the flow at any moment and running it again finishes the
work: landed shards are loaded first, then the anti-join plans only the cells still missing.
"""

# No `from __future__ import annotations` here: a deployment's run builds the flow's parameter model
# from the annotations, and there a string `JudgeConfig` cannot be resolved (every night failed).
import asyncio
import dataclasses
import datetime as dt
import secrets
from dataclasses import replace
from pathlib import Path

from prefect import flow, get_run_logger

from rubricflow.errors import EndpointRefused, InputError
from rubricflow.flows.artifacts import announce_completed, artifact_key, publish, publish_run_table, run_markdown
from rubricflow.flows.deploy_params import refuse_unset
from rubricflow.flows.progress_artifact import run_progress
from rubricflow.flows.scoped import score_scoped
from rubricflow.rubrics.compiler import compile_for_scoring
from rubricflow.rubrics.library import resolve
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.costs import Estimate, answer_overrun
from rubricflow.tasks.judging.failures import refusal_message
from rubricflow.tasks.judging.run import Run, RunSummary
from rubricflow.tasks.judging.run_options import RunOptions
from rubricflow.tasks.judging.secrets import scrub
from rubricflow.tasks.judging.shard import ShardResult, Worker, abandon_shards, begin_shard, end_run
from rubricflow.tasks.judging.telemetry import run_span
from rubricflow.tasks.pipeline.batch import collect_batch, resolve_uploads, submit_batches
from rubricflow.tasks.pipeline.cluster import judge_on_cluster
from rubricflow.tasks.pipeline.score import (
    cell_done,
    finish_interrupted,
    finish_run,
    judge_shard,
    load_shard,
    pending_batches,
    prepare_run,
    run_refusals,
    run_report,
)
from rubricflow.tasks.runtime.dask_access import cluster_security
from rubricflow.tasks.runtime.progress import notify
from rubricflow.warehouse import steps
from rubricflow.warehouse.locks import run_lock

INTERRUPTED = "interrupted (Ctrl-C or a kernel interrupt): what landed is kept, the next run judges the rest"


def new_run_id() -> str:
    return dt.datetime.now(dt.UTC).strftime("r%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def scoring_flow(workers: int = 0):
    """The scoring flow, with shards spread over a local Dask cluster of `workers` processes when
    workers >= 2 (the flow's own process still does every warehouse write)."""
    if workers < 2:
        return score_corpus
    from distributed.security import Security
    from prefect_dask import DaskTaskRunner

    # TLS with a certificate made for this cluster only: other users of this machine reach its
    # loopback ports, but cannot run code on its workers (tasks/runtime/dask_access)
    kwargs = {"n_workers": workers, "threads_per_worker": 1, "processes": True, "dashboard_address": None}
    return score_corpus.with_options(
        task_runner=DaskTaskRunner(  # type: ignore[arg-type]  # prefect-dask's runner is a TaskRunner
            cluster_kwargs={**kwargs, "security": Security.temporary(), "protocol": "tls://"}
        )
    )


@flow(name="score-corpus", log_prints=True)
def score_corpus(
    corpus_id: str,
    rubric: str,
    warehouse_path: str,
    judge: JudgeConfig = JudgeConfig(),
    options: RunOptions = RunOptions(),
    run_id: str | None = None,
    workers: int = 0,
    texts: list[str] | None = None,
) -> dict:
    """Score one corpus with one rubric (a file or a library name). `judge` (which judge to ask)
    and `options` (the run-wide settings) are typed parameters, validated once by Prefect (a dict
    of their fields is validated into them); the API key is never a parameter (it comes from the
    provider's key variable). With workers >= 2 (see `scoring_flow`) shards run in parallel
    processes that share the rate limits and budget; with the judge's `cluster` (or
    $RUBRICFLOW_DASK_ADDRESS), on that Dask cluster's workers. With `texts`, only those texts'
    cells are planned (a sequential A/B's batch, a cascade's escalation)."""
    refuse_unset(
        corpus_id=corpus_id, rubric=rubric, warehouse_path=warehouse_path, judge=judge
    )  # deploy/prefect.yaml's
    logger = get_run_logger()
    check_where(judge, workers)
    judge.check_endpoint()
    run = Run.of(
        compile_for_scoring(resolve(rubric), source=rubric),
        judge,  # the rubric's execution strategy where no strategy was given
        run_id=run_id or new_run_id(),
        corpus_id=corpus_id,
        warehouse=warehouse_path,
        rubric=rubric,
        texts=tuple(texts) if texts is not None else None,
        options=options,
    )
    long = {}  # long transcripts segmented or cut: the summary says how many
    if any(c.scoped for c in run.bundle.rubric.criteria):  # judged unit by unit, reduced per transcript
        long = score_scoped(run, judge, options, workers, score_corpus)
    with run_lock(warehouse_path, corpus_id, run.bundle.hash, run.judge_hash, run.run_id):  # one run per work
        started = dt.datetime.now()
        plan, recovered, estimate = prepare_run(run)
        run = replace(run, options=run.options.model_copy(update={"layout": plan.layout}))  # auto, resolved
        _announce(plan, recovered, estimate, run)
        try:
            with (
                run_span(run.run_id, corpus_id, f"{run.bundle.id}@{run.bundle.version}", judge.model),
                run_progress(
                    artifact_key("score-progress", corpus_id, run.bundle.id), plan.cells, f"rubricflow run {run.run_id}"
                ),
            ):
                results = _judge(run, plan, workers)
        except BaseException as exc:  # an interrupt (Ctrl-C, a kernel interrupt) closes the run `interrupted`
            if isinstance(exc, KeyboardInterrupt | asyncio.CancelledError):
                finish_run(run, "interrupted", INTERRUPTED)
            else:
                finish_run(run, "failed", (scrub(f"{type(exc).__name__}: {exc}") or "")[:500])
            raise
        try:
            waiting = sum(r.waiting for r in results)
            unjudged = plan.cells + sum(r.resumed for r in results) - sum(r.cells for r in results) - waiting
            refused = _close_run(run, waiting, unjudged, plan.deferred)
            _publish(run)
        except (KeyboardInterrupt, asyncio.CancelledError):  # during the finish step
            finish_interrupted(run, INTERRUPTED)
            raise
        summary = dataclasses.replace(
            _summary(run, plan, results, recovered, unjudged, estimate.usd, started),
            segmented_transcripts=long.get("segmented", 0),
            transcript_segments=long.get("segments", 0),
            cut_transcripts=long.get("cut", 0),
        )
        logger.info("run %s finished: %s", run.run_id, summary)
        if refused:
            raise EndpointRefused(refused)
        return summary.as_dict()


def _publish(run: Run) -> None:
    """The run's report and criteria table as Prefect artifacts, and its completion event."""
    bundle, report = run.bundle, run_report(run)
    publish(
        run_markdown(report),
        artifact_key("score", run.corpus_id, bundle.id),
        f"rubricflow run {run.run_id}: {bundle.id}@{bundle.version} on {run.corpus_id}",
    )
    publish_run_table(report, artifact_key("score-table", run.corpus_id, bundle.id))
    announce_completed(report)


def _announce(plan: steps.Plan, recovered: int, estimate: Estimate, run: Run) -> None:
    """What the run will do and cost, in the log and to the progress display, before any call."""
    logger, config = get_run_logger(), run.judge
    logger.info(
        "run %s: %s cells to judge, %s already landed%s%s",
        run.run_id,
        plan.cells,
        plan.skipped,
        f", {recovered} recovered from an interrupted run" if recovered else "",
        f", {plan.deferred} left for the next run (max_cells {run.options.max_cells})" if plan.deferred else "",
    )
    logger.info(
        "%s%s",
        estimate.describe(config.model),
        f"; budget ${config.budget_usd:,.4f}" if config.budget_usd is not None else "",
    )
    if plan.cells and (overrun := answer_overrun(run.bundle.rubric, config.strategy, config.max_tokens)):
        logger.warning(overrun)
    notify("estimate", {"estimate": estimate, "model": config.model, "budget": config.budget_usd})
    notify("plan", {"run_id": run.run_id, "cells": plan.cells, "total": plan.total, "rubric": run.rubric})


def _summary(
    run: Run,
    plan: steps.Plan,
    results: list[ShardResult],
    recovered: int,
    unjudged: int,
    estimated_usd: float | None,
    started: dt.datetime,
) -> RunSummary:
    return RunSummary(
        run_id=run.run_id,
        corpus_id=run.corpus_id,
        rubric_id=run.bundle.id,
        rubric_hash=run.bundle.hash,
        judge_hash=run.judge_hash,
        planned_cells=plan.total,
        skipped_cells=plan.skipped,
        deferred_cells=plan.deferred,
        judged_cells=sum(r.cells for r in results),
        ok_cells=sum(r.ok for r in results),
        failed_cells=sum(r.failed for r in results),
        calls=sum(r.calls for r in results),
        prompt_tokens=sum(r.prompt_tokens for r in results),
        completion_tokens=sum(r.completion_tokens for r in results),
        recovered_cells=recovered,
        wall_s=(dt.datetime.now() - started).total_seconds(),
        unjudged_cells=unjudged,
        estimated_usd=estimated_usd,
        adopted_cells=plan.adopted,
        warehouse=Path(run.warehouse),
    )


def check_where(config: JudgeConfig, workers: int) -> None:
    """Combinations of where the work runs that cannot work, refused before anything starts."""
    if config.resolved_cluster():
        cluster_security(config.resolved_cluster() or "")  # refused here, before any work, if anyone could reach it
    if config.resolved_cluster() and workers >= 2:
        raise InputError("--workers starts a Dask cluster on this machine and --cluster names one: pick one")
    if config.resolved_cluster() and (config.budget_usd is not None or config.batch):
        raise InputError(
            "--budget and --batch run in the flow's process only: drop --cluster for them "
            "(a budget's ledger is not shared with a cluster's workers yet)"
        )


def _judge(run: Run, plan: steps.Plan, workers: int) -> list[ShardResult]:
    """Judge the plan's shards where the run says; however that ends, the run's judges in this
    process end with it. A run given no endpoint is refused here, once it has cells to judge: with
    none (every cell landed: a gate run again) it needs none."""
    if plan.cells and run.judge.names_no_endpoint():
        raise InputError(
            f"no judge endpoint, and {plan.cells} cells to judge: pass --base-url (base_url=) or set "
            "OPENAI_BASE_URL, or run `rubricflow judge-server` and point --base-url at it"
        )
    try:
        return _judge_where(run, plan, workers)
    finally:
        end_run(run.run_id)


def _judge_where(run: Run, plan: steps.Plan, workers: int) -> list[ShardResult]:
    """Judge the plan's shards where the run says: the Batch API, a Dask cluster, a local Dask
    cluster of `workers` processes, or this process (shards in order, the next begun early)."""
    if run.judge.batch:
        return _judge_in_batches(run, plan)
    address = run.judge.resolved_cluster()
    if address:
        return judge_on_cluster(address, run, plan.files)
    if workers < 2:
        return _judge_in_order(run, plan.files)
    results = []
    futures = [judge_shard.submit(f, run) for f in plan.files]
    for future, plan_file in zip(futures, plan.files, strict=True):  # loaded here, in order: one writer
        results.append(_load(run, future.result(), plan_file))
        notify("shard", results[-1])
    return results


def _close_run(run: Run, waiting: int, unjudged: int, deferred: int) -> str | None:
    """Record how the run ended; returns the message when the endpoint answered no call usably."""
    logger = get_run_logger()
    refused = run_refusals(run)
    message = refusal_message(
        refused["ok_cells"],
        refused["unanswered_cells"],
        refused["unanswered_error"],
        refused["setup_cells"],
        refused["setup_error"],
    )
    if message:
        message = scrub(message) or message
        logger.error(message)
        finish_run(run, "failed", message)
        return message
    if waiting:
        message = f"{waiting} cells wait in unfinished batches: run again to collect them"
        logger.warning(message)
        finish_run(run, "waiting", message)
    elif unjudged:
        message = (
            f"budget ${run.judge.budget_usd:,.4f} reached: {unjudged} cells left unjudged "
            "(run again with a larger budget to judge them)"
        )
        logger.warning(message)
        finish_run(run, "stopped", message)
    else:
        left = f"{deferred} cells left for the next run (max_cells {run.options.max_cells})" if deferred else None
        finish_run(run, "completed", left)
    return None


def _judge_in_batches(run: Run, plan: steps.Plan) -> list[ShardResult]:
    """Collect the batches earlier runs left unfinished, submit this plan's shards, collect them."""
    pending = pending_batches(run) + resolve_uploads(run, pending_batches(run, "uploaded"))
    submitted = submit_batches(run, plan.files)
    results = []
    for batch_id in pending + submitted:
        result = collect_batch(run, batch_id)
        if batch_id in pending:
            result.resumed = result.cells + result.waiting + result.unjudged
        results.append(result)
        notify("shard", result)
    return results


def _judge_in_order(run: Run, plan_files: list[Path]) -> list[ShardResult]:
    """Judge and load the shards in order, each shard's calls begun while the one before it is
    still out: the endpoint never drains to zero calls in flight while a shard lands and loads.
    Both share the process's judge (one limiter, one budget). A begun shard is always landed;
    if the run fails, no new call is sent and the calls already sent are waited for and landed
    (nothing is bought that no one lands)."""
    results: list[ShardResult] = []
    try:
        for i, plan_file in enumerate(plan_files):
            spent = bool(results) and bool(results[-1].unjudged)  # the budget is spent: judge no new shard
            if spent and str(plan_file) not in Worker.get().begun:
                break
            begin_shard(plan_file, run, cell_done)  # first in, first served
            if not spent and i + 1 < len(plan_files):
                begin_shard(plan_files[i + 1], run, cell_done)
            results.append(_load(run, judge_shard(plan_file, run), plan_file))
    finally:
        abandon_shards(run.run_id)
    return results


def _load(run: Run, result: ShardResult, plan_file: Path) -> ShardResult:
    load_shard(run, result.completions_files or [result.completions_file])
    plan_file.unlink()
    return result
