"""A run's shards on an existing Dask cluster (`--cluster tcp://HOST:PORT`): each shard is one
Dask task (`tasks/judging/remote.judge_remote`) on whichever worker the scheduler picks; the
parts its worker publishes come back through a queue on the scheduler and are landed and loaded
here, in the flow's process, which stays the warehouse's one writer.

A shard whose worker died is planned again from what came back: only the cells no part brought
are sent, as a new attempt (at most MAX_ATTEMPTS per shard before the run fails).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rubricflow.errors import InputError
from rubricflow.rubrics.compiler import Bundle
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.remote import PUBLISH_S, from_bytes, judge_remote, to_bytes
from rubricflow.tasks.judging.shard import ShardResult, write_landed
from rubricflow.tasks.runtime.progress import notify
from rubricflow.warehouse import db, steps

MAX_ATTEMPTS = 4


@dataclass
class Shard:
    """One plan file's cells and what of them has come back, over its attempts."""

    name: str
    cells: pa.Table
    landed: set[str] = field(default_factory=set)
    attempts: int = 0
    result: ShardResult = field(init=False)

    def __post_init__(self) -> None:
        self.result = ShardResult(self.name, 0, 0, 0, 0, 0, 0, "")

    def left(self) -> pa.Table:
        if not self.landed:
            return self.cells
        return self.cells.filter(pc.invert(pc.is_in(self.cells["cell_key"], pa.array(sorted(self.landed)))))

    def count(self, completions: pa.Table) -> None:
        rows = completions.select(["cell_key", "status", "attempts", "prompt_tokens", "completion_tokens"]).to_pylist()
        for row in rows:
            self.landed.add(row["cell_key"])
            ok = row["status"] == "ok"
            r = self.result
            r.cells, r.ok, r.failed = r.cells + 1, r.ok + ok, r.failed + (not ok)
            r.calls += row["attempts"]
            r.prompt_tokens += row["prompt_tokens"] or 0
            r.completion_tokens += row["completion_tokens"] or 0


def judge_on_cluster(
    address: str,
    warehouse_path: str,
    plan_files: list[Path],
    landing: Path,
    bundle: Bundle,
    config: JudgeConfig,
    run_id: str,
    corpus_id: str,
) -> list[ShardResult]:
    """Submit every shard, then land and load parts as they come until every shard is back."""
    from distributed import Client, Queue

    try:
        client = Client(address, timeout="20s", set_as_default=False)
    except OSError as exc:
        raise InputError(f"no Dask scheduler answers at {address}: {exc}") from None
    try:
        queue = Queue(f"rubricflow-{run_id}", client=client)
        shards = {f.stem: Shard(f.stem, pq.read_table(f)) for f in plan_files}
        running = {_submit(client, s, bundle, config, run_id, corpus_id, queue.name): s for s in shards.values()}
        while running:
            _land(warehouse_path, landing, shards, _take(queue, wait=True))
            for future in [f for f in running if f.done()]:
                shard = running.pop(future)
                _land(warehouse_path, landing, shards, _take(queue, wait=False))  # its last parts came before it ended
                if _needs_another_attempt(future, shard):
                    running[_submit(client, shard, bundle, config, run_id, corpus_id, queue.name)] = shard
        for plan_file in plan_files:
            plan_file.unlink()
        return [s.result for s in shards.values()]
    finally:
        client.close()


def _submit(client, shard: Shard, bundle: Bundle, config: JudgeConfig, run_id: str, corpus_id: str, queue: str):
    shard.attempts += 1
    if shard.attempts > MAX_ATTEMPTS:
        raise RuntimeError(f"shard {shard.name}: its workers died {MAX_ATTEMPTS} times; see the Dask workers' logs")
    attempt = f"{shard.name}.a{shard.attempts}"
    cells = to_bytes(shard.left())
    return client.submit(
        judge_remote, cells, attempt, bundle, config, run_id, corpus_id, queue, key=f"{run_id}-{attempt}"
    )


def _needs_another_attempt(future, shard: Shard) -> bool:
    """True when the attempt's worker died (Dask's own retry reports `rerun`, or it gave up) and
    cells are left; any other error is the run's."""
    from distributed import KilledWorker

    try:
        rerun = future.result()["rerun"]
    except KilledWorker:
        rerun = True
    return rerun and shard.left().num_rows > 0


def _take(queue, wait: bool) -> list:
    """The parts waiting in the queue; with `wait`, waits up to PUBLISH_S for the first."""
    parts = []
    if wait:
        try:
            parts.append(queue.get(timeout=PUBLISH_S))
        except TimeoutError:
            return parts
    while batch := queue.get(batch=True):
        parts.extend(batch)
    return parts


def _land(warehouse_path: str, landing: Path, shards: dict[str, Shard], parts: list) -> None:
    """Write each part as the local processes land theirs, then load them in one writer session."""
    files = []
    for attempt, part, judgments, completions in parts:
        shard = shards[attempt.rsplit(".a", 1)[0]]
        table = from_bytes(completions)
        files.append(write_landed(from_bytes(judgments), table, landing, f"{attempt}.p{part:04d}"))
        shard.count(table)
        for row in table.select(["status", "attempts", "prompt_tokens", "completion_tokens", "latency_ms"]).to_pylist():
            notify("cell", row)
    if files:
        with db.writer(warehouse_path) as con:
            for f in files:
                steps.load_landed(con, f)
