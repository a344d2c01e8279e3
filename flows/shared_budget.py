"""One --budget for a command that scores in several runs (a cascade's calibration sample and
levels, a sequential A/B's batches): each run may spend only what the command's earlier runs left
(their cost read back from the warehouse's `run_costs`), so the command as a whole stops at the cap,
as `score` does, instead of every run getting the whole budget again."""

from __future__ import annotations

from rubricflow.flows.score import check_where, score_corpus
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.warehouse import db


class SharedBudget:
    def __init__(self, warehouse_path: str, *judges: dict | None):
        """`judges`: the JudgeConfig fields of every run the command will start; where they run
        (a cluster, --workers, --budget, --batch) is refused now, as `score` refuses it, before any
        call, and not only once a run has texts left to judge."""
        for judge in judges:
            check_where(JudgeConfig(**(judge or {})), 0)
        self.warehouse_path = warehouse_path
        self.runs: list[str] = []
        self.stopped = False

    def spent(self) -> float:
        """USD the command's runs have cost so far."""
        if not self.runs:
            return 0.0
        with db.reader(self.warehouse_path) as con:
            return float(db.fetch(con, "runs_spent.sql", runs=self.runs)[0]["usd"])

    def exhausted(self) -> bool:
        """Whether the budget stopped a run of the command (a sequential A/B stops there, undecided,
        to be continued later with a larger budget)."""
        return self.stopped

    def score(self, corpus_id: str, rubric: str, judge: dict | None, texts: list[str]) -> dict:
        """score_corpus on `texts` with the budget the earlier runs left (none asked: no cap)."""
        judge = dict(judge or {})
        if judge.get("budget_usd") is not None:
            judge["budget_usd"] = max(float(judge["budget_usd"]) - self.spent(), 0.0)
        summary = score_corpus(corpus_id, rubric, self.warehouse_path, JudgeConfig(**judge), texts=texts)
        self.runs.append(summary["run_id"])
        self.stopped |= judge.get("budget_usd") is not None and summary["unjudged_cells"] > 0
        return summary
