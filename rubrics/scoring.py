"""Reference scoring in Python: from per-criterion judge values to the rubric's verdict.

The warehouse computes the same numbers in SQL over millions of judgments; this module scores
goldens and is the specification the SQL views are tested against.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any, overload

from .model import SCORE_DIGITS, Criterion, Rubric

DEFAULT_PASS = 0.5  # a criterion "meets" when its unit score reaches this (binary: value 1)


@overload
def fixed(x: float) -> float: ...
@overload
def fixed(x: None) -> None: ...
def fixed(x: float | None) -> float | None:
    """A score at the stated precision (SCORE_DIGITS decimals), so that the same judgments give the
    same bits whatever order a sum adds them in: 0.7499999999999999 and 0.75 are one score, and one
    label. Python's round() and DuckDB's round(x, 9) (warehouse/sql/analytics_refresh.sql) agree."""
    return None if x is None else round(x, SCORE_DIGITS)


@dataclass(frozen=True)
class Verdict:
    score: float | None  # None when nothing was scored
    label: str | None
    passed: bool | None
    disqualified: tuple[str, ...]
    coverage: float  # scored leaves / planned leaves


def unit_scores(rubric: Rubric, values: Mapping[str, Any]) -> dict[str, float | None]:
    """Map raw judge values to unit scores; a missing criterion stays None (unscored, never 0)."""
    out: dict[str, float | None] = {}
    for c in rubric.criteria:
        out[c.id] = fixed(c.scale.unit(values[c.id])) if values.get(c.id) is not None else None
    return out


def meets(c: Criterion, unit: float) -> bool:
    return unit >= (c.pass_threshold if c.pass_threshold is not None else DEFAULT_PASS)


@dataclass(frozen=True)
class _Child:
    weight: float
    value: float
    met: bool  # criterion: its pass threshold reached; group: value >= 0.5
    points: float | None


def _combine(method: str, items: list[_Child]) -> float | None:
    """Combine the scored children of one node (at the stated precision); unscored children are left
    out, never counted as 0."""
    return fixed(_combined(method, items))


TICKS = 10**SCORE_DIGITS  # a score's unit at the stated precision: a billionth


def ticks(x: float) -> int:
    """`x` as a whole number of billionths, as views.sql's `ticks` macro computes it (the same
    double operations): sums of these are exact, so they do not depend on the order of addition."""
    return math.floor(x * 1e9 + 0.5)


def tick_ratio(n: int, d: int) -> float | None:
    """n / d billionths, rounded half up, as a score (views.sql's `tick_ratio`): exact integer
    arithmetic, so a mean that ends in a 5 at the tenth decimal rounds the same way every time (a
    double sum rounded it by the order DuckDB's threads added the rows in)."""
    return float((2 * n + d) // (2 * d)) / 1e9 if d > 0 else None


def _combined(method: str, items: list[_Child]) -> float | None:
    if not items:
        return None
    if method == "weighted_mean":
        total = sum(ticks(i.weight) for i in items)
        return tick_ratio(sum(ticks(i.weight) * ticks(i.value) for i in items), total)
    if method == "weighted_sum":
        return tick_ratio(sum(ticks(i.weight) * ticks(i.value) for i in items), TICKS)
    if method == "min":
        return min(i.value for i in items)
    if method == "max":
        return max(i.value for i in items)
    if method == "all":
        return float(all(i.met for i in items))
    if method == "any":
        return float(any(i.met for i in items))
    if method == "points":
        possible = sum(ticks(i.points) for i in items if i.points is not None and i.points > 0)
        earned = sum(ticks(i.points) for i in items if i.points is not None and i.met)
        share = tick_ratio(earned * TICKS, possible)
        return None if share is None else min(1.0, max(0.0, share))
    raise ValueError(f"unknown aggregation {method!r}")


def aggregate(rubric: Rubric, units: Mapping[str, float | None], genre: str | None = None) -> float | None:
    """The root's value: groups nest to any depth, each combining its scored children."""
    active = {c.id for c in rubric.active_criteria(genre)}
    groups = {g.id: g for g in rubric.groups}
    criteria = {c.id: c for c in rubric.criteria}
    weights = {c.id: c.weight for c in rubric.criteria} | {g.id: g.weight for g in rubric.groups}

    def combined(method: str, children: Sequence[str]) -> float | None:
        scored = [x for x in map(child, children) if x is not None]
        if method == "weighted_mean" and scored and sum(weights[x] for x in children) == 0:
            return 0.0  # children that all weigh 0, as written: PaperBench's score_from_children (seed 003)
        return _combine(method, scored)  # weighed children all unscored: None, never 0

    def child(node_id: str) -> _Child | None:
        if node_id in groups:
            g = groups[node_id]
            v = combined(g.aggregation, g.children)
            return None if v is None else _Child(g.weight, v, v >= DEFAULT_PASS, None)
        unit = units.get(node_id) if node_id in active else None
        if unit is None:
            return None
        c = criteria[node_id]
        return _Child(c.weight, unit, meets(c, unit), c.points)

    if rubric.scoring.root:
        root = child(rubric.scoring.root)
        return None if root is None else root.value
    children = {x for g in rubric.groups for x in g.children}
    top = [c.id for c in rubric.criteria if c.id not in children] + [
        g.id for g in rubric.groups if g.id not in children
    ]
    return combined(rubric.scoring.method, top)


def verdict(
    rubric: Rubric,
    values: Mapping[str, Any],
    genre: str | None = None,
    matched_patterns: Set[str] = frozenset(),
    judge_disqualifiers: Set[str] = frozenset(),
    violations: Set[str] = frozenset(),
) -> Verdict:
    """The verdict of one text; `violations`: the hard output constraints its answer broke, each a
    disqualifier under its own id (seed 001: hard constraints disqualify, soft ones warn). `values`
    are as the answers were read: a verdict the rubric's decision rules give (seed 000: R2-R4) is
    already the verdict criterion's value (tasks/judging/verify.follow_the_decision_rules), as in the
    warehouse's judgments, so this and the SQL views score the same value."""
    units = unit_scores(rubric, values)
    active = rubric.active_criteria(genre)
    coverage = sum(1 for c in active if units.get(c.id) is not None) / len(active) if active else 0.0
    fired = []
    for d in rubric.disqualifiers:
        if d.kind == "pattern" and matched_patterns & set(d.patterns):
            fired.append(d.id)
        elif d.kind == "criterion" and d.criterion is not None and d.threshold is not None:
            unit = units.get(d.criterion)
            if unit is not None and unit <= d.threshold:
                fired.append(d.id)
        elif d.kind == "judge" and d.id in judge_disqualifiers:
            fired.append(d.id)
    fired.extend(sorted(set(violations) - set(fired)))
    s = rubric.scoring
    if fired:  # a disqualifier decides even when nothing was scored (e.g. a skipped, pattern-failed text)
        return Verdict(0.0, s.disqualified_label, False, tuple(fired), coverage)
    raw = aggregate(rubric, units, genre)
    if raw is None:
        return Verdict(None, None, None, (), coverage)
    score = fixed(1.0 - raw if s.invert else raw)
    label = next(
        (lab.label for lab in sorted(rubric.decision_labels(), key=lambda lab: -lab.min) if score >= lab.min), None
    )
    passed = None
    if s.pass_threshold is not None:
        passed = score >= s.pass_threshold
    if s.essential_minimum is not None:
        minimum = s.essential_minimum
        essentials_ok = all(
            (unit := units.get(c.id)) is not None and unit >= minimum for c in active if c.importance == "essential"
        )
        passed = essentials_ok if passed is None else passed and essentials_ok
    return Verdict(score, label, passed, (), coverage)
