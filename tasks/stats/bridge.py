"""Judge succession (#54): a series scored by one judge carried onto another's scale from a small
bridge sample judged by both, instead of re-judging all history. Per criterion, a mapping between
the judges' scales (linear, isotonic or quantile equating, chosen by held-out error), a stitched
corpus figure with a bootstrap band, a check that the mapping transports (the new judge rescales
the old one rather than reordering texts; it holds on the canary and across genres), and an A/B
restated through the mapping with whether its decision flips."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import isotonic_regression
from scipy.stats import spearmanr
from scipy.stats import t as student_t

KINDS = ("linear", "isotonic", "quantile")
MIN_RANK_AGREEMENT = 0.8  # Spearman rho between the judges on the bridge below this: the new judge reorders texts
MIN_BRIDGE = 8  # fewer bridge texts than this cannot choose a mapping by held-out error


@dataclass(frozen=True)
class Mapping:
    """y = f(x) as knots joined linearly (a linear fit: two knots, extended past them)."""

    kind: str
    knots_x: tuple[float, ...]
    knots_y: tuple[float, ...]

    def __call__(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        kx, ky = np.asarray(self.knots_x), np.asarray(self.knots_y)
        if self.kind == "linear" or len(kx) == 1:
            slope = (ky[-1] - ky[0]) / (kx[-1] - kx[0]) if len(kx) > 1 and kx[-1] > kx[0] else 0.0
            return ky[0] + slope * (x - kx[0])
        return np.interp(x, kx, ky)


def fit(kind: str, x, y) -> Mapping:
    """One mapping of x's scale onto y's, fitted on pairs (the same texts judged by both)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if kind == "linear":
        spread = float(np.var(x))  # least squares by hand: polyfit warns on a near-constant x
        slope = float(np.mean((x - x.mean()) * (y - y.mean())) / spread) if spread > 1e-12 else 0.0
        intercept = float(y.mean() - slope * x.mean())
        low, high = float(np.min(x)), float(max(np.max(x), np.min(x) + 1.0))
        return Mapping(kind, (low, high), (intercept + slope * low, intercept + slope * high))
    if kind == "isotonic":
        order = np.argsort(x, kind="stable")
        fitted = isotonic_regression(y[order]).x
        knots, first = np.unique(x[order], return_index=True)
        values = [
            float(np.mean(fitted[first[k] : (first[k + 1] if k + 1 < len(first) else None)])) for k in range(len(first))
        ]
        return Mapping(kind, tuple(map(float, knots)), tuple(values))
    if kind == "quantile":  # equipercentile equating on the bridge: the same share of texts below
        q = np.linspace(0, 1, min(len(x), 21))
        kx, ky = np.quantile(x, q), np.quantile(y, q)
        keep = np.concatenate([[True], np.diff(kx) > 0])
        return Mapping(kind, tuple(map(float, kx[keep])), tuple(map(float, ky[keep])))
    raise ValueError(f"mapping kind is one of {', '.join(KINDS)}, not {kind!r}")


def held_out_error(kind: str, x, y, folds: int = 5, seed: int = 0) -> float:
    """Mean absolute error of a kind's mapping on texts left out of its fit (k-fold)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    part = np.random.default_rng(seed).permutation(len(x)) % folds
    errors = [np.abs(fit(kind, x[part != k], y[part != k])(x[part == k]) - y[part == k]) for k in range(folds)]
    return float(np.mean(np.concatenate(errors)))


def choose(x, y, seed: int = 0) -> tuple[Mapping, dict[str, float]]:
    """The kind with the least held-out error (ties: the simpler, listed first), fitted on every pair."""
    if len(x) < MIN_BRIDGE:
        raise ValueError(f"a bridge of {len(x)} texts is too small to choose a mapping (at least {MIN_BRIDGE})")
    errors = {k: held_out_error(k, x, y, seed=seed) for k in KINDS}
    best = min(KINDS, key=lambda k: (round(errors[k], 12), KINDS.index(k)))
    return fit(best, x, y), errors


def bridge_sample(old_scores, periods, budget: int, bins: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Which texts to judge again: stratified over the old judge's score (quantile bins) and over time
    (`periods`, e.g. the night each text was scored), proportional allocation with at least one per
    non-empty stratum. Returns (indices, weights): a weight is the stratum's size over its sample's."""
    old = np.asarray(old_scores, dtype=float)
    edges = np.unique(np.quantile(old, np.linspace(0, 1, bins + 1)[1:-1]))
    strata = np.searchsorted(edges, old, side="right") * 10_000 + np.unique(periods, return_inverse=True)[1]
    labels, sizes = np.unique(strata, return_counts=True)
    quota = np.maximum(1, np.floor(budget * sizes / len(old)).astype(int))
    for k in np.argsort(-(budget * sizes / len(old) - quota))[: max(0, budget - quota.sum())]:
        quota[k] += 1  # the remainder to the strata rounded down most
    rng = np.random.default_rng(seed)
    chosen, weights = [], []
    for label, size, n in zip(labels, sizes, np.minimum(quota, sizes), strict=True):
        members = rng.choice(np.flatnonzero(strata == label), size=n, replace=False)
        chosen.extend(members)
        weights.extend([size / n] * n)
    return np.asarray(chosen), np.asarray(weights, dtype=float)


def stitched_mean(mapping: Mapping, old_all, old_bridge, new_bridge, weights=None) -> float:
    """The corpus mean on the new judge's scale: the mapped old scores of every text, corrected by
    the bridge's mean residual (a difference estimator: unbiased even where the mapping is off)."""
    residual = np.asarray(new_bridge, dtype=float) - mapping(old_bridge)
    return float(np.mean(mapping(old_all)) + np.average(residual, weights=weights))


@dataclass
class Stitch:
    """A criterion's bridge: the mapping old -> new, its held-out errors, the stitched mean and band."""

    mapping: Mapping
    errors: dict[str, float]
    mean: float
    band: tuple[float, float]
    rank_agreement: float
    draws: np.ndarray  # the stitched mean refitted on each resampled bridge
    residual: np.ndarray  # new - mapped old, per bridge text
    refusals: list[str] = field(default_factory=list)

    @property
    def stitchable(self) -> bool:
        return not self.refusals


def stitch(old_all, bridge, new_bridge, weights=None, level: float = 0.9, reps: int = 400, seed: int = 0) -> Stitch:
    """Fit the bridge (bridge: indices into old_all judged again as new_bridge) and stitch the corpus
    mean onto the new judge's scale, with a band from resampling the bridge and refitting; the band
    is widened to a t interval of the residuals where that is wider (a small bridge's bootstrap is narrow)."""
    old_all, new_bridge = np.asarray(old_all, dtype=float), np.asarray(new_bridge, dtype=float)
    old_bridge = old_all[bridge]
    weights = np.ones(len(bridge)) if weights is None else np.asarray(weights, dtype=float)
    mapping, errors = choose(old_bridge, new_bridge, seed=seed)
    point = stitched_mean(mapping, old_all, old_bridge, new_bridge, weights)
    rng = np.random.default_rng(seed)
    samples: list[float] = []
    for _ in range(reps):
        k = rng.integers(0, len(bridge), len(bridge))
        samples.append(
            stitched_mean(
                fit(mapping.kind, old_bridge[k], new_bridge[k]), old_all, old_bridge[k], new_bridge[k], weights[k]
            )
        )
    residual = new_bridge - mapping(old_bridge)
    rho = rank_agreement(old_bridge, new_bridge)
    draws = np.asarray(samples)
    result = Stitch(mapping, errors, point, band_of(point, draws, residual, level), rho, draws, residual)
    if not rho >= MIN_RANK_AGREEMENT:
        result.refusals.append(
            f"the new judge reorders texts, not just rescales them: rank agreement with the old judge on the "
            f"bridge is rho = {rho:.2f} (< {MIN_RANK_AGREEMENT}); no mapping of scales carries the series over"
        )
    return result


def rank_agreement(old, new) -> float:
    """Spearman's rho, the scores rounded to 9 decimals first: two equal scores summed in another
    order (0.75 and 0.7499999999999999) are a tie, not an order; 0 where either side is constant."""
    old, new = np.round(np.asarray(old, dtype=float), 9), np.round(np.asarray(new, dtype=float), 9)
    return float(spearmanr(old, new).statistic) if np.ptp(old) and np.ptp(new) else 0.0


def band_of(point: float, draws, residual, level: float = 0.9) -> tuple[float, float]:
    """The bootstrap's percentile band, widened to the residuals' t interval where that is wider."""
    low, high = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
    half = student_t.ppf((1 + level) / 2, len(residual) - 1) * np.std(residual, ddof=1) / np.sqrt(len(residual))
    return float(min(low, point - half)), float(max(high, point + half))


def composite(stitches: list[Stitch], level: float = 0.9) -> tuple[float, tuple[float, float]]:
    """The criteria's mean (on the unit scale) stitched, with its band: the criteria were resampled
    together (one seed), so their draws and residuals average text by text."""
    point = float(np.mean([s.mean for s in stitches]))
    draws = np.mean([s.draws for s in stitches], axis=0)
    return point, band_of(point, draws, np.mean([s.residual for s in stitches], axis=0), level)


def transports(mapping: Mapping, old, new, groups, name: str, tolerance: float) -> list[str]:
    """Whether the mapping holds on other texts (the canary, each genre): per group, its mean
    residual within `tolerance` or within twice its standard error. Returns the reasons it does not."""
    residual = np.asarray(new, dtype=float) - mapping(old)
    groups = np.asarray(groups)
    reasons = []
    for group in np.unique(groups):
        r = residual[groups == group]
        se = np.std(r, ddof=1) / np.sqrt(len(r)) if len(r) > 1 else np.inf
        if abs(r.mean()) > tolerance and abs(r.mean()) > 2 * se:
            reasons.append(
                f"the mapping does not hold on {name} {group!s}: its texts sit {r.mean():+.3f} off the mapped "
                f"scale (n = {len(r)}, tolerance {tolerance})"
            )
    return reasons


def restate_ab(mapping: Mapping, spread: float, old_a, old_b, level: float = 0.9) -> dict:
    """A paired A/B made under the old judge, restated on the new judge's scale through the mapping:
    the difference and its t interval (widened by the mapping's own spread, `spread`: the bridge
    band's half-width), and the decision (A, B or none) before and after."""
    before = paired_decision(np.asarray(old_a, dtype=float) - np.asarray(old_b, dtype=float), level)
    after = paired_decision(mapping(old_a) - mapping(old_b), level, extra=spread)
    return {"before": before, "after": after, "flips": before["decision"] != after["decision"]}


def paired_decision(deltas, level: float = 0.9, extra: float = 0.0) -> dict:
    """Mean paired difference with a t interval (half-width widened by `extra` in quadrature) and
    the decision it supports: A or B when the interval excludes 0, none otherwise."""
    deltas = np.asarray(deltas, dtype=float)
    half = student_t.ppf((1 + level) / 2, len(deltas) - 1) * np.std(deltas, ddof=1) / np.sqrt(len(deltas))
    half = float(np.hypot(half, extra))
    mean = float(np.mean(deltas))
    decision = "A" if mean - half > 0 else "B" if mean + half < 0 else "none"
    return {"difference": mean, "interval": (mean - half, mean + half), "decision": decision}


def equated_to_humans(labels, judge_labelled, old_labelled, old_all, to_judge=None, level: float = 0.9) -> dict:
    """A judge equated to the humans (#54 item 4): the mapping of its scores onto the humans' scale,
    chosen by held-out error on the labelled texts (that error says how well it agrees with them),
    and the corpus's human mean, prediction-powered, predicted from the old judge's scores of every
    text: through that mapping alone for the old judge, after the bridge's mapping `to_judge` for a
    new judge known only on the bridge (a fixed predictor of the old scores keeps PPI valid)."""
    from rubricflow.tasks.stats import ppi

    labels = np.asarray(labels, dtype=float)
    to_human, errors = choose(judge_labelled, labels)

    def predict(x):
        return to_human(to_judge(x) if to_judge is not None else x)

    interval, _ = ppi.ppi_mean(labels, predict(old_labelled), predict(old_all), alpha=1 - level)
    return {
        "mapping": to_human.kind,
        "error_against_humans": errors[to_human.kind],
        "human_mean": interval.estimate,
        "interval": [interval.low, interval.high],
        "labels": len(labels),
    }
