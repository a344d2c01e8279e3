"""A run's shards on an existing Dask cluster (`--cluster tcp://HOST:PORT`): each shard is one
Dask task (`tasks/judging/remote.judge_remote`) on whichever worker the scheduler picks; the
parts its worker publishes come back through a queue on the scheduler and are landed and loaded
here, in the flow's process, which stays the warehouse's one writer.

A shard whose worker died, whose task failed (one line comes back, never a traceback), or that
was silent for longer than the silence deadline (no part and no heartbeat: a hung or vanished
task; a piece still waiting in the scheduler's queue for a thread is silent only when the whole run
is) is planned again from what came back: only the cells no part brought are sent, as a new
attempt on another worker where there is one (at most MAX_ATTEMPTS per shard; then the run fails
in one line naming the shard and the last error). A heartbeat proves the task's process alive, not
that it judges: an attempt that sent heartbeats but no judged cell for longer than the stall deadline
(a judge call that never returns) is given up the same way, and its worker avoided. So each shard
has a deadline (the stall one, times the attempts, while cells keep landing), and the run one of
its own (RUBRICFLOW_CLUSTER_DEADLINE_S, default none): past it the run fails in one line, with every
part that came back landed. Parts of an attempt given up are ignored.

A scheduler lost mid-run ends the run in one line: every part that came back has landed (the next
run plans only the rest); the workers stop buying once their link to the scheduler is gone, and
hold at most twice --max-in-flight cells begun and not yet published (tasks/judging/remote.Held), so
what is bought twice is at most that per worker thread. When the run ends, its queue and per-attempt
variables are deleted from the scheduler.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rubricflow.errors import InputError, TransientError
from rubricflow.settings import settings
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.remote import PUBLISH_S, judge_remote, prompt_identity
from rubricflow.tasks.judging.run import Run
from rubricflow.tasks.judging.shard import ShardResult
from rubricflow.tasks.runtime.dask_access import cluster_security
from rubricflow.tasks.runtime.progress import notify
from rubricflow.warehouse import db, steps
from rubricflow.warehouse.rows import from_bytes, to_bytes
from rubricflow.warehouse.run_folder import KeptInReserve

MAX_ATTEMPTS = 4
GUIDE = 2  # a piece is at most 1/(GUIDE x workers) of the cells not yet handed out
SMALLEST_ROUNDS = 2  # the smallest piece: this many rounds of --max-in-flight calls
WARM_S = 60.0  # the longest the run waits for the workers to import the judging code
TAKE_S = 0.1  # the longest the inbox's thread waits for a part before it looks whether to stop
LAND_S = 1.0  # the flow lands and loads what came at most this often (a writer session per part took a core)
SILENCE_S = 120.0  # an attempt heard from neither part nor heartbeat for this long is given up
RESULT_WAIT_S = 60.0  # the longest the flow waits for a finished task's small result (Dask may recompute it)
DEADLINE_VARIABLE = "RUBRICFLOW_CLUSTER_DEADLINE_S"  # the whole run's, over every shard and attempt


class ClusterFailed(TransientError):
    """The cluster could not finish the run: a shard failed on every attempt, or the scheduler was lost."""


@dataclass
class Shard:
    """One plan file's cells and what of them has come back, over its attempts."""

    name: str
    cells: pa.Table
    landed: set[str] = field(default_factory=set)
    attempts: int = 0
    attempt: str = ""  # the attempt whose parts count; an earlier one's are ignored
    heard: float = 0.0  # when the current attempt last published (monotonic)
    progressed: float | None = None  # when the current attempt began or last published a judged cell
    avoid: set[str] = field(default_factory=set)  # workers whose attempt failed
    error: str = ""
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
            self.progressed = time.monotonic()
            r = self.result
            r.cells, r.ok, r.failed = r.cells + 1, r.ok + ok, r.failed + (not ok)
            r.calls += row["attempts"]
            r.prompt_tokens += row["prompt_tokens"] or 0
            r.completion_tokens += row["completion_tokens"] or 0


class _CancelledClose(logging.Filter):
    """Drops distributed's record of a client's close cancelled while it reconnects: a traceback
    with nothing to act on, logged when the scheduler is gone (which the run says in one line)."""

    def filter(self, record: logging.LogRecord) -> bool:
        import asyncio

        return not (record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError))


def judge_on_cluster(address: str, run: Run, plan_files: list[Path]) -> list[ShardResult]:
    """Submit every shard, then land and load parts as they come until every shard is back."""
    from distributed import Client

    security = cluster_security(address)
    # a lost scheduler is said once, in rubricflow's line; distributed logs the closed comm's
    # traceback at INFO, which the flow's INFO logging would print
    logging.getLogger("distributed.batched").setLevel(logging.WARNING)
    # and its client, reconnecting to the lost scheduler, logs its own close being cancelled as an ERROR
    if not any(isinstance(f, _CancelledClose) for f in logging.getLogger("distributed.client").filters):
        logging.getLogger("distributed.client").addFilter(_CancelledClose())
    try:
        client = Client(address, timeout="20s", set_as_default=False, security=security)
    except OSError as exc:
        raise InputError(f"no Dask scheduler answers at {address}: {exc}") from None
    cluster = ClusterRun(client, run, prompt_identity(run.bundle, run.judge))
    cluster.stall_s = float(settings().cluster_stall_s or stall_deadline_s(run.judge))
    try:
        workers = cluster.warm_up()
        smallest = SMALLEST_ROUNDS * run.judge.max_in_flight
        shards = pieces([(f.stem, pq.read_table(f)) for f in plan_files], workers, smallest)
        cluster.judge(shards, lambda parts: _land(run, shards, parts))
        for plan_file in plan_files:
            plan_file.unlink()
        return [s.result for s in shards.values()]
    except OSError as exc:  # CommClosedError and the like: the scheduler is gone
        if exc.errno == errno.ENOSPC:  # a full disk here: what came back is landed or in the reserve
            raise
        raise ClusterFailed(
            f"the Dask scheduler at {address} stopped answering ({type(exc).__name__}): what came back has "
            "landed; run again to judge the rest"
        ) from None
    finally:
        cluster.forget()
        client.close()


def pieces(plans: list[tuple[str, pa.Table]], workers: int, smallest: int) -> dict[str, Shard]:
    """The plan files' cells in the pieces sent as tasks, large first and smaller toward the end
    (guided self-scheduling): a worker takes the next piece as it frees a thread, so the workers
    finish within a small piece of each other. One task per plan file left a worker idle for up to a
    whole shard while another judged its last one. A piece never spans two plan files."""
    left = sum(table.num_rows for _, table in plans)
    out: dict[str, Shard] = {}
    for stem, table in plans:
        start = 0
        while start < table.num_rows:
            size = max(smallest, math.ceil(left / (GUIDE * max(1, workers))))
            piece = table.slice(start, size)
            name = stem if start == 0 and piece.num_rows == table.num_rows else f"{stem}-{start}"
            out[name] = Shard(name, piece)
            start, left = start + piece.num_rows, left - piece.num_rows
    return out


def scheduler_workers(client) -> dict:
    """The scheduler's workers. A client that lost its scheduler keeps an empty info: its
    `KeyError: 'workers'` printed a 236-line traceback and exit 1, so it is a lost connection here
    (an OSError: judge_on_cluster's one line, exit 2)."""
    info = client.scheduler_info()
    if "workers" not in info:
        raise ConnectionError("the client has no word of the scheduler (its scheduler info is empty)")
    return info["workers"]


class ClusterRun:
    """One run's shards on a cluster: submitting attempts, watching them, and cleaning up."""

    def __init__(self, client, run: Run, identity: str) -> None:
        from distributed import Queue

        self.client, self.run, self.identity = client, run, identity
        self.queue = Queue(f"rubricflow-{run.run_id}", client=client)
        self.inbox = Inbox(self.queue)
        self.stopped = False  # the workers were asked to stop buying (see stop_buying)
        self.attempts: list[str] = []
        self.failed_on: set[str] = set()  # workers whose task failed: every later attempt goes elsewhere
        self.silence_s = float(settings().cluster_silence_s or SILENCE_S)
        self.stall_s = self.silence_s
        self.deadline_s = float(settings().cluster_deadline_s or "inf")
        self.landed = 0.0  # when parts were last landed
        self.moved = 0.0  # when the run last heard a worker or freed a thread

    def warm_up(self) -> int:
        """Import the judging code on every worker before any piece goes out (a worker's first
        import takes seconds, and the workers then began their first calls that far apart); returns
        how many workers there are. Best effort: a worker that cannot import fails its task instead."""
        try:
            self.client.sync(self.client._run, _warm, on_error="ignore", callback_timeout=WARM_S)
        except Exception:  # noqa: BLE001, S110  # a worker too slow or gone: its first piece says so
            pass
        return len(scheduler_workers(self.client))

    def judge(self, shards: dict[str, Shard], land) -> None:
        running = {self.submit(s): s for s in shards.values()}
        try:
            self._judge(running, land)
        except Exception as exc:
            if db.disk_full(exc):
                self.stop_buying(running, land)
            else:  # a lost scheduler, most often: the parts taken are the flow's, and land
                _land_what_fits(land, self.inbox.rest())
            raise

    def stop_buying(self, running: dict, land) -> None:
        """The flow's disk is full: ask the workers to begin no more cells, and keep what their
        calls in flight bring (in the run's reserve) until their tasks end, so the next run buys
        none of it again."""
        from distributed import Variable

        Variable(f"{self.queue.name}-stop", client=self.client).set(True)
        self.stopped = True
        ends = time.monotonic() + self.silence_s
        while not all(f.done() for f in running) and time.monotonic() < ends:
            _land_what_fits(land, self.inbox.take(wait=True))
        _land_what_fits(land, self.inbox.take(wait=False))

    def _judge(self, running: dict, land) -> None:
        ends = time.monotonic() + self.deadline_s
        while running:
            time.sleep(max(0.0, self.landed + LAND_S - time.monotonic()))  # the parts of LAND_S landed at once
            parts = self.inbox.take(wait=True)
            now = self.landed = time.monotonic()  # when they came: the flow's landing is no worker's silence
            self.moved = now if parts else self.moved
            land(parts)
            if now > ends:
                self.give_up(running)
            for future, shard in list(running.items()):
                quiet = self.quiet_for(shard, now)
                if not future.done() and not quiet:
                    continue
                running.pop(future)
                self.moved = now  # a thread is free: the next piece in the queue begins
                land(self.inbox.take(wait=False))  # its last parts came before it ended
                if self.needs_another_attempt(future, shard, quiet):
                    if shard.error:
                        _warn(f"shard {shard.name} attempt {shard.attempts} failed: {shard.error}; trying again")
                    running[self.submit(shard)] = shard

    def quiet_for(self, shard: Shard, now: float) -> str:
        """Why an attempt is given up although its task has not ended: silent (no part and no
        heartbeat: hung or vanished), or stalled (heartbeats, but no judged cell); '' when neither.
        An attempt not begun yet waits in the scheduler's queue for a worker's thread, as long as the
        pieces before it judge: it is silent only when the whole run was (main gave each piece that
        waited longer than the silence deadline up, and sent it again to the back of the queue)."""
        heard = shard.heard if shard.progressed is not None else max(shard.heard, self.moved)
        if now - heard > self.silence_s:
            return f"no word from its worker for {self.silence_s:g} s"
        if shard.progressed is not None and now - shard.progressed > self.stall_s:
            return f"no judged cell from its worker for {self.stall_s:g} s (heartbeats only: a hung call)"
        return ""

    def give_up(self, running: dict) -> None:
        """The run's deadline passed: cancel every attempt and fail in one line."""
        for future in running:
            future.cancel()
        left = sum(s.left().num_rows for s in running.values())
        raise ClusterFailed(
            f"the run passed its deadline of {self.deadline_s:g}s ({DEADLINE_VARIABLE}) with {left} cells of "
            f"{len(running)} shards not back: what came back has landed; run again to judge the rest"
        )

    def submit(self, shard: Shard):
        shard.attempts += 1
        if shard.attempts > MAX_ATTEMPTS:
            raise ClusterFailed(f"shard {shard.name} failed on {MAX_ATTEMPTS} attempts; the last: {shard.error}")
        shard.attempt, shard.heard = f"{shard.name}.a{shard.attempts}", time.monotonic()
        shard.progressed = None  # not begun: a task waiting for a thread is not stalled
        self.attempts.append(shard.attempt)
        avoid = shard.avoid | self.failed_on
        workers = [w for w in scheduler_workers(self.client) if w not in avoid]
        return self.client.submit(
            judge_remote,
            to_bytes(shard.left()),
            shard.attempt,
            self.run,
            self.queue.name,
            self.identity,
            key=f"{self.run.run_id}-{shard.attempt}",
            # another worker where there is one; none named, the scheduler queues the pieces and
            # hands each to the next worker with a free thread
            workers=(workers or None) if avoid else None,
            pure=False,
        )

    def needs_another_attempt(self, future, shard: Shard, quiet: str) -> bool:
        """True when cells are left after an attempt that died, failed, fell silent or stalled (its
        worker is avoided next); a worker that renders other prompts fails the run (no other worker
        would be trusted more)."""
        from distributed import KilledWorker

        shard.error = ""
        if quiet and not future.done():
            future.cancel()
            worker = self.started_on(shard.attempt)
            shard.avoid.add(worker)
            shard.error = f"{quiet} (worker {worker or '?'})"
            return shard.left().num_rows > 0
        try:
            outcome = _outcome(future)
        except KilledWorker:
            outcome = {"rerun": True}
        except (Exception, asyncio.CancelledError) as exc:  # noqa: BLE001  # Dask's own error (the task never
            # raises): a task cancelled or erred with an error the flow cannot unpickle; its worker from its start mark
            outcome = {"error": " ".join(f"{type(exc).__name__}: {exc}".split())[:300] or type(exc).__name__}
        if "refused" in outcome:
            raise ClusterFailed(f"worker {outcome.get('worker')} refused shard {shard.name}: {outcome['refused']}")
        if "error" in outcome:
            worker = outcome.get("worker") or self.started_on(shard.attempt)
            shard.error = f"{outcome['error']} (worker {worker or 'unknown: the attempt never began'})"
            if worker:  # the next attempt goes to another worker where there is one, and so does every
                shard.avoid.add(worker)  # later one: its tasks failed every attempt while healthy workers idled
                self.failed_on.add(worker)
            return shard.left().num_rows > 0
        return bool(outcome["rerun"]) and shard.left().num_rows > 0

    def started_on(self, attempt: str) -> str:
        """The worker an attempt began on (its start mark), or '' when it never began."""
        from distributed import Variable

        try:
            return str(Variable(f"{self.queue.name}-{attempt}", client=self.client).get(timeout=0))
        except TimeoutError:
            return ""
        except AttributeError:  # a client that gave up reconnecting has no scheduler link (None) left
            if self.client.scheduler is not None:
                raise
            raise ConnectionError("the client closed after losing its scheduler") from None

    def forget(self) -> None:
        """Delete the run's queue and start marks from the scheduler (best effort: it may be gone)."""
        from distributed import Variable

        self.inbox.stop()
        try:
            for attempt in self.attempts:
                Variable(f"{self.queue.name}-{attempt}", client=self.client).delete()
                Variable(f"{self.queue.name}-{attempt}-taken", client=self.client).delete()
            self.queue.close()  # the last of its users (each task closes its own): the scheduler drops it
            if self.stopped:
                Variable(f"{self.queue.name}-stop", client=self.client).delete()
        except Exception:  # noqa: BLE001, S110  # a scheduler that is gone keeps nothing anyway
            pass


def _outcome(future) -> dict:
    """A finished task's result. A task that erred (the task never raises: Dask's own error, or a
    BaseException such as CancelledError that left it) has its error read, not raised: a
    BaseException raised in the client's loop thread broke its wait, which then hung for
    RESULT_WAIT_S and printed a traceback."""
    if future.status == "error":
        exc = future.exception(timeout=RESULT_WAIT_S)
        return {"error": " ".join(f"{type(exc).__name__}: {exc}".split())[:300] or type(exc).__name__}
    return future.result(timeout=RESULT_WAIT_S)  # "Couldn't gather": rescheduled, never forever


def _land_what_fits(land, parts: list) -> None:
    """Land parts on a full disk: into the reserve, or landed and not loaded (the next run loads it)."""
    try:
        land(parts)
    except Exception as exc:
        if not db.disk_full(exc):
            raise


def stall_deadline_s(config: JudgeConfig) -> float:
    """How long an attempt may send heartbeats without a judged cell: one cell's worst case, every
    transient retry of every re-ask at the whole-answer timeout, plus the longest back-off waits."""
    per_call = config.resolved_timeout_s() * config.max_attempts + 60.0 * (config.max_attempts - 1)
    return max(SILENCE_S, per_call * (config.answer_retries + 1))


def _warm() -> None:
    """Import the judging code (the judge, the client, pyarrow), and the pandas pyarrow imports at
    a task's first part (seconds on a loaded worker, while its attempt sent no word)."""
    from rubricflow.tasks.judging.shard import land_tables

    land_tables([])


def _warn(message: str) -> None:
    from prefect import get_run_logger

    get_run_logger().warning(message)


class Inbox:
    """The run's queue, emptied into this process by a thread of its own as parts come: a part taken
    is the flow's (landed even when the scheduler is lost next), where one left in the queue while
    the flow landed the last is lost with the scheduler and bought again. Each attempt is told the
    last part taken (its `-taken` variable): its worker holds a part's places until then."""

    def __init__(self, queue) -> None:
        self.queue = queue
        self.parts: deque[tuple] = deque()
        self.came, self.stopped, self.lock = threading.Event(), threading.Event(), threading.Lock()
        self.error: OSError | None = None
        self.thread = threading.Thread(target=self._empty, name="rubricflow-inbox", daemon=True)
        self.thread.start()

    def _empty(self) -> None:
        while not self.stopped.is_set() and self.error is None:
            with self.lock:
                self._get(TAKE_S)

    def _get(self, wait_s: float) -> None:
        """Move what waits in the queue here (waiting up to wait_s for the first part); a lost
        scheduler is kept in `error`, raised once every part taken has been given out."""
        try:
            got = [self.queue.get(timeout=wait_s)] if wait_s else []
        except TimeoutError:
            return
        except Exception as exc:  # noqa: BLE001  # the scheduler is gone, however its client says so
            self.error = _lost(exc)
            return self.came.set()
        try:
            while batch := self.queue.get(batch=True):
                got.extend(batch)
        except Exception as exc:  # noqa: BLE001
            self.error = _lost(exc)
        if got or self.error:
            self.parts.extend(got)
            self.came.set()
        if got and self.error is None:
            self._say_taken(got)

    def _say_taken(self, got: list) -> None:
        from distributed import Variable

        last: dict[str, int] = {}
        for attempt, part, *_ in got:
            last[attempt] = max(part, last.get(attempt, -1))
        try:
            for attempt, part in last.items():
                if part >= 0:
                    Variable(f"{self.queue.name}-{attempt}-taken", client=self.queue.client).set(part)
        except Exception as exc:  # noqa: BLE001
            self.error = _lost(exc)

    def take(self, wait: bool) -> list:
        """The parts taken so far; with `wait`, waits up to PUBLISH_S for one; without, first takes
        whatever waits in the queue now (an attempt that ended put its last parts there)."""
        if wait:
            self.came.wait(PUBLISH_S)
        elif self.error is None:
            with self.lock:
                self._get(0)
        self.came.clear()
        parts = [self.parts.popleft() for _ in range(len(self.parts))]
        if not parts and self.error is not None:
            raise self.error
        return parts

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=2 * TAKE_S + 1)

    def rest(self) -> list:
        """Stop taking, and give out the parts taken and not yet given (the run ends on an error)."""
        self.stop()
        return [self.parts.popleft() for _ in range(len(self.parts))]


def _lost(exc: Exception) -> OSError:
    """The inbox's error as the lost link it is: a client that gave up reconnecting raises an
    AttributeError (its scheduler link is None), which killed the inbox's thread unsaid, and the run
    waited for the silence deadline."""
    if isinstance(exc, OSError):
        return exc
    return ConnectionError(f"the client lost its scheduler ({type(exc).__name__}: {exc})")


def _land(run: Run, shards: dict[str, Shard], parts: list) -> None:
    """Write each attempt's parts as one landed part (workers publish each answer as it comes: a
    file per answer would be many), then load them in one writer session; a heartbeat only marks
    its attempt alive, and a given-up attempt's parts are dropped."""
    files, kept = [], None
    for attempt, (first, judgments, completions) in _by_attempt(shards, parts).items():
        try:
            files.append(run.folder.land(judgments, completions, f"{attempt}.p{first:04d}"))
        except KeptInReserve as exc:  # the disk is full: the rest of the parts go to the reserve too
            kept = exc
        shards[attempt.rsplit(".a", 1)[0]].count(completions)
        for row in completions.select(
            ["status", "attempts", "prompt_tokens", "completion_tokens", "latency_ms"]
        ).to_pylist():
            notify("cell", row)
    if files:
        with db.writer(run.warehouse) as con:
            for f in files:
                steps.load_landed(con, f)
    if kept is not None:
        raise kept


def _by_attempt(shards: dict[str, Shard], parts: list) -> dict[str, tuple[int, pa.Table, pa.Table]]:
    """The judged parts of each counting attempt, joined: (its first part's number, judgments, completions)."""
    got: dict[str, list] = {}
    for attempt, part, judgments, completions in parts:
        shard = shards[attempt.rsplit(".a", 1)[0]]
        if attempt != shard.attempt:
            continue
        shard.heard = time.monotonic()
        shard.progressed = shard.progressed or shard.heard  # its first word: the attempt began
        if part >= 0:
            got.setdefault(attempt, []).append((part, from_bytes(judgments), from_bytes(completions)))
    return {
        attempt: (ps[0][0], pa.concat_tables([p[1] for p in ps]), pa.concat_tables([p[2] for p in ps]))
        for attempt, ps in got.items()
    }
