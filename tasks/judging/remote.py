"""Judging a shard on a Dask worker of another machine: the cells arrive as Arrow bytes, and what
the worker judged goes back to the flow's process in parts every PUBLISH_S through a Dask queue
on the scheduler, so the worker needs no warehouse, no run folder and no shared filesystem.

A worker killed mid-shard loses only the answers of its last PUBLISH_S: every part it published
has landed. Dask runs a task again on another worker when its worker dies; that second attempt
judges nothing (it finds its start mark and returns `rerun`), and the flow plans the cells no
part brought back as a new task instead, so no landed cell is bought twice.

The API key comes from the worker's own environment (OPENAI_API_KEY), never from the task's
arguments.

A task never raises: an error (even one whose traceback cannot be pickled, such as a
RecursionError, which would leave the flow's future pending forever) comes back as one line in
`error`, and the flow retries the shard on another worker. Each task carries the flow's prompt
identity (rubricflow's version and a hash of every rendered prompt and schema); a worker whose code
renders other prompts refuses the task rather than judge under the flow's judge hash. While it
judges, the task also publishes a heartbeat every HEARTBEAT_S, so the flow can tell a silent
(hung or vanished) attempt from a slow one. An attempt the flow gave up (cancelled: silent, stalled
or past the run's deadline) stops judging at its next look, so its worker's thread is free for the
next task rather than held by a call that never returns.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections import deque
from concurrent.futures import TimeoutError as FutureTimeout

from rubricflow.rubrics.compiler import Bundle
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.judge import Cell, judge_all
from rubricflow.tasks.judging.run import Run
from rubricflow.tasks.judging.secrets import scrub
from rubricflow.tasks.judging.shard import Worker, land_tables, shard_result
from rubricflow.warehouse.rows import from_bytes, to_bytes

PUBLISH_S = 0.5
HEARTBEAT_S = 5.0


def prompt_identity(bundle: Bundle, config: JudgeConfig) -> str:
    """rubricflow's version and what this code sends the judge for the bundle: the fingerprint of
    every rendered call unit (rubrics/render), which covers its system text, schema and user framing."""
    from rubricflow import __version__
    from rubricflow.rubrics.render import render

    digest = hashlib.sha256(f"{__version__}\0{config.judge_hash()}".encode())
    for unit in render(bundle.rubric, config.strategy).units.values():
        digest.update(f"\0{unit.fingerprint}".encode())
    return f"{__version__}:{digest.hexdigest()[:16]}"


def judge_remote(cells: bytes, attempt: str, run: Run, queue: str, identity: str = "") -> dict:
    """Judge the cells (an Arrow stream) on this worker, publishing (attempt, part, judgments,
    completions) to the queue every PUBLISH_S; returns the attempt's counts, or its error in one line."""
    from distributed import get_worker

    worker = get_worker().address
    try:
        return {"worker": worker, **_judge_remote(cells, attempt, run, queue, identity)}
    except Exception as exc:  # noqa: BLE001  # the message travels; the traceback may not (RecursionError)
        message = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        return {"worker": worker, "rerun": False, "error": scrub(message)}


def _judge_remote(cells: bytes, attempt: str, run: Run, queue: str, identity: str) -> dict:
    from distributed import Queue, Variable, get_client, get_worker

    client = get_client()
    started = Variable(f"{queue}-{attempt}", client=client)
    try:
        started.get(timeout=0)
        return {"rerun": True}  # an earlier try of this attempt began on a worker that died
    except TimeoutError:
        started.set(get_worker().address)
    mine = prompt_identity(run.bundle, run.judge)
    if identity and mine != identity:
        return {"rerun": False, "refused": f"this worker renders other prompts ({mine}; the flow's: {identity})"}
    outbox = Queue(queue, client=client)
    try:
        return _publish_judged(outbox, cells, attempt, run)
    finally:
        with contextlib.suppress(Exception):  # a scheduler that is gone keeps nothing
            outbox.close()  # the scheduler deletes the queue when its last user closes it


def _publish_judged(outbox, cells: bytes, attempt: str, run: Run) -> dict:
    todo = [Cell(**row) for row in from_bytes(cells).to_pylist()]
    done: deque = deque()
    worker = Worker.get()
    future = worker.submit(judge_all(worker.judge(run), todo, done.append))
    part, heard = 0, time.monotonic() - HEARTBEAT_S - 1  # the first heartbeat says the attempt began
    while True:
        try:
            outcomes = future.result(timeout=PUBLISH_S)
        except FutureTimeout:
            outcomes = None
        batch = [done.popleft() for _ in range(len(done))]
        try:
            if batch:
                judgments, completions = land_tables(batch)
                outbox.put((attempt, part, to_bytes(judgments), to_bytes(completions)))
                part, heard = part + 1, time.monotonic()
            elif time.monotonic() - heard > HEARTBEAT_S:
                outbox.put((attempt, -1, b"", b""))  # alive, nothing judged yet
                heard = time.monotonic()
        except Exception:
            future.cancel()  # the scheduler is gone: buy nothing no one can land
            raise
        if outcomes is None and _given_up():
            future.cancel()  # buy nothing more for an attempt the flow no longer counts
            return {"rerun": False, "error": "given up by the flow"}
        if outcomes is not None:
            result = shard_result(attempt, outcomes, None, len(todo) - len(outcomes))  # type: ignore[arg-type]
            return {"rerun": False, **result.__dict__}


def _given_up() -> bool:
    """Whether the flow cancelled the task this thread runs (the worker has forgotten it, or marked it cancelled)."""
    from distributed import get_worker
    from distributed.worker import thread_state

    key = getattr(thread_state, "key", None)
    task = None if key is None else get_worker().state.tasks.get(key)
    return task is None or task.state in ("cancelled", "released", "forgotten")
