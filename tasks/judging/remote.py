"""Judging a shard on a Dask worker of another machine: the cells arrive as Arrow bytes, and what
the worker judged goes back to the flow's process in parts every PUBLISH_S through a Dask queue
on the scheduler, so the worker needs no warehouse, no run folder and no shared filesystem.

A worker killed mid-shard loses only the answers of its last PUBLISH_S: every part it published
has landed. Dask runs a task again on another worker when its worker dies; that second attempt
judges nothing (it finds its start mark and returns `rerun`), and the flow plans the cells no
part brought back as a new task instead, so no landed cell is bought twice.

The API key comes from the worker's own environment (OPENAI_API_KEY), never from the task's
arguments.
"""

from __future__ import annotations

import io
from collections import deque
from concurrent.futures import TimeoutError as FutureTimeout

import pyarrow as pa

from rubricflow.rubrics.compiler import Bundle
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.judge import Cell, judge_all
from rubricflow.tasks.judging.shard import Worker, land_tables, shard_result

PUBLISH_S = 0.5


def to_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def from_bytes(data: bytes) -> pa.Table:
    return pa.ipc.open_stream(data).read_all()


def judge_remote(
    cells: bytes, attempt: str, bundle: Bundle, config: JudgeConfig, run_id: str, corpus_id: str, queue: str
) -> dict:
    """Judge the cells (an Arrow stream) on this worker, publishing (attempt, part, judgments,
    completions) to the queue every PUBLISH_S; returns the attempt's counts."""
    from distributed import Queue, Variable, get_client

    client = get_client()
    started = Variable(f"{queue}-{attempt}", client=client)
    try:
        started.get(timeout=0)
        return {"rerun": True}  # an earlier try of this attempt began on a worker that died
    except TimeoutError:
        started.set(True)
    outbox = Queue(queue, client=client)
    todo = [Cell(**row) for row in from_bytes(cells).to_pylist()]
    done: deque = deque()
    worker = Worker.get()
    future = worker.submit(judge_all(worker.judge(bundle, config, run_id, corpus_id), todo, done.append))
    part = 0
    while True:
        try:
            outcomes = future.result(timeout=PUBLISH_S)
        except FutureTimeout:
            outcomes = None
        batch = [done.popleft() for _ in range(len(done))]
        if batch:
            judgments, completions = land_tables(batch)
            outbox.put((attempt, part, to_bytes(judgments), to_bytes(completions)))
            part += 1
        if outcomes is not None:
            result = shard_result(attempt, outcomes, None, len(todo) - len(outcomes))  # type: ignore[arg-type]
            return {"rerun": False, **result.__dict__}
