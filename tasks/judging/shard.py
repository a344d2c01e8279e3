"""Judge one shard of planned cells and land its results as Parquet, atomically, as they come.

Shards never touch the warehouse: they read a plan file and land its finished cells in parts,
every FLUSH_S seconds while the shard runs, each part two files, the judgments first and the
completions last, each through a temp file and a rename. A completions file on disk means its
part is complete; the loader takes only those. A killed run loses only the calls in flight.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import datetime as dt
import errno
import gc
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from openai import AsyncOpenAI, DefaultAioHttpClient

from rubricflow.tasks.judging.config import JudgeConfig, api_key
from rubricflow.tasks.judging.costs import Budget, price_of, price_table
from rubricflow.tasks.judging.judge import Cell, Judge, Outcome, RetryBudget, judge_all
from rubricflow.tasks.judging.providers import client_for, client_identity, provider
from rubricflow.tasks.judging.ratelimit import AdaptiveConcurrency, KeyLimits, RateLimiter
from rubricflow.tasks.judging.run import Run
from rubricflow.tasks.judging.secrets import configured_keys, scrub
from rubricflow.tasks.judging.telemetry import traced_shard
from rubricflow.tasks.runtime.prefect_server import state_dir
from rubricflow.warehouse.rows import COMPLETION, JUDGMENT
from rubricflow.warehouse.run_folder import KeptInReserve, RunFolder


@dataclass
class ShardResult:
    shard: str
    cells: int
    ok: int
    failed: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    completions_file: str  # the last part landed
    unjudged: int = 0  # cells left out because the run's budget was spent
    waiting: int = 0  # cells in a batch not final yet (a later run collects it)
    resumed: int = 0  # cells of an earlier run's batch this run collected
    completions_files: list[str] = field(default_factory=list)  # every part landed, in order


def client_key(config: JudgeConfig) -> tuple:
    """What the judge's HTTP client is built from, the environment's parts read now (see
    `providers.client_identity`): a key set after a 401 is a new client, and so a new Judge."""
    return client_identity(config.provider, config.resolved_base_url(), config.resolved_timeout_s())


def judge_key(run: Run) -> tuple[str, tuple]:
    """What a kept Judge is kept under: the run (whose id names the rubric and every judge setting,
    for a run outside a warehouse) and its client's key (the environment's parts, read now)."""
    return (run.run_id, client_key(run.judge))


OUTSIDE_KEPT = 32  # judges kept for calls outside a warehouse: a goldens run's rubrics, an evolve step's candidates


def fast_event_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop where it is installed (not on Windows): the judge loop's per-call event-loop
    work (timers, sockets, task wake-ups) costs about a quarter less CPU; else asyncio's own."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class Worker:
    """One per process: a background event loop with one HTTP client per endpoint and key, and one
    Judge per run (its rendered prompts, rate limiter, retry budget and output-mode fallback), reused
    by every shard of that run. The process outlives its runs: what it keeps is keyed by all it was
    built from (a Judge holds its client, so the key reaching that client names it too)."""

    _instance: Worker | None = None
    _guard = threading.Lock()

    def __init__(self) -> None:
        self.loop = fast_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="rubricflow-judge", daemon=True)
        self.thread.start()
        self.clients: dict[tuple, AsyncOpenAI] = {}
        self.judges: dict[tuple[str, tuple], Judge] = {}  # (run id, its client's key) -> the run's judge
        self.outside: dict[tuple[str, tuple], Judge] = {}  # the same, outside a warehouse: the last used kept
        self.controllers: dict[tuple[str | None, str], AdaptiveConcurrency] = {}
        self.begun: dict[str, Begun] = {}  # plan file -> its judging (see begin_shard)
        self.frozen_for: set[str] = set()  # the runs that froze the heap, until each ends (see build)
        self._judges_guard = threading.Lock()

    @classmethod
    def get(cls) -> Worker:
        with cls._guard:
            if cls._instance is None:
                cls._instance = Worker()
                atexit.register(cls._instance.close)
            return cls._instance

    def close(self) -> None:
        """Close the HTTP clients on their own loop (aiohttp warns about sessions left open)."""
        for client in self.clients.values():
            try:
                self.submit(client.close()).result(timeout=5)
            except Exception:  # closing at exit is best effort
                pass
        self.clients.clear()

    def submit(self, coro) -> Future:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def client(self, config: JudgeConfig) -> AsyncOpenAI:
        key = client_key(config)  # a key (or the provider's query) set or changed since gets a new client
        if key not in self.clients:
            url, timeout_s = config.resolved_base_url(), config.resolved_timeout_s()
            self.clients[key] = client_for(config.provider, url, timeout_s, DefaultAioHttpClient(timeout=timeout_s))
        return self.clients[key]

    def controller(self, config: JudgeConfig) -> AdaptiveConcurrency:
        """One concurrency controller per endpoint and model for the life of the process: what it
        learned about the server carries over from shard to shard and from run to run."""
        key = (config.resolved_base_url(), config.model)
        if key not in self.controllers:
            self.controllers[key] = AdaptiveConcurrency(config.max_in_flight)
        return self.controllers[key]

    def judge(self, run: Run) -> Judge:
        """The run's one Judge, shared by its shards (and a Dask worker's threads). The run's folder
        holds its budget ledger, shared by its processes; the rate limits are the provider key's,
        shared by every run (see `KeyLimits`)."""
        key = judge_key(run)
        with self._judges_guard:  # two shards starting at once on a Dask worker's threads share one Judge
            if not run.warehouse:
                return self._outside(run, key)
            if key not in self.judges:
                self.judges[key] = self.build(run)
            return self.judges[key]

    def _outside(self, run: Run, key: tuple[str, tuple]) -> Judge:
        """A judge outside a warehouse (a golden, a rubric under review), kept for the next call
        with this rubric and these settings; at most OUTSIDE_KEPT, the least recently used go (evolve
        judges a new candidate rubric every step, and the process kept each one's judge)."""
        judge = self.outside.pop(key, None) or self.build(run)
        self.outside[key] = judge  # the most recently used last
        while len(self.outside) > OUTSIDE_KEPT:
            del self.outside[next(iter(self.outside))]
        return judge

    def stop(self, run_id: str) -> None:
        """The run is failing: its judges send no new call (those sent are waited for)."""
        for (judged, _), judge in list(self.judges.items()):
            if judged == run_id:
                judge.stopping = True

    def release(self, run_id: str) -> None:
        """The run is over in this process: its judges go (what they learned about the endpoint
        lives on in the process's clients and concurrency controllers)."""
        with self._judges_guard:
            for key in [k for k in self.judges if k[0] == run_id]:
                del self.judges[key]
            if run_id in self.frozen_for:  # what was frozen for it, garbage too, is the collector's again
                self.frozen_for.discard(run_id)
                gc.unfreeze()  # (a run still under way here meets the collector's full passes again: slower, not wrong)

    def build(self, run: Run) -> Judge:
        """A new Judge for the run, kept by the caller (`judge`, or an `rf.Judge` for its own life)."""
        config = run.judge
        if run.warehouse:
            # What lives now (modules, Prefect's machinery, the rubric) lives for the run: out of the
            # cyclic collector's sight, whose full passes over it paused every call for up to 0.5 s
            # (3.5 s of a 10k-cell run), until the run ends (`release`), which lets the collector
            # have the cycles frozen with it (a long-lived process kept them all, run after run).
            # A call outside a warehouse is short, and its judge kept: it freezes nothing.
            gc.freeze()
            self.frozen_for.add(run.run_id)
        spend = None
        if config.budget_usd is not None and run.warehouse:  # a run outside a warehouse has no ledger
            spend = Budget(config.budget_usd, price_of(config.model, price_table(config.prices)), run.folder.budget)
        limits = KeyLimits(
            provider(config.provider).base_url(config.resolved_base_url()),
            api_key(config),
            state_dir() / "limits",
            config.resolved_limits_url(),
        )
        limiter = RateLimiter(config.rpm, config.tpm, config.max_in_flight, limits, self.controller(config))
        return Judge(
            run.bundle,
            config,
            self.client(config),
            limiter,
            RetryBudget(config.retry_budget),
            run.run_id,
            run.corpus_id,
            spend,
            run.options.layout,
        )


def read_cells(plan_file: str | Path) -> list[Cell]:
    table = pq.read_table(plan_file)
    return [Cell(**row) for row in table.to_pylist()]


def land_tables(outcomes: list[Outcome]) -> tuple[pa.Table, pa.Table]:
    """Judgments and completions of finished cells as Arrow tables. Every text that came from the
    endpoint is scrubbed of secrets first (see tasks/judging/secrets.py), the keys read once."""
    keys = configured_keys()
    judgments = [_judgment_row(o.completion, r, keys) for o in outcomes for r in o.judgments]
    completions = [
        {
            **o.completion,
            "created_at": _ts(o.completion["created_at"]),
            "raw_response": scrub(o.completion["raw_response"], keys),
            "error": scrub(o.completion["error"], keys),
            "constraint_violations": sorted({v for r in o.judgments for v in r.violations}),
        }
        for o in outcomes
    ]
    return pa.Table.from_pylist(judgments, schema=JUDGMENT), pa.Table.from_pylist(completions, schema=COMPLETION)


def _judgment_row(c: dict, r, keys: list[str]) -> dict:
    return {
        "cell_key": c["cell_key"],
        "criterion_id": r.criterion_id,
        "run_id": c["run_id"],
        "corpus_id": c["corpus_id"],
        "text_id": c["text_id"],
        "text_sha256": c["text_sha256"],
        "rubric_hash": c["rubric_hash"],
        "judge_hash": c["judge_hash"],
        "sample": c["sample"],
        "unit_hash": c["unit_hash"],
        "value": None if r.value is None else json.dumps(r.value, ensure_ascii=False),
        "unit_score": r.unit_score,
        "rationale": scrub(r.rationale, keys),
        "evidence": [scrub(e, keys) for e in r.evidence],  # quotes of a text that may hold a key
        "evidence_verified": r.evidence_verified,
        "warnings": r.warnings,
        "status": r.status,
        "reason": scrub(r.reason, keys),
        "weighted_unit_score": r.weighted.unit_score if r.weighted else None,
        "value_probs": json.dumps(r.weighted.probs, ensure_ascii=False) if r.weighted else None,
        "prob_mass": r.weighted.mass if r.weighted else None,
        "confidence": r.confidence,
    }


def land(outcomes: list[Outcome], folder: RunFolder, part: str) -> Path:
    """Land finished cells as one part of the run's folder (its completions file commits it)."""
    return folder.land(*land_tables(outcomes), part)


def _ts(epoch: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).replace(tzinfo=None)


FLUSH_S = 2.0  # how often a running shard lands the cells it finished


@dataclass
class Begun:
    """A shard whose calls are under way: its finished cells wait in `done` until `flush` lands them."""

    shard: str
    cells: int
    folder: RunFolder
    run_id: str = ""
    done: deque = field(default_factory=deque)  # appended by the judge's loop thread, taken by flush
    parts: list[str] = field(default_factory=list)
    future: Future | None = None

    def flush(self, final: bool = False) -> None:
        """Land the finished cells as the next part (an empty part only to mark an empty shard)."""
        batch = []
        while self.done:
            batch.append(self.done.popleft())
        if batch or (final and not self.parts):
            try:
                self.parts.append(str(land(batch, self.folder, f"{self.shard}.p{len(self.parts):04d}")))
            except KeptInReserve:
                raise  # in the run's reserve: the next run lands it (never kept twice)
            except BaseException:
                self.done.extendleft(reversed(batch))  # not landed: kept for the next try
                raise
        if self.folder.room_spent():  # a part went into the reserve: stop buying what could not be kept
            raise OSError(
                errno.ENOSPC,
                "No space left on device (the run stopped: what it bought has landed or is in its reserve)",
                str(self.folder.landing.absolute()),
            )


def begin_shard(plan_file: str | Path, run: Run, on_done: Callable[[Outcome], None] | None = None) -> None:
    """Start judging one plan file's cells on this process's worker loop and return at once;
    `run_shard` of the same file waits for them. The flow begins the next shard this way while the
    current one lands and loads, so the endpoint never sits idle between shards."""
    worker = Worker.get()
    if str(plan_file) in worker.begun:
        return
    cells = read_cells(plan_file)
    begun = Begun(Path(plan_file).stem, len(cells), run.folder, run.run_id)

    def done(outcome: Outcome) -> None:
        begun.done.append(outcome)
        if on_done:
            on_done(outcome)

    judge = worker.judge(run)
    begun.future = worker.submit(traced_shard(judge_all(judge, cells, done), run.run_id, begun.shard, len(cells)))
    worker.begun[str(plan_file)] = begun


STOP_GRACE_S = 30.0  # how long a failing run waits for the calls it already sent


def abandon_shards(run_id: str) -> None:
    """The flow failed or was interrupted: send no new call, wait (at most STOP_GRACE_S) for the
    calls already sent, whose answers are paid for, then cancel what is left and land what finished
    (the next run loads it). Cancelling calls in flight lost answers already bought."""
    worker = Worker.get()
    mine = {plan: begun for plan, begun in worker.begun.items() if begun.run_id == run_id}
    if not mine:
        return
    worker.stop(run_id)
    deadline = time.monotonic() + STOP_GRACE_S
    for begun in mine.values():
        if begun.future is not None:
            with contextlib.suppress(Exception):
                begun.future.result(timeout=max(0.0, deadline - time.monotonic()))
            begun.future.cancel()
    for plan, begun in mine.items():
        with contextlib.suppress(Exception):  # still failing (a full disk): judged again by the next run
            begun.flush()
        del worker.begun[plan]


def end_run(run_id: str) -> None:
    """The run is over in this process (finished, failed or interrupted): shards still out are
    abandoned (see `abandon_shards`), and its judges let go, which a long-lived process (a notebook,
    `rubricflow serve`) kept for its life, each with its rendering and its spent budgets."""
    abandon_shards(run_id)
    Worker.get().release(run_id)


def run_shard(plan_file: str | Path, run: Run, on_done: Callable[[Outcome], None] | None = None) -> ShardResult:
    """Judge every cell of one plan file on this process's worker loop (or wait for the calls
    `begin_shard` started), landing finished cells of every begun shard every FLUSH_S seconds."""
    begin_shard(plan_file, run, on_done)
    worker = Worker.get()
    begun = worker.begun[str(plan_file)]
    assert begun.future is not None
    while True:
        try:
            outcomes = begun.future.result(timeout=FLUSH_S)
            break
        except TimeoutError:
            for other in list(worker.begun.values()):
                other.flush()
    begun.flush(final=True)
    del worker.begun[str(plan_file)]
    result = shard_result(begun.shard, outcomes, Path(begun.parts[-1]), begun.cells - len(outcomes))
    result.completions_files = list(begun.parts)
    return result


def shard_result(shard: str, outcomes: list[Outcome], target: Path, unjudged: int) -> ShardResult:
    ok = sum(1 for o in outcomes if o.completion["status"] == "ok")
    return ShardResult(
        shard=shard,
        cells=len(outcomes),
        ok=ok,
        failed=len(outcomes) - ok,
        calls=sum(o.completion["attempts"] for o in outcomes),
        prompt_tokens=sum(o.completion["prompt_tokens"] or 0 for o in outcomes),
        completion_tokens=sum(o.completion["completion_tokens"] or 0 for o in outcomes),
        completions_file=str(target),
        unjudged=unjudged,
    )
