"""Which texts to label for a budget (`rubricflow labels plan`): uniformly, or actively, with each
text's probability of being chosen growing with the judge's uncertainty about it (Zrnic and Candes
2024), mixed with the uniform probability so that no text is nearly impossible to draw. Every text's
inclusion probability is recorded: `estimate` weights each label by its inverse, so the figures stay
unbiased however the texts were chosen."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import numpy as np

from rubricflow.errors import InputError
from rubricflow.warehouse import db

UNIFORM_SHARE = 0.3  # of each active probability: keeps 1/pi weights (and the interval) bounded


class PlanError(InputError):
    """A plan that cannot be made: no judged texts, a budget out of range."""


@dataclass
class Plan:
    plan_id: str
    mode: str
    texts: list[str]  # every judged text
    inclusion: np.ndarray  # P(chosen) of each
    chosen: list[str]  # in labelling order


def inclusion_probabilities(uncertainty, budget: int, active: bool) -> np.ndarray:
    """Probabilities summing to `budget`, none above 1: equal, or proportional to the uncertainty
    mixed with equal ones (UNIFORM_SHARE), capped at 1 with the excess spread over the others."""
    u = np.asarray(uncertainty, dtype=float)
    n = len(u)
    equal = np.full(n, budget / n)
    if not active or u.sum() <= 0:
        return equal
    pi = (1 - UNIFORM_SHARE) * budget * u / u.sum() + UNIFORM_SHARE * equal
    for _ in range(n):  # cap at 1; the capped texts are certain, the rest share what is left
        capped = pi >= 1
        if not (pi > 1 + 1e-12).any():
            break
        rest = budget - capped.sum()
        free = ~capped
        pi = np.where(capped, 1.0, pi * rest / pi[free].sum())
    return np.minimum(pi, 1.0)


def systematic_sample(pi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Exactly round(sum(pi)) positions, each chosen with probability pi (systematic sampling in a
    random order), returned in that random order (the labelling queue)."""
    order = rng.permutation(len(pi))
    cumulative = np.cumsum(pi[order])
    points = rng.uniform(0, 1) + np.arange(int(round(cumulative[-1])))
    picked = np.searchsorted(cumulative, points, side="left")
    return order[np.unique(np.minimum(picked, len(pi) - 1))]


def make_plan(
    con: duckdb.DuckDBPyConnection, corpus: str, rubric_hash: str, judge_hash: str, budget: int, seed: int, active: bool
) -> Plan:
    """Choose the texts and record the plan (every judged text with its inclusion probability)."""
    rows = db.fetch_tuples(con, "plan_uncertainty.sql", corpus=corpus, rubric=rubric_hash, judge_hash=judge_hash)
    if not rows:
        raise PlanError(f"no texts of corpus {corpus!r} were scored by this judge: score them before planning labels")
    if not 0 < budget <= len(rows):
        raise PlanError(f"--budget must be between 1 and the {len(rows)} judged texts of {corpus!r}, not {budget}")
    texts = [r[0] for r in rows]
    pi = inclusion_probabilities([r[1] for r in rows], budget, active)
    picked = systematic_sample(pi, np.random.default_rng(seed))
    mode = "active" if active else "uniform"
    plan = Plan(f"{mode}-{budget}-s{seed}-{rubric_hash[:8]}", mode, texts, pi, [texts[i] for i in picked])
    _record(con, plan, corpus, rubric_hash, judge_hash, seed, budget)
    return plan


def _record(con, plan: Plan, corpus: str, rubric_hash: str, judge_hash: str, seed: int, budget: int) -> None:
    import pyarrow as pa

    position = {t: i + 1 for i, t in enumerate(plan.chosen)}
    table = pa.table(
        {
            "text_id": plan.texts,
            "inclusion_prob": plan.inclusion.tolist(),
            "chosen": [t in position for t in plan.texts],
            "position": [position.get(t) for t in plan.texts],
        }
    )
    con.register("incoming_plan", table)
    try:
        with db.transaction(con):
            db.run_sql(con, "record_plan.sql", plan=plan.plan_id, corpus=corpus, rubric=rubric_hash,
                       judge_hash=judge_hash, mode=plan.mode, seed=seed, budget=budget)  # fmt: skip
    finally:
        con.unregister("incoming_plan")
