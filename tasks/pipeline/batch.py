"""The scoring flow's Batch API tasks: submit each planned shard as one batch (recorded in the
warehouse before anything waits on it), then wait for each batch, land its answers, and judge
online whatever the batch did not answer usably. A run that finds batches of its rubric and judge
still unfinished (an earlier run crashed or timed out) collects them instead of submitting again."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from rubricflow.rubrics.compiler import Bundle
from rubricflow.tasks.judging.batch import FINAL, collect, submit, wait
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.judge import Cell, judge_all
from rubricflow.tasks.judging.shard import ShardResult, Worker, land, read_cells, shard_result
from rubricflow.warehouse import db, steps


@task(name="submit-batches", cache_policy=NO_CACHE)
def submit_batches(
    warehouse_path: str,
    plan_files: list[Path],
    bundle: Bundle,
    config: JudgeConfig,
    run_id: str,
    corpus_id: str,
    run_folder: Path,
) -> list[str]:
    worker = Worker.get()
    judge = worker.judge(bundle, config, run_id, corpus_id, run_folder)
    submitted = []
    for plan_file in plan_files:
        cells = read_cells(plan_file)
        batch = worker.submit(submit(worker.client(config), judge, cells)).result()
        with db.writer(warehouse_path) as con:
            steps.record_batch(
                con, batch.batch_id, batch.input_file_id, run_id, corpus_id, bundle.hash, config.judge_hash(), cells
            )
        plan_file.unlink()
        submitted.append(batch.batch_id)
    return submitted


@task(name="collect-batch", cache_policy=NO_CACHE)
def collect_batch(
    warehouse_path: str, batch_id: str, bundle: Bundle, config: JudgeConfig, run_id: str, corpus_id: str, landing: Path
) -> ShardResult:
    """The batch's answers landed and loaded (failed lines judged online); while it is not final
    at the timeout its cells count as waiting (it stays recorded, and a later run collects it)."""
    worker = Worker.get()
    judge = worker.judge(bundle, config, run_id, corpus_id, landing.parent)
    with db.reader(warehouse_path) as con:
        cells = [Cell(**row) for row in db.fetch(con, "batch_cells.sql", batch=batch_id)]
    client = worker.client(config)
    batch = worker.submit(wait(client, batch_id, config.batch_poll_s, config.batch_timeout_s)).result()
    if batch.status not in FINAL:
        return ShardResult(f"batch-{batch_id}", 0, 0, 0, 0, 0, 0, "", waiting=len(cells))
    outcomes, online = worker.submit(collect(client, judge, batch, cells)).result()
    outcomes += worker.submit(judge_all(judge, online)).result()
    target = land(outcomes, landing, f"batch-{batch_id}")
    with db.writer(warehouse_path) as con:
        steps.load_landed(con, target)
        steps.finish_batch(con, batch_id, f"landed ({batch.status})", len(online))
    return shard_result(f"batch-{batch_id}", outcomes, target, len(cells) - len(outcomes))
