"""The scoring flow's batch tasks, one pipeline for every provider's batch API (its wire:
tasks/judging/batch.py): submit each planned shard as one batch (recorded in the warehouse before
anything waits on it), then wait for each batch, land its answers, and judge online whatever the
batch did not answer usably. A run that finds batches of its rubric and judge still unfinished (an
earlier run crashed or timed out) collects them instead of submitting again."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from rubricflow.tasks.judging import providers
from rubricflow.tasks.judging.batch import BatchWire, collect, wait
from rubricflow.tasks.judging.batch_anthropic import MessageBatches
from rubricflow.tasks.judging.batch_openai import OpenAIBatches
from rubricflow.tasks.judging.judge import Cell, judge_all
from rubricflow.tasks.judging.run import Run
from rubricflow.tasks.judging.shard import ShardResult, Worker, land, read_cells, shard_result
from rubricflow.warehouse import db, steps


def batch_wire(provider: str | None) -> BatchWire:
    """The wire of the provider's batch API, as its capabilities name it (config.py refuses --batch
    for a provider without one)."""
    return MessageBatches() if providers.provider(provider).capabilities.batch == "anthropic" else OpenAIBatches()


@task(name="submit-batches", cache_policy=NO_CACHE)
def submit_batches(run: Run, plan_files: list[Path]) -> list[str]:
    """Each shard's requests staged and recorded, then its batch bought and recorded: a run killed
    between the two leaves an 'uploaded' row that `resolve_uploads` settles, never a second batch."""
    worker, client = Worker.get(), Worker.get().client(run.judge)
    judge, wire = worker.judge(run), batch_wire(run.judge.provider)
    submitted = []
    for plan_file in plan_files:
        cells = read_cells(plan_file)
        staged = worker.submit(wire.stage(client, judge, cells)).result()
        with db.writer(run.warehouse) as con:
            steps.record_upload(con, staged.id, run.run_id, run.corpus_id, run.bundle.hash, run.judge_hash, cells)
        plan_file.unlink()
        batch_id = worker.submit(wire.buy(client, staged)).result()
        with db.writer(run.warehouse) as con:
            steps.record_created(con, staged.id, batch_id)
        submitted.append(batch_id)
    return submitted


@task(name="resolve-uploads", cache_policy=NO_CACHE)
def resolve_uploads(run: Run, staged_ids: list[str]) -> list[str]:
    """The batches of requests an earlier run staged without recording their batch: found at the
    provider (or bought now), recorded, returned to collect; requests the provider does not have
    are marked lost, and their cells are planned again by the next run."""
    worker = Worker.get()
    client, wire = worker.client(run.judge), batch_wire(run.judge.provider)
    found = []
    for staged_id in staged_ids:
        batch_id = worker.submit(wire.find_or_buy(client, staged_id)).result()
        with db.writer(run.warehouse) as con:
            if batch_id is None:
                steps.record_lost_upload(con, staged_id)
                continue
            steps.record_created(con, staged_id, batch_id)
        found.append(batch_id)
    return found


@task(name="collect-batch", cache_policy=NO_CACHE)
def collect_batch(run: Run, batch_id: str) -> ShardResult:
    """The batch's answers landed and loaded (failed lines judged online); while it is not final
    at the timeout its cells count as waiting (it stays recorded, and a later run collects it)."""
    worker, config = Worker.get(), run.judge
    judge, wire = worker.judge(run), batch_wire(config.provider)
    with db.reader(run.warehouse) as con:
        cells = [Cell(**row) for row in db.fetch(con, "batch_cells.sql", batch=batch_id)]
    client = worker.client(config)
    batch = worker.submit(wait(wire, client, batch_id, config.batch_poll_s, config.batch_timeout_s)).result()
    if not batch.final:
        return ShardResult(f"batch-{batch_id}", 0, 0, 0, 0, 0, 0, "", waiting=len(cells))
    outcomes, online = worker.submit(collect(wire, client, judge, batch, cells)).result()
    outcomes += worker.submit(judge_all(judge, online)).result()
    target = land(outcomes, run.folder, f"batch-{batch_id}")
    with db.writer(run.warehouse) as con:
        steps.load_landed(con, target)
        steps.finish_batch(con, batch_id, f"landed ({batch.status})", len(online))
    return shard_result(f"batch-{batch_id}", outcomes, target, len(cells) - len(outcomes))
