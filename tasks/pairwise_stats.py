"""What a pairwise run says: per judge and criterion, consistency after the order swap, the
position-bias rate, the verdicts, and agreement with human preference labels (accuracy with and
without ties from `pairwise_summary`; Cohen's kappa over a/b/tie here, with statsmodels)."""

from __future__ import annotations

import duckdb
import numpy as np

from rubricflow.tasks.agreement import kappas
from rubricflow.warehouse import db

CODES = {"a": 0, "b": 1, "tie": 2}


def pairwise_report(con: duckdb.DuckDBPyConnection, corpus: str, rubric_hash: str) -> list[dict]:
    rows = db.fetch(con, "pairwise_report.sql", corpus=corpus, rubric=rubric_hash)
    for row in rows:
        pairs = [p for p in db.fetch(con, "pair_labels.sql", corpus=corpus, rubric=rubric_hash, judge=row["judge_hash"])
                 if p["criterion_id"] == row["criterion_id"]]
        row["kappa"] = label_kappa([p["verdict"] for p in pairs], [p["label"] for p in pairs])
    return rows


def label_kappa(verdicts: list[str], labels: list[str]) -> float | None:
    """Cohen's kappa of the final verdicts against the human labels (a, b, tie as categories)."""
    if len(verdicts) < 2:
        return None
    return kappas(np.array([CODES[v] for v in verdicts]), np.array([CODES[v] for v in labels]))[0]
