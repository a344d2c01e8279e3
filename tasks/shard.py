"""Judge one shard of planned cells and land its results as Parquet, atomically.

Shards never touch the warehouse: they read a plan file and write two landing files, the
judgments first and the completions last, each through a temp file and a rename. A completions
file on disk means its shard is complete; the loader takes only those.
"""

from __future__ import annotations

import asyncio
import atexit
import datetime as dt
import json
import os
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.parquet as pq
from openai import AsyncOpenAI, DefaultAioHttpClient

from rubricflow.rubrics.compiler import Bundle
from rubricflow.warehouse.rows import COMPLETION, JUDGMENT

from .config import JudgeConfig, api_key
from .costs import Budget, price_of, price_table
from .judge import Cell, Judge, Outcome, RetryBudget, judge_all
from .ratelimit import RateLimiter
from .secrets import scrub


@dataclass
class ShardResult:
    shard: str
    cells: int
    ok: int
    failed: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    completions_file: str
    unjudged: int = 0  # cells left out because the run's budget was spent
    waiting: int = 0  # cells in a batch not final yet (a later run collects it)
    resumed: int = 0  # cells of an earlier run's batch this run collected


class Worker:
    """One per process: a background event loop with one HTTP client per endpoint, and one Judge per
    run (its rendered prompts, rate limiter, retry budget and output-mode fallback), reused by every
    shard of that run."""

    _instance: "Worker | None" = None
    _guard = threading.Lock()

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="rubricflow-judge", daemon=True)
        self.thread.start()
        self.clients: dict[tuple[str | None, float, str], AsyncOpenAI] = {}
        self.judges: dict[str, Judge] = {}

    @classmethod
    def get(cls) -> "Worker":
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
        key = (config.resolved_base_url(), config.resolved_timeout_s(), api_key())  # a fixed key gets a new client
        if key not in self.clients:
            self.clients[key] = AsyncOpenAI(base_url=key[0], api_key=key[2], max_retries=0, timeout=key[1],
                                            http_client=DefaultAioHttpClient(timeout=key[1]))
        return self.clients[key]

    def judge(self, bundle: Bundle, config: JudgeConfig, run_id: str, corpus_id: str,
              run_folder: Path | None = None) -> Judge:
        """`run_folder` holds what the run's processes share: the budget ledger and, with
        several processes, the rate-limit quota files."""
        if run_id not in self.judges:
            spend = None
            if config.budget_usd is not None and run_folder is not None:
                spend = Budget(config.budget_usd, price_of(config.model, price_table(config.prices)),
                               run_folder / "budget.json")
            quota = run_folder / "quota" if run_folder is not None and config.shared_limits else None
            self.judges[run_id] = Judge(bundle, config, self.client(config),
                                        RateLimiter(config.rpm, config.tpm, config.max_in_flight, quota),
                                        RetryBudget(config.retry_budget), run_id, corpus_id, spend)
        return self.judges[run_id]


def read_cells(plan_file: str | Path) -> list[Cell]:
    table = pq.read_table(plan_file)
    return [Cell(**row) for row in table.to_pylist()]


def _write_atomic(table: pa.Table, target: Path) -> None:
    """All or nothing: a failed write (a full disk) leaves no partial file behind."""
    tmp = target.with_name(target.name + ".tmp")
    try:
        pq.write_table(table, tmp, compression="zstd")
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def land(outcomes: list[Outcome], landing_dir: Path, shard: str) -> Path:
    """Write judgments, then completions (the shard's commit marker). Every text that came from
    the endpoint is scrubbed of secrets first (see tasks/secrets.py)."""
    judgments = []
    for o in outcomes:
        c = o.completion
        for r in o.judgments:
            judgments.append({
                "cell_key": c["cell_key"], "criterion_id": r.criterion_id, "run_id": c["run_id"],
                "corpus_id": c["corpus_id"], "text_id": c["text_id"], "text_sha256": c["text_sha256"],
                "rubric_hash": c["rubric_hash"],
                "judge_hash": c["judge_hash"], "sample": c["sample"],
                "value": None if r.value is None else json.dumps(r.value, ensure_ascii=False),
                "unit_score": r.unit_score, "rationale": scrub(r.rationale), "evidence": r.evidence,
                "evidence_verified": r.evidence_verified, "warnings": r.warnings, "status": r.status,
                "reason": scrub(r.reason),
                "weighted_unit_score": r.weighted.unit_score if r.weighted else None,
                "value_probs": json.dumps(r.weighted.probs, ensure_ascii=False) if r.weighted else None,
                "prob_mass": r.weighted.mass if r.weighted else None,
            })
    completions = [{**o.completion, "created_at": _ts(o.completion["created_at"]),
                    "raw_response": scrub(o.completion["raw_response"]), "error": scrub(o.completion["error"])}
                   for o in outcomes]
    landing_dir.mkdir(parents=True, exist_ok=True)
    _write_atomic(pa.Table.from_pylist(judgments, schema=JUDGMENT), landing_dir / f"{shard}.judgments.parquet")
    target = landing_dir / f"{shard}.completions.parquet"
    _write_atomic(pa.Table.from_pylist(completions, schema=COMPLETION), target)
    return target


def _ts(epoch: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).replace(tzinfo=None)


def run_shard(plan_file: str | Path, landing_dir: str | Path, bundle: Bundle, config: JudgeConfig,
              run_id: str, corpus_id: str, on_done: Callable[[Outcome], None] | None = None) -> ShardResult:
    """Judge every cell of one plan file on this process's worker loop, then land the results."""
    worker = Worker.get()
    cells = read_cells(plan_file)
    shard = Path(plan_file).stem

    async def go() -> list[Outcome]:
        return await judge_all(worker.judge(bundle, config, run_id, corpus_id, Path(landing_dir).parent), cells, on_done)

    outcomes = worker.submit(go()).result()
    target = land(outcomes, Path(landing_dir), shard)
    return shard_result(shard, outcomes, target, len(cells) - len(outcomes))


def shard_result(shard: str, outcomes: list[Outcome], target: Path, unjudged: int) -> ShardResult:
    ok = sum(1 for o in outcomes if o.completion["status"] == "ok")
    return ShardResult(
        shard=shard, cells=len(outcomes), ok=ok, failed=len(outcomes) - ok,
        calls=sum(o.completion["attempts"] for o in outcomes),
        prompt_tokens=sum(o.completion["prompt_tokens"] or 0 for o in outcomes),
        completion_tokens=sum(o.completion["completion_tokens"] or 0 for o in outcomes),
        completions_file=str(target), unjudged=unjudged,
    )
