"""The labelling plan the labels were drawn under, as `estimate` weights them: every planned text's
probability of being labelled, for the active-inference estimator (`ppi.active_mean`, Zrnic and
Candes 2024), which weights each label by the inverse of the probability it had when drawn (a
uniform plan is a simple random sample: PPI++ as without a plan). A plan
labelled only in part counts as its first k of m chosen texts: the queue is in a random order, so
those are a random k of the m, and each planned text was labelled with probability pi * k / m."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import numpy as np

from rubricflow.tasks.stats.labelling_plan import PlanError
from rubricflow.warehouse import db


@dataclass(frozen=True)
class DrawnUnder:
    plan_id: str
    inclusion: dict[str, float]  # every text of the plan: P(chosen)
    chosen: frozenset[str]

    @property
    def uniform(self) -> bool:
        """Every text equally likely: a simple random sample, for which PPI++ is the estimator."""
        values = self.inclusion.values()
        return max(values) - min(values) <= 1e-12


def load_plan(con: duckdb.DuckDBPyConnection, corpus: str, rubric_hash: str, plan: str) -> DrawnUnder | None:
    """The plan asked for (`latest`, an id); None for `none` or when the rubric version has no plan."""
    if plan == "none":
        return None
    rows = db.fetch(con, "plan_weights.sql", corpus=corpus, rubric=rubric_hash, plan=plan)
    if not rows:
        if plan != "latest":
            raise PlanError(f"no labelling plan {plan!r} for this rubric version on corpus {corpus!r}")
        return None
    inclusion = {r["text_id"]: r["inclusion_prob"] for r in rows}
    return DrawnUnder(rows[0]["plan_id"], inclusion, frozenset(r["text_id"] for r in rows if r["chosen"]))


def labelled_with(plan: DrawnUnder, texts: list[str], labelled: np.ndarray, what: str) -> np.ndarray:
    """Each text's probability of having been labelled under the plan (`texts`: planned texts;
    `labelled`: the positions labelled); a label on a text the plan did not choose is refused."""
    outside = [texts[i] for i in labelled if texts[i] not in plan.chosen]
    if outside:
        raise PlanError(
            f"{what}: {len(outside)} labelled texts are not in the labelling plan {plan.plan_id!r} (e.g. "
            f"{outside[0]!r}); its inclusion probabilities cannot weight them (--plan none ignores the plan)"
        )
    share = len(labelled) / sum(t in plan.chosen for t in texts)
    return np.array([plan.inclusion[t] for t in texts]) * share
