"""Judging a shard on a Dask worker of another machine: the cells arrive as Arrow bytes, and what
the worker judged goes back to the flow's process answer by answer as they come, through a Dask
queue on the scheduler, so the worker needs no warehouse, no run folder and no shared filesystem.

A worker killed mid-shard, or a scheduler lost, costs only the cells the worker held: its calls in
flight and answers the flow has not said it took (at most HELD_ROUNDS x --max-in-flight cells);
every part the flow took has landed. Dask runs a task again
on another worker when its worker dies; that second attempt judges nothing (it finds its start
mark and returns `rerun`), and the flow plans the cells no part brought back as a new task
instead, so no landed cell is bought twice.

The API key comes from the worker's own environment (OPENAI_API_KEY), never from the task's
arguments.

A task never raises: an error (even one whose traceback cannot be pickled, such as a
RecursionError, which would leave the flow's future pending forever) comes back as one line in
`error`, and the flow retries the shard on another worker. Each task carries the flow's prompt
identity (rubricflow's version, a digest of the code that reads answers, and a hash of every rendered
prompt and schema); a worker whose code renders other prompts or reads answers otherwise refuses the
task rather than judge under the flow's judge hash. While it
judges, the task also publishes a heartbeat every HEARTBEAT_S, so the flow can tell a silent
(hung or vanished) attempt from a slow one. An attempt the flow gave up (cancelled: silent, stalled
or past the run's deadline) stops judging at its next look, so its worker's thread is free for the
next task rather than held by a call that never returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import threading
import time
from collections import deque
from pathlib import Path

from rubricflow.rubrics.compiler import Bundle
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.judge import Cell, judge_all
from rubricflow.tasks.judging.run import Run
from rubricflow.tasks.judging.secrets import scrub
from rubricflow.tasks.judging.shard import Worker, land_tables, shard_result
from rubricflow.warehouse.rows import from_bytes, to_bytes

PUBLISH_S = 0.5  # the longest a worker waits for an answer before it looks again (given up? heartbeat due?)
GATHER_S = 0.25  # the longest an answer waits for others to share its put (a put per answer kept a core busy)
STOP_LOOK_S = 0.2  # how often a judging worker looks whether the flow asked it to stop buying
HELD_ROUNDS = 2  # cells begun and not yet taken by the flow: at most this many times --max-in-flight
HEARTBEAT_S = 5.0


# The modules that read an answer into a verdict: a worker whose copy differs judges the same answer
# differently (148 of 360 judgments differed, unnoticed, while the version was 0.1.0 everywhere).
ANSWER_READERS = ("answers", "verify", "verdict_tools", "logprobs")


def reading_code_digest() -> str:
    """A digest of the source of the modules that read answers (ANSWER_READERS), as installed here."""
    digest = hashlib.sha256()
    for name in ANSWER_READERS:
        digest.update(Path(__file__).with_name(f"{name}.py").read_bytes())
    return digest.hexdigest()[:16]


def prompt_identity(bundle: Bundle, config: JudgeConfig, reading: str | None = None) -> str:
    """rubricflow's version, how this code reads answers (`reading_code_digest`), and what it sends
    the judge for the bundle: the fingerprint of every rendered call unit (rubrics/render), which
    covers its system text, schema and user framing."""
    from rubricflow.rubrics.render import render
    from rubricflow.version import __version__

    reading = reading or reading_code_digest()
    digest = hashlib.sha256(f"{__version__}\0{config.judge_hash()}\0{reading}".encode())
    for unit in render(bundle.rubric, config.strategy).units.values():
        digest.update(f"\0{unit.fingerprint}".encode())
    return f"{__version__}:{digest.hexdigest()[:16]}"


def identity_refusal(mine: str, flows: str) -> str:
    """Why this worker refuses the flow's task ('' when it does not): another rubricflow version
    (named first: the one thing to install), else other prompts or answer reading."""
    if not flows or mine == flows:
        return ""
    version, wanted = mine.split(":", 1)[0], flows.split(":", 1)[0]
    if version != wanted:
        return f"this worker runs rubricflow {version}, the flow {wanted}: install {wanted} on it ({mine}; {flows})"
    return f"this worker renders other prompts ({mine}; the flow's: {flows})"


def judge_remote(cells: bytes, attempt: str, run: Run, queue: str, identity: str = "") -> dict:
    """Judge the cells (an Arrow stream) on this worker, publishing (attempt, part, judgments,
    completions) to the queue as answers come; returns the attempt's counts, or its error in one line."""
    from distributed import get_worker

    worker = get_worker().address
    try:
        return {"worker": worker, **_judge_remote(cells, attempt, run, queue, identity)}
    except (Exception, asyncio.CancelledError) as exc:  # noqa: BLE001  # the message travels; the traceback
        # may not (RecursionError), and a CancelledError (a BaseException) left the flow without its worker
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
    if refusal := identity_refusal(prompt_identity(run.bundle, run.judge), identity):
        return {"rerun": False, "refused": refusal}
    outbox = Queue(queue, client=client)
    taken = Variable(f"{queue}-{attempt}-taken", client=client)
    try:
        return _publish_judged(outbox, cells, attempt, run, taken, Variable(f"{queue}-stop", client=client))
    finally:
        with contextlib.suppress(Exception):  # a scheduler that is gone keeps nothing
            outbox.close()  # the scheduler deletes the queue when its last user closes it


def _publish_judged(outbox, cells: bytes, attempt: str, run: Run, taken, stop) -> dict:
    """Publish each answer as it comes (whatever came during the last put goes in the next): a
    scheduler lost mid-run loses only the cells the worker holds. It holds at most HELD_ROUNDS x
    --max-in-flight cells begun and not yet taken by the flow: a part's places are freed once the flow
    says (`taken`, the last part it took) that it holds the part, since one put, or even handed by the
    scheduler to a flow that has not read it yet, is lost with the scheduler too. While puts hang (a
    scheduler going away), it stops buying; and when the flow sets `stop` (its disk is full) it begins
    no more cells, publishes what its calls in flight bring, and ends."""
    outbox.put((attempt, -1, b"", b""))  # the attempt began (its judge's setup takes a while on a loaded worker)
    todo = [Cell(**row) for row in from_bytes(cells).to_pylist()]
    done: deque = deque()
    came = threading.Event()
    worker = Worker.get()
    held = Held(HELD_ROUNDS * run.judge.max_in_flight, _scheduler_link(), stop)
    held.look()

    def answered(outcome) -> None:
        done.append(outcome)
        came.set()

    future = worker.submit(judge_all(worker.judge(run), todo, answered, held))
    future.add_done_callback(lambda _: came.set())
    part, heard = 0, time.monotonic()
    while True:
        came.wait(PUBLISH_S)
        _gather(done, came, future, max(1, run.judge.max_in_flight // 2))
        came.clear()
        outcomes = future.result() if future.done() else None
        batch = [done.popleft() for _ in range(len(done))]
        try:
            held.look()
            if batch:
                judgments, completions = land_tables(batch)
                outbox.put((attempt, part, to_bytes(judgments), to_bytes(completions)))
                held.unread.append((part, len(batch)))
                part, heard = part + 1, time.monotonic()
            elif time.monotonic() - heard > HEARTBEAT_S:
                outbox.put((attempt, -1, b"", b""))  # alive, nothing judged yet
                heard = time.monotonic()
            if held.unread and (freed := held.taken(_last_taken(taken))):
                worker.loop.call_soon_threadsafe(held.release, freed)
        except Exception:
            future.cancel()  # the scheduler is gone: buy nothing no one can land
            raise
        if outcomes is None and _given_up():
            future.cancel()  # buy nothing more for an attempt the flow no longer counts
            return {"rerun": False, "error": "given up by the flow"}
        if outcomes is not None:
            result = shard_result(attempt, outcomes, None, len(todo) - len(outcomes))  # type: ignore[arg-type]
            return {"rerun": False, **result.__dict__}


def _gather(done: deque, came: threading.Event, future, enough: int) -> None:
    """Let answers gather for one put: until `enough` of them wait (half the places the worker may
    hold beyond its calls in flight, so buying never waits on a put), GATHER_S passes, or the
    judging ends. A put per answer, with its Arrow encoding, took the GIL from the judging loop."""
    ends = time.monotonic() + GATHER_S
    while True:
        came.clear()  # before looking: an answer that comes after the look wakes the wait
        left = ends - time.monotonic()
        if not done or len(done) >= enough or future.done() or left <= 0:
            return
        came.wait(left)


class Held:
    """Places for cells begun and not yet taken by the flow, `size` of them; once `link_up()` says
    the scheduler is gone, no place is given (a worker notices a killed scheduler at once; its puts
    hang until they time out, and meanwhile it would buy what no one can land). `unread` holds the
    parts put that the flow has not said it took, (part, answers): their places wait for its word."""

    def __init__(self, size: int, link_up, stop=None) -> None:
        self.places, self.link_up = asyncio.Semaphore(size), link_up
        self.stop, self.stopped, self.looked = stop, False, 0.0
        self.unread: deque[tuple[int, int]] = deque()

    async def acquire(self) -> bool:
        await self.places.acquire()
        if not self.stopped and self.link_up():
            return True
        self.places.release()
        return False

    def release(self, places: int = 1) -> None:
        for _ in range(places):
            self.places.release()

    def taken(self, last: int) -> int:
        """The places of the parts up to `last` (the flow took them), no longer unread."""
        freed = 0
        while self.unread and self.unread[0][0] <= last:
            freed += self.unread.popleft()[1]
        return freed

    def look(self) -> None:
        """Whether the flow asked its workers to stop buying (its `stop` variable is set), looked up
        at most every STOP_LOOK_S."""
        if self.stop is None or self.stopped or time.monotonic() - self.looked < STOP_LOOK_S:
            return
        self.looked = time.monotonic()
        try:
            self.stop.get(timeout=0)
            self.stopped = True
        except TimeoutError:
            pass


def _last_taken(taken) -> int:
    """The last part of this attempt the flow said it took (-1: none yet)."""
    try:
        return int(taken.get(timeout=0))
    except TimeoutError:
        return -1


def _scheduler_link():
    """Whether this worker still holds its link to the scheduler (it closes itself when it breaks)."""
    from distributed import get_worker
    from distributed.core import Status

    worker = get_worker()
    return lambda: worker.status in (Status.running, Status.paused) and not worker.batched_stream.closed()


def _given_up() -> bool:
    """Whether the flow cancelled the task this thread runs (the worker has forgotten it, or marked it cancelled)."""
    from distributed import get_worker
    from distributed.worker import thread_state

    key = getattr(thread_state, "key", None)
    task = None if key is None else get_worker().state.tasks.get(key)
    return task is None or task.state in ("cancelled", "released", "forgotten")
