"""Every judgment the reward server buys, in a warehouse, for later calibration and A/B, as a
scoring run lands them: each rubric and judge the server serves is one run (its row, its rubric
registered), each rollout a text of its rubric's `reward.<rubric id>` corpus, and the judgments land through the run's
folder (`RunFolder.land`) and load in one transaction each (`steps.load_landed`), on the warehouse's
one writer (`Store`). No Prefect flow per request: a background thread lands what came in every
`FLUSH_S`, so a request never waits on the warehouse."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from rubricflow.rubrics.compiler import Bundle
from rubricflow.tasks.judging.cells import Outcome
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.shard import land_tables
from rubricflow.warehouse import analytics, db, steps
from rubricflow.warehouse.run_folder import RunFolder
from rubricflow.warehouse.sqlfiles import transaction
from rubricflow.warehouse.store import Store

CORPUS = "reward"
FLUSH_S = 1.0


@dataclass(frozen=True)
class Judged:
    """One rollout's text as judged and the outcomes of its calls."""

    text_id: str
    text: str
    input: str | None
    context: str | None
    outcomes: tuple[Outcome, ...]


class Ledger:
    def __init__(self, warehouse: str | Path):
        self.path = Path(warehouse)
        self.store = Store(self.path)
        self.runs: dict[tuple[str, str], str] = {}  # (rubric hash, judge hash) -> its run id
        self.corpora: dict[str, str] = {}  # run id -> the corpus its rollouts are texts of
        self.queue: list[tuple[Bundle, JudgeConfig, Judged]] = []
        self.recorded = 0
        self.lock = threading.Lock()
        self.flushing = threading.Lock()  # one landing at a time (the thread's and a caller's)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="rubricflow-reward-ledger", daemon=True)
        self.thread.start()

    def record(self, bundle: Bundle, config: JudgeConfig, judged: Judged) -> None:
        """Queue one rollout's judgments for the next landing."""
        with self.lock:
            self.queue.append((bundle, config, judged))

    def close(self) -> None:
        """Land what is queued and close each run as completed."""
        self.stopping.set()
        self.thread.join()
        self.flush()
        for run_id in self.runs.values():
            self.store.execute_write_fn(steps.finish_run, run_id, "completed", f"{self.recorded} rollouts judged")

    def _loop(self) -> None:
        while not self.stopping.wait(FLUSH_S):
            self.flush()

    def flush(self) -> None:
        """Land and load every queued rollout: per run, its texts and one landed part."""
        with self.flushing:
            with self.lock:
                queued, self.queue = self.queue, []
            self._land_all(queued)

    def _land_all(self, queued: list[tuple[Bundle, JudgeConfig, Judged]]) -> None:
        by_run: dict[str, list[Judged]] = {}
        for bundle, config, judged in queued:
            by_run.setdefault(self._run(bundle, config), []).append(judged)
        for run_id, rows in by_run.items():
            self._land(run_id, rows)
            self.recorded += len(rows)

    def _run(self, bundle: Bundle, config: JudgeConfig) -> str:
        """The run that holds this rubric's and judge's judgments, started on first use."""
        key = (bundle.hash, config.judge_hash())
        if key not in self.runs:
            run_id = f"reward-{time.strftime('%Y%m%d-%H%M%S')}-{bundle.hash[:8]}-{key[1][:8]}"
            self.store.execute_write_fn(_start, run_id, bundle, config)
            self.runs[key], self.corpora[run_id] = run_id, corpus_of(bundle)
        return self.runs[key]

    def _land(self, run_id: str, rows: list[Judged]) -> None:
        corpus = self.corpora[run_id]
        outcomes = [_as_run(o, run_id, corpus, row.text_id) for row in rows for o in row.outcomes]
        texts = pa.Table.from_pylist(
            [{"text_id": r.text_id, "text": r.text, "input": r.input, "context": r.context} for r in rows],
            schema=pa.schema(
                [("text_id", pa.string()), ("text", pa.string()), ("input", pa.string()), ("context", pa.string())]
            ),
        )
        folder = RunFolder.of(self.path, run_id)
        committed = folder.land(*land_tables(outcomes), f"part-{time.time_ns()}")
        self.store.execute_write_fn(_load, corpus, texts, committed)

    def stats(self) -> dict[str, Any]:
        return {"warehouse": str(self.path), "runs": sorted(self.runs.values()), "recorded": self.recorded}


def corpus_of(bundle: Bundle) -> str:
    """The corpus a rubric's rollouts are texts of: one per rubric id (its versions and judges
    compared on it), so a group form's rendered candidate sets are not listed under the rubric."""
    return f"{CORPUS}.{re.sub(r'[^A-Za-z0-9_-]', '-', bundle.id)}"[:128]  # no dot of its own: no '..' in a name


def _start(con: Any, run_id: str, bundle: Bundle, config: JudgeConfig) -> None:
    db.register_rubric(con, bundle, bundle.id)
    with transaction(con):
        steps.register_units(con, bundle, config.strategy)
        steps.start_run(
            con,
            run=run_id,
            corpus=corpus_of(bundle),
            rubric=bundle.hash,
            judge=config.judge_hash(),
            model=config.model,
            strategy=config.strategy,
            samples=config.samples,
            parameters=json.dumps(config.model_dump(mode="json") | {"reward_server": True}),
            planned=0,
            skipped=0,
            estimated_usd=None,
            budget_usd=config.budget_usd,
        )


def _load(con: Any, corpus: str, texts: pa.Table, committed: Path) -> None:
    with transaction(con):
        steps.load_texts(con, corpus, texts, "reward-server")
    steps.load_landed(con, committed)
    analytics.refresh_in_batches(con)  # every flush (at most one a second): the views never lag the rewards


def _as_run(outcome: Outcome, run_id: str, corpus: str, text_id: str) -> Outcome:
    """The outcome as the run's cell: its run, corpus, text and a cell key of its own."""
    c = outcome.completion
    key = hashlib.sha256(
        "|".join([corpus, text_id, c["rubric_hash"], c["judge_hash"], c["unit_hash"] or "", str(c["sample"])]).encode()
    ).hexdigest()
    completion = c | {"run_id": run_id, "corpus_id": corpus, "text_id": text_id, "cell_key": key}
    return dataclasses.replace(outcome, completion=completion)
