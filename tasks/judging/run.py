"""A scoring run as one value: what every task of the run needs to know about it, made once by the
flow and passed whole (to the prepare, judge, land and load steps, to the Batch API and to a Dask
cluster's workers), instead of the same six arguments re-listed in every signature.

A run-wide setting is one field of `RunOptions` (tasks/judging/run_options.py), which the run
carries whole: it reaches every task with the run, and the run's recorded parameters
(`runs.parameters`) with `Run.parameters`. `RunSummary` is what a
finished run did (the flow returns it as a dict; `rf.Run` is it, read back in Python).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rubricflow.rubrics.compiler import Bundle
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.run_options import RunOptions
from rubricflow.warehouse.run_folder import RunFolder

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True)
class Run:
    """One scoring run: which work (corpus, rubric, judge), where (warehouse, folder), and its
    run-wide settings (`options`)."""

    run_id: str
    corpus_id: str
    warehouse: str
    rubric: str  # the rubric as the user named it (a file or a library name)
    bundle: Bundle
    judge: JudgeConfig
    texts: tuple[str, ...] | None = None  # only these texts' cells (a sequential batch, an escalation)
    options: RunOptions = field(default_factory=RunOptions)
    strategy_from: str = "option"  # where judge.strategy came from: option, rubric or default (recorded)

    @classmethod
    def of(cls, bundle: Bundle, judge: JudgeConfig, **fields: Any) -> Run:
        """A run of `bundle` with `judge` as it judges that rubric (its execution strategy where the
        user gave none: JudgeConfig.for_rubric), recording where the strategy came from."""
        strategy_from = judge.strategy_source(bundle.rubric)
        return cls(bundle=bundle, judge=judge.for_rubric(bundle.rubric), strategy_from=strategy_from, **fields)

    @classmethod
    def outside(cls, name: str, corpus_id: str, bundle: Bundle, judge: JudgeConfig) -> Run:
        """Judging outside any warehouse (a golden, `rf.Judge`): no folder, so no budget ledger. The
        id names the rubric and every judge setting given (the process keeps a Judge per id and
        client: `shard.judge_key`, whose client key adds what the environment decides, the URL and
        key variables): two endpoints sharing one id sent every call to the first."""
        settings = judge.model_dump_json().encode()
        run_id = f"{name}-{bundle.hash[:12]}-{hashlib.sha256(settings).hexdigest()[:16]}"
        return cls.of(bundle, judge, run_id=run_id, corpus_id=corpus_id, warehouse="", rubric=bundle.id)

    @property
    def folder(self) -> RunFolder:
        return RunFolder.of(self.warehouse, self.run_id)

    @cached_property
    def judge_hash(self) -> str:
        return self.judge.judge_hash()

    def parameters(self) -> dict[str, Any]:
        """What the run records as its parameters: the judge's settings and every run-wide setting."""
        used = {"strategy_from": self.strategy_from}
        return self.judge.model_dump(mode="json") | self.options.model_dump(mode="json") | used


@dataclass(frozen=True)
class RunSummary:
    """What one finished scoring run did, as the flow summarised it; `text_scores()` reads its
    verdicts back from `warehouse` (the flow's dict of it has every field)."""

    run_id: str
    corpus_id: str
    rubric_id: str
    rubric_hash: str
    judge_hash: str
    planned_cells: int
    skipped_cells: int
    judged_cells: int
    ok_cells: int
    failed_cells: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    recovered_cells: int
    wall_s: float
    unjudged_cells: int = 0  # left for a later run: the budget was spent
    estimated_usd: float | None = None
    adopted_cells: int = 0  # of skipped_cells: copied from another rubric version's unchanged units
    deferred_cells: int = 0  # left for the next run by the run's options (max_cells)
    segmented_transcripts: int = 0  # longer than the judge's context: judged in segments (rubric long_transcripts)
    transcript_segments: int = 0  # their segments, one judge call each per criterion
    cut_transcripts: int = 0  # longer than the judge's context: judged on the rubric's stated view only
    warehouse: Path = field(default=Path(), compare=False)

    def as_dict(self) -> dict[str, Any]:
        """The summary as the flow returns it (JSON-able; the warehouse is the caller's)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "warehouse"}

    @property
    def status(self) -> str:
        from rubricflow.warehouse import db

        with db.reader(self.warehouse) as con:
            return str(db.fetch(con, "run_report.sql", run=self.run_id)[0]["status"])

    def text_scores(self) -> pl.DataFrame:
        """Every text's score of this run's rubric and judge on its corpus (as `Warehouse.text_scores`)."""
        import polars as pl

        from rubricflow.warehouse import db
        from rubricflow.warehouse.sqlfiles import statements

        params = {"corpus": self.corpus_id, "rubric": self.rubric_hash, "judge": self.judge_hash}
        with db.reader(self.warehouse) as con:
            [(statement, used)] = statements(con, "api_text_scores.sql", params)
            return pl.DataFrame(pl.from_arrow(db.portable(con.sql(statement, params=used)).to_arrow_table()))

    def __repr__(self) -> str:
        return (
            f"<Run {self.run_id} {self.rubric_id} on {self.corpus_id}: {self.judged_cells} cells judged "
            f"({self.ok_cells} ok, {self.failed_cells} failed), {self.skipped_cells} reused, {self.calls} calls>"
        )
