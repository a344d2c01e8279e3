"""Corpus figures corrected by human labels (`rubricflow estimate`): per criterion and overall, the
judge-only figure, the labels-only figure and the prediction-powered one (`ppi`), for the mean score
and the pass rate, and for an A/B pair which side agrees better with the labels. The scores come from `estimate_scores.sql`;
what cannot be computed honestly (labels on texts the judge never scored, too few labels, labels off
the criterion's scale) is refused naming the cause."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import duckdb
import numpy as np

from rubricflow.errors import InputError
from rubricflow.tasks.stats import ppi
from rubricflow.tasks.stats.calibration import one_judge_setup
from rubricflow.tasks.stats.drawn_under import DrawnUnder, labelled_with, load_plan
from rubricflow.warehouse import db

MIN_LABELS = 10  # the least labels: small-n corrected intervals cover >= 88% at 10 (bench/ppi.py --small-n 10)
SMALL_N = 30  # below this the intervals are wide for the small-n correction they carry: a note says so
OVERALL = "(overall)"  # the composite: no criterion id can take it (ids begin with a letter or digit)


class EstimateError(InputError):
    """Labels and judgments from which no honest estimate can be made."""


@dataclass(frozen=True)
class Side:
    """One judgment set: a rubric version scored by one judge setup."""

    name: str
    rubric_hash: str
    judge_hash: str


@dataclass
class Figure:
    side: str
    criterion_id: str
    figure: str  # mean | pass_rate
    n_labels: int
    n_texts: int
    judge_only: float | None
    labels_only: ppi.Interval | None
    powered: ppi.Interval | None  # None for an agreement figure (error, disagreement): labels only
    lam: float | None
    effective_labels: float | None
    better: str | None = None  # A-B agreement: the side that agrees better with the labels (None: undecided)
    all_equal: bool = False  # every labelled value equal: a warning says the interval is not exact


@dataclass
class Estimate:
    corpus: str
    rater: str
    confidence: float
    sides: list[Side]
    plan_id: str | None
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_records(self) -> list[dict]:
        """One flat record per figure (what --json prints and the `estimates` table keeps)."""
        by_name = {s.name: s for s in self.sides}
        records = []
        for f in self.figures:
            side = by_name.get(f.side, self.sides[0])
            records.append(
                {
                    "corpus_id": self.corpus,
                    "rater": self.rater,
                    "side": f.side,
                    "rubric_hash": side.rubric_hash if f.side != "A-B" else self.sides[0].rubric_hash,
                    "judge_hash": side.judge_hash if f.side != "A-B" else self.sides[0].judge_hash,
                    "plan_id": self.plan_id,
                    "criterion_id": f.criterion_id,
                    "figure": f.figure,
                    "confidence": self.confidence,
                    "n_labels": f.n_labels,
                    "n_texts": f.n_texts,
                    "judge_only": f.judge_only,
                    **_bounds("labels", f.labels_only),
                    **_bounds("powered", f.powered),
                    "power_weight": f.lam,
                    "effective_labels": f.effective_labels,
                    "better": f.better,
                }
            )
        return records


def _bounds(prefix: str, interval: ppi.Interval | None) -> dict:
    values = asdict(interval) if interval else {"estimate": None, "low": None, "high": None}
    head = "labels_only" if prefix == "labels" else prefix
    return {head: values["estimate"], f"{prefix}_low": values["low"], f"{prefix}_high": values["high"]}


def record(con: duckdb.DuckDBPyConnection, result: Estimate) -> None:
    """Keep an estimate's figures in the warehouse, stamped with the time."""
    with db.transaction(con):
        for row in result.as_records():
            db.run_sql(con, "record_estimate.sql", **row)


@dataclass
class Criterion:
    """One criterion of one side: the judge's unit scores of every text, the labels where given."""

    criterion_id: str
    texts: list[str]
    judge: np.ndarray  # unit scores
    label: np.ndarray  # unit scores, NaN where unlabelled
    scale: tuple[float, float] | None  # the native range; None for a unit-only scale
    weight: float
    threshold: float

    def native(self, unit: np.ndarray) -> np.ndarray:
        return unit if self.scale is None else self.scale[0] + unit * (self.scale[1] - self.scale[0])


def load_side(con: duckdb.DuckDBPyConnection, corpus: str, side: Side, rater: str) -> list[Criterion]:
    """The side's criteria that the rater labelled; labels the judge never scored, or off the scale, refused."""
    unscored = db.fetch(
        con, "estimate_unscored_labels.sql", corpus=corpus, rubric=side.rubric_hash, judge_hash=side.judge_hash,
        rater=rater,
    )  # fmt: skip
    if unscored:
        u = unscored[0]
        raise EstimateError(
            f"{sum(r['labels'] for r in unscored)} labels by {rater!r} are on texts judge {side.name} never scored "
            f"(criterion {u['criterion_id']}: e.g. {', '.join(map(repr, u['examples']))}); score those texts "
            "first, or estimate with the judge that scored them"
        )
    rows: dict[str, list[tuple]] = {}
    for r in db.fetch_tuples(
        con, "estimate_scores.sql", corpus=corpus, rubric=side.rubric_hash, judge_hash=side.judge_hash, rater=rater
    ):
        rows.setdefault(r[0], []).append(r)
    return [c for c in (_criterion(cid, got) for cid, got in rows.items()) if np.isfinite(c.label).any()]


def _criterion(criterion_id: str, rows: list[tuple]) -> Criterion:
    """(criterion_id, text_id, scale_min, scale_max, weight, pass_threshold, judge_unit, label) rows as arrays."""
    _, _, low, high, weight, threshold, _, _ = rows[0]
    scale = (low, high) if low is not None and high is not None and high > low else None
    labels = np.array([np.nan if r[7] is None else r[7] for r in rows], dtype=float)
    lo, hi = scale or (0.0, 1.0)
    off = [(r[1], r[7]) for r in rows if r[7] is not None and not lo <= r[7] <= hi]
    if off:
        raise EstimateError(
            f"{len(off)} labels of criterion {criterion_id!r} are off its scale {lo:g}-{hi:g} (text {off[0][0]!r}: "
            f"{off[0][1]:g}); labels are written on the criterion's own scale, as the rubric defines it"
        )
    return Criterion(
        criterion_id,
        [r[1] for r in rows],
        np.array([r[6] for r in rows], dtype=float),
        (labels - lo) / (hi - lo),
        scale,
        float(weight),
        float(threshold),
    )


def overall(criteria: list[Criterion]) -> Criterion | None:
    """The texts' overall score: the criteria's weighted mean on the unit scale, on the texts the judge
    scored on every criterion; labelled where the rater labelled every criterion. None when no text was."""
    common = set.intersection(*(set(c.texts) for c in criteria)) if criteria else set()
    texts = sorted(common)
    total = sum(c.weight for c in criteria) or 1.0
    judge, label = np.zeros(len(texts)), np.zeros(len(texts))
    for c in criteria:
        at = {t: i for i, t in enumerate(c.texts)}
        index = [at[t] for t in texts]
        judge += c.weight / total * c.judge[index]
        label += c.weight / total * c.label[index]  # NaN where any criterion is unlabelled
    if not len(texts) or not np.isfinite(label).any():
        return None
    return Criterion(OVERALL, texts, judge, label, None, total, float("nan"))  # no pass rate of its own


def _labelled(c: Criterion, plan: DrawnUnder | None, rater: str) -> tuple[np.ndarray, np.ndarray | None]:
    """The labelled texts' positions and, under an active plan, every text's probability of being labelled."""
    at = np.flatnonzero(np.isfinite(c.label))
    if len(at) < MIN_LABELS:
        raise EstimateError(
            f"criterion {c.criterion_id!r}: {len(at)} texts labelled by {rater!r}; an estimate needs at least "
            f"{MIN_LABELS} (label more, e.g. `rubricflow labels plan`)"
        )
    if plan is None:
        return at, None
    pi = labelled_with(plan, c.texts, at, f"criterion {c.criterion_id!r}")
    return at, None if plan.uniform else pi


def _values(c: Criterion, figure: str, unit: np.ndarray) -> np.ndarray:
    if figure == "mean":
        return c.native(unit)
    return (unit >= c.threshold - 1e-9).astype(float)


def figures(side: str, c: Criterion, plan: DrawnUnder | None, rater: str, alpha: float) -> list[Figure]:
    """The criterion's mean (native units) and pass rate: judge-only, labels-only and prediction-powered
    (under an active plan, active inference: each label weighted by 1 / its probability of being labelled)."""
    c = _in_plan(c, plan)
    at, pi = _labelled(c, plan, rater)
    result = []
    for name in ("mean", "pass_rate") if np.isfinite(c.threshold) else ("mean",):
        judge, label = _values(c, name, c.judge), _values(c, name, c.label[at])
        span = 1.0 if name == "pass_rate" else float(np.ptp(c.native(np.array([0.0, 1.0]))))
        if pi is None:
            alone = ppi.clopper_pearson(label, alpha) if name == "pass_rate" else ppi.t_mean(label, alpha, span)
            powered, lam = ppi.ppi_mean_small_n(label, judge[at], judge, span, alpha)
            if name == "pass_rate":
                powered = ppi.powered_rate(powered, alone, label)
        else:
            alone = ppi.active_mean(label, at, judge, pi, alpha, lam=0.0, centred=True)[0]
            powered, lam = ppi.active_mean(label, at, judge, pi, alpha, centred=True)
        if lam == 0:  # the judge says nothing: the labels-only figure (a rate's was a normal interval)
            powered = alone
        bounds = (0.0, 1.0) if name == "pass_rate" else tuple(c.native(np.array([0.0, 1.0])))
        alone, powered = _clipped(alone, *bounds), _clipped(powered, *bounds)
        gained = ppi.effective_labels(len(at), alone, powered)  # of the intervals shown: clipped, both
        result.append(Figure(side, c.criterion_id, name, len(at), len(judge), float(judge.mean()),
                             alone, powered, lam, gained, all_equal=bool(np.ptp(label) == 0)))  # fmt: skip
    return result


ERRORS = {"mean": "error", "pass_rate": "disagreement"}  # what each figure's agreement with the labels is


def agreement(a: Criterion, b: Criterion, plan: DrawnUnder | None, rater: str, alpha: float) -> list[Figure]:
    """Which side agrees better with the humans, on the labelled texts both sides scored: each side's
    error against the labels (the mean absolute error in the criterion's units; for the pass rate,
    the share of texts whose pass/fail differs from the humans') and A's minus B's, paired, with its
    interval. (The two sides' label-corrected means both estimate the humans' mean, so their
    difference is zero by construction: it is never printed.)"""
    texts = sorted(set(a.texts) & set(b.texts) & (set(plan.inclusion) if plan else set(a.texts)))
    a, b = _restrict(a, texts), _restrict(b, texts)
    at, pi = _labelled(a, plan, rater)
    result = []
    for name in ("mean", "pass_rate") if np.isfinite(a.threshold) and np.isfinite(b.threshold) else ("mean",):
        label = _values(a, name, a.label[at])
        error_a, error_b = (np.abs(_values(c, name, c.judge)[at] - label) for c in (a, b))
        for side, errors in (("A", error_a), ("B", error_b), ("A-B", error_a - error_b)):
            most = 1.0 if name == "pass_rate" else float(np.ptp(a.native(np.array([0.0, 1.0]))))
            low = -most if side == "A-B" else 0.0
            span = _clipped(_error_interval(errors, at, pi, len(texts), alpha, most - low), low, most)
            better = _better(span) if side == "A-B" else None
            result.append(Figure(side, a.criterion_id, ERRORS[name], len(at), len(texts), None, span, None, None,
                                 None, better, all_equal=bool(np.ptp(errors) == 0)))  # fmt: skip
    return result


def _error_interval(errors: np.ndarray, at: np.ndarray, pi: np.ndarray | None, n: int, alpha: float,
                    span: float) -> ppi.Interval:  # fmt: skip
    """The corpus mean of a per-text error known on the labelled texts: Student's t interval of the
    labelled texts' mean, or under an active plan the labels weighted by 1 / pi (active inference
    with no judge term)."""
    if pi is None:
        return ppi.t_mean(errors, alpha, span)
    return ppi.active_mean(errors, at, np.zeros(n), pi, alpha, lam=0.0, centred=True)[0]


def _clipped(interval: ppi.Interval, low: float, high: float) -> ppi.Interval:
    """The interval within the figure's possible range (a rate in [0, 1], a mean on its scale)."""
    return ppi.Interval(interval.estimate, max(low, interval.low), min(high, interval.high))


def warnings(figures: list[Figure]) -> list[str]:
    """What a reader must know before trusting an interval: few labels (the interval is small-n
    corrected, so wide), every labelled value equal (the width is the correction's, not the data's),
    or an interval of zero width (an active plan's, with every label equal), which is never exact."""
    notes = []
    few = sorted({f.criterion_id for f in figures if f.n_labels < SMALL_N})
    if few:
        notes.append(
            f"fewer than {SMALL_N} labels on {', '.join(few)}: the intervals are small-n corrected (Student's t; "
            "a pass rate's powered interval holds its labels' Clopper-Pearson one under 10 passes or fails; at 10 labels they covered >= 88% for a nominal 90% on real labelled sets, "
            "bench/ppi.py) and wide; label more to narrow them"
        )
    for f in figures:
        for kind, interval in (("labels-only", f.labels_only), ("powered", f.powered)):
            if interval is not None and interval.width <= 0:
                notes.append(
                    f"{f.side} {f.criterion_id} {f.figure}: the {kind} interval has zero width (every one of the "
                    f"{f.n_labels} labelled values is equal): it is not exact; label more texts"
                )
    return notes + [
        f"{f.side} {f.criterion_id} {f.figure}: every one of the {f.n_labels} labelled values is equal; the "
        "interval's width is the small-n correction's, not the labels' spread: it is not exact; label more texts"
        for f in figures
        if f.all_equal
    ]


def _better(gap: ppi.Interval) -> str | None:
    """The side whose error is smaller when the interval of A's minus B's excludes 0; else None."""
    return "A" if gap.high < 0 else "B" if gap.low > 0 else None


def _restrict(c: Criterion, texts: list[str]) -> Criterion:
    at = {t: i for i, t in enumerate(c.texts)}
    index = [at[t] for t in texts]
    return Criterion(c.criterion_id, texts, c.judge[index], c.label[index], c.scale, c.weight, c.threshold)


def _in_plan(c: Criterion, plan: DrawnUnder | None) -> Criterion:
    """Under a plan, the texts it covered (those judged after it have no inclusion probability)."""
    if plan is None or all(t in plan.inclusion for t in c.texts):
        return c
    return _restrict(c, [t for t in c.texts if t in plan.inclusion])


def resolve_side(con: duckdb.DuckDBPyConnection, corpus: str, name: str, spec: tuple) -> Side:
    """A side from (rubric, model, judge hash prefix), as `calibrate --rubric` picks one."""
    rubric, model, judge_prefix = spec
    rubric_hash, judge_hash = one_judge_setup(con, corpus, rubric, model, judge_prefix)
    return Side(name, rubric_hash, judge_hash)


def estimate(
    con: duckdb.DuckDBPyConnection,
    corpus: str,
    rater: str,
    side_a: tuple,
    side_b: tuple | None = None,
    confidence: float = 0.9,
    plan: str = "latest",
) -> Estimate:
    """Each side's figures per criterion the rater labelled and overall, and with two sides which
    agrees better with the labels. A side is (rubric, model, judge hash prefix); `plan` names the labelling plan whose
    inclusion probabilities weight the labels (`latest`, an id, or `none`)."""
    if not 0 < confidence < 1:
        raise InputError(f"--confidence must be between 0 and 1, not {confidence}")
    alpha = 1 - confidence
    sides = [resolve_side(con, corpus, "A", side_a)] + ([resolve_side(con, corpus, "B", side_b)] if side_b else [])
    drawn = load_plan(con, corpus, sides[0].rubric_hash, plan)
    result = Estimate(corpus, rater, confidence, sides, drawn.plan_id if drawn else None)
    loaded = []
    for side in sides:
        criteria = load_side(con, corpus, side, rater)
        if not criteria:
            raise EstimateError(
                f"no labels by {rater!r} on the criteria judge {side.name} scored on corpus {corpus!r} "
                "(`rubricflow labels import`, or label texts in `rubricflow view`)"
            )
        whole = overall(criteria)
        if whole is None or np.isfinite(whole.label).sum() < MIN_LABELS:
            result.notes.append(
                f"{side.name}: no overall figure: fewer than {MIN_LABELS} texts labelled on every criterion"
            )
            whole = None
        by_id = {c.criterion_id: c for c in criteria + ([whole] if whole else [])}
        for c in by_id.values():
            result.figures += figures(side.name, c, drawn, rater, alpha)
        loaded.append(by_id)
    if len(loaded) == 2:
        for cid in [c for c in loaded[0] if c in loaded[1]]:
            result.figures += agreement(loaded[0][cid], loaded[1][cid], drawn, rater, alpha)
    result.notes += warnings(result.figures)
    return result
