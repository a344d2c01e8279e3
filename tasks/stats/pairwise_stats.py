"""What a pairwise run says: per judge and criterion, consistency after the order swap, the
position-bias rate, the verdicts, and agreement with human preference labels (accuracy with and
without ties from `pairwise_summary`; Cohen's kappa over a/b/tie here, with statsmodels)."""

from __future__ import annotations

import duckdb
import numpy as np

from rubricflow.tasks.stats.agreement import kappas
from rubricflow.warehouse import db

CODES = {"a": 0, "b": 1, "tie": 2}


def pairwise_report(con: duckdb.DuckDBPyConnection, corpus: str, rubric_hash: str) -> list[dict]:
    rows = db.fetch(con, "pairwise_report.sql", corpus=corpus, rubric=rubric_hash)
    for row in rows:
        pairs = [
            p
            for p in db.fetch(con, "pair_labels.sql", corpus=corpus, rubric=rubric_hash, judge=row["judge_hash"])
            if p["criterion_id"] == row["criterion_id"]
        ]
        row["kappa"] = label_kappa([p["verdict"] for p in pairs], [p["label"] for p in pairs])
    return rows


def label_kappa(verdicts: list[str], labels: list[str]) -> float | None:
    """Cohen's kappa of the final verdicts against the human labels (a, b, tie as categories)."""
    if len(verdicts) < 2:
        return None
    return kappas(np.array([CODES[v] for v in verdicts]), np.array([CODES[v] for v in labels]))[0]


def bradley_terry(outcomes: list[tuple[str, str, str]], resamples: int = 200, seed: int = 0) -> list[dict]:
    """A Bradley-Terry ranking of the systems from (system_a, system_b, verdict) outcomes, a tie
    counting half a win each way: strengths by maximum likelihood (scipy), shown on the Elo-like
    scale 400*log10, centred on 0, with a bootstrap 95% interval over the outcomes (sorted first:
    the seeded resampling depends on their order, which SQL does not fix)."""
    outcomes = sorted(outcomes)
    systems = sorted({s for a, b, _ in outcomes for s in (a, b)})
    if len(systems) < 2:
        return []
    point = _bt_fit(outcomes, systems)
    rng = np.random.default_rng(seed)
    draws = np.array(
        [
            _bt_fit([outcomes[i] for i in rng.integers(0, len(outcomes), len(outcomes))], systems)
            for _ in range(resamples)
        ]
    )
    low, high = np.percentile(draws, [2.5, 97.5], axis=0)
    order = np.argsort(-point)
    return [
        {
            "system": systems[i],
            "rating": float(point[i]),
            "low": float(low[i]),
            "high": float(high[i]),
            "comparisons": sum(systems[i] in (a, b) for a, b, _ in outcomes),
        }
        for i in order
    ]


def _bt_fit(outcomes: list[tuple[str, str, str]], systems: list[str]) -> np.ndarray:
    from scipy.optimize import minimize

    index = {s: i for i, s in enumerate(systems)}
    a = np.array([index[x] for x, _, _ in outcomes])
    b = np.array([index[y] for _, y, _ in outcomes])
    win = np.array([{"a": 1.0, "b": 0.0}.get(v, 0.5) for _, _, v in outcomes])

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        """The negative log-likelihood (a small ridge keeps unbeaten systems finite) and its gradient:
        without it the optimiser estimated the gradient by differences, several calls a step."""
        diff = theta[a] - theta[b]
        value = np.sum(np.logaddexp(0, -diff) * win + np.logaddexp(0, diff) * (1 - win)) + 1e-3 * np.sum(theta**2)
        slope = 1 / (1 + np.exp(-diff)) - win  # d value / d diff
        n = len(theta)
        return float(value), np.bincount(a, slope, n) - np.bincount(b, slope, n) + 2e-3 * theta

    theta = minimize(loss, np.zeros(len(systems)), jac=True, method="L-BFGS-B").x
    return (theta - theta.mean()) * 400 / np.log(10)
