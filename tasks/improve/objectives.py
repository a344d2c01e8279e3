"""The objectives of a multi-objective `improve evolve`, as seed 001 (rubrify) defines them:
`agreement`, 1 - the mean absolute error between the judge's score and the human target, both on the
unit scale (the target min-max scaled over the corpus's labels; rubrify's evolution, `per_criterion`:
each criterion's own labels on its scale's range, the criteria's weighted mean); `consistency`, 1 - the
mean coefficient of variation of a criterion's unit scores across re-asks (needs a judge with samples
>= 2); and `discrimination`, the normalized entropy of the criteria's unit scores in ten bins (0: one
score for everything, 1: an even spread). And how a candidate is accepted: no objective falls by more
than its tolerance, and either the weighted sum rises (`weighted`) or the candidate is not dominated
and is better somewhere (`pareto`)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from rubricflow.errors import InputError

NAMES = ("agreement", "consistency", "discrimination")
# A figure that moved by less than this moved by float noise (a sum in another order), not a change:
# every accept / refuse / fall decision of the improvement loop compares through it.
NOISE = 1e-9
Values = dict[str, float | None]


@dataclass(frozen=True)
class Objectives:
    weights: dict[str, float] = field(default_factory=lambda: {"agreement": 1.0})
    select: Literal["weighted", "pareto"] = "weighted"
    tolerances: dict[str, float] = field(default_factory=dict)  # how far an objective may fall; absent: any

    def __post_init__(self) -> None:
        unknown = sorted((set(self.weights) | set(self.tolerances)) - set(NAMES))
        if unknown:
            raise InputError(f"unknown objective {', '.join(unknown)}; choose from {', '.join(NAMES)}")
        if not self.weights or any(w < 0 or not math.isfinite(w) for w in self.weights.values()):
            raise InputError("objective weights must be finite numbers >= 0, at least one objective named")
        if self.select not in ("weighted", "pareto"):
            raise InputError(f"--select {self.select!r}: choose weighted or pareto")

    @property
    def default(self) -> bool:
        return self == Objectives()

    def key(self) -> str:
        """What the evolution id adds for these settings (empty for the single-objective default)."""
        if self.default:
            return ""
        return json.dumps([sorted(self.weights.items()), self.select, sorted(self.tolerances.items())])


def compute(rows: list[dict], per_criterion: bool = False) -> Values:
    """Every objective on one split's rows (text score, human target and its range, unit scores, CV,
    each labelled criterion's error); `per_criterion`: agreement as rubrify's evolution computes it."""
    agree = criterion_agreement(rows) if per_criterion else agreement(rows)
    return {"agreement": agree, "consistency": consistency(rows), "discrimination": discrimination(rows)}


def agreement(rows: list[dict]) -> float | None:
    """1 - mean |judge score - human target| on the unit scale (None: no rows, or humans all agree)."""
    if not rows or rows[0]["human_max"] == rows[0]["human_min"]:
        return None
    low, high = rows[0]["human_min"], rows[0]["human_max"]
    errors = [abs(r["score"] - (r["human"] - low) / (high - low)) for r in rows]
    return float(1 - np.mean(errors))


def criterion_agreement(rows: list[dict]) -> float | None:
    """Seed 001's "normalized absolute error vs. human annotations (1 - mean error, scaled 0-1)": per
    criterion, 1 - the mean |human - judge| over its scale's range (the SQL's `error`), then the mean
    weighted by the criteria's weights (None: no criterion labelled). A judge that gives the humans'
    scores gets 1.0, whether or not the humans agree with each other."""
    errors: dict[str, list[float]] = {}
    weights: dict[str, float] = {}
    for cell in (c for r in rows for c in r["criteria"] or []):
        errors.setdefault(cell["criterion_id"], []).append(cell["error"])
        weights[cell["criterion_id"]] = cell["weight"]
    if not errors:
        return None
    scores = [1 - float(np.mean(e)) for e in errors.values()]
    given = [weights[c] for c in errors]
    return float(np.average(scores, weights=given if sum(given) > 0 else None))


def consistency(rows: list[dict]) -> float | None:
    """1 - the mean coefficient of variation across re-asks (floored at 0); None with one sample."""
    cvs = [r["cv"] for r in rows if r["cv"] is not None and (r["samples"] or 0) >= 2]
    return None if not cvs else float(max(0.0, 1 - np.mean(cvs)))


BINS = 10  # rubrify's buckets for the score distribution's entropy


def discrimination(rows: list[dict]) -> float | None:
    """The entropy of the criteria's unit scores in BINS equal bins over 0..1, over log(BINS)."""
    units = [u for r in rows for u in (r["units"] or []) if u is not None]
    if not units:
        return None
    counts = np.bincount(np.minimum((np.array(units) * BINS).astype(int), BINS - 1), minlength=BINS)
    shares = counts[counts > 0] / len(units)
    return float(-(shares * np.log2(shares)).sum() / np.log2(BINS))


def weighted(values: Values, weights: dict[str, float]) -> float | None:
    """The weighted mean of the defined objectives (None if none is defined)."""
    named = [(w, v) for n, w in weights.items() if (v := values.get(n)) is not None]
    total = sum(w for w, _ in named)
    return None if not named or total == 0 else sum(w * v for w, v in named) / total


def _at(values: Values, name: str) -> float:
    """An objective's value, an undefined one counting as the worst."""
    value = values.get(name)
    return -math.inf if value is None else value


def dominates(a: Values, b: Values, names: list[str]) -> bool:
    """a is at least as good as b on every objective and better on one (undefined counts as worst)."""
    pairs = [(_at(a, n), _at(b, n)) for n in names]
    return all(x >= y for x, y in pairs) and any(x > y + NOISE for x, y in pairs)


def refusal(before: Values, after: Values, settings: Objectives) -> str | None:
    """None if the candidate is accepted on these validation figures; else why not."""
    for name, tolerance in sorted(settings.tolerances.items()):
        b, a = before.get(name), after.get(name)
        if b is not None and (a is None or a < b - tolerance - NOISE):
            return f"{name} fell beyond its tolerance {tolerance:g} ({b:.3f} -> {'n/a' if a is None else f'{a:.3f}'})"
    names = list(settings.weights)
    if settings.select == "pareto":
        better = [n for n in names if _at(after, n) > _at(before, n) + NOISE]
        if better and not dominates(before, after, names):
            return None
        return "not better on any objective (dominated by its parent)"
    wb, wa = weighted(before, settings.weights), weighted(after, settings.weights)
    if wa is not None and (wb is None or wa > wb + NOISE):
        return None
    return "the weighted objectives did not improve"


def front(points: dict[str, Values], names: list[str]) -> list[str]:
    """The versions no other version dominates (the Pareto front), in the order given."""
    return [k for k, v in points.items() if not any(dominates(o, v, names) for j, o in points.items() if j != k)]
