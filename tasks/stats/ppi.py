"""Prediction-powered inference for a mean (PPI++: Angelopoulos, Duchi and Zrnic 2023): the judge's
scores of every text plus a few human labels give an estimate of the humans' mean over the corpus with
a valid interval, narrower than the labels' own when the judge tracks the humans. Labels a plan chose
with unequal probabilities are weighted by 1/pi in the active-inference estimator (`active_mean`,
Zrnic and Candes 2024), so actively chosen labels stay unbiased. The formulas are ppi-python's (the
test oracle), written in numpy so that the package is not needed at run time."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import beta, norm, t


@dataclass(frozen=True)
class Interval:
    """A point estimate and its two-sided interval at the level asked for."""

    estimate: float
    low: float
    high: float

    @property
    def width(self) -> float:
        return self.high - self.low


def _weights(weights, n: int) -> np.ndarray:
    """Sample weights scaled to sum to n (ppi-python's `construct_weight_vector`): all ones without."""
    if weights is None:
        return np.ones(n)
    w = np.asarray(weights, dtype=float)
    return w / w.sum() * n


def _interval(point: float, se: float, alpha: float) -> Interval:
    z = float(norm.ppf(1 - alpha / 2))
    return Interval(float(point), float(point - z * se), float(point + z * se))


def t_mean(values, alpha: float = 0.1, span: float | None = None) -> Interval:
    """The mean of values drawn at random and Student's t interval (n - 1 degrees of freedom): the
    normal interval is too narrow at the few labels a team has (10 is the least `estimate` takes).
    With the values' possible `span` (their scale's range), the small-n correction (`corrected_variance`)."""
    v = np.asarray(values, dtype=float)
    variance = v.var(ddof=1) if span is None else corrected_variance(v, span)
    half = float(t.ppf(1 - alpha / 2, len(v) - 1)) * np.sqrt(variance / len(v))
    return Interval(float(v.mean()), float(v.mean() - half), float(v.mean() + half))


def corrected_variance(values: np.ndarray, span: float) -> float:
    """The values' variance with one pseudo-observation of the largest variance a value within `span`
    can have (span^2 / 4): (sum of squares + span^2 / 4) / n. At 10 labels of a skewed criterion the
    sample misses the rare tail, its variance is too small, and the t interval covered 82% for a
    nominal 90% (SFHOT's informativeness, bench/ppi.py --small-n 10); with the pseudo-observation
    every criterion of the shared sets covers >= 88%, the width grows ~19% at n = 10 and ~6% at 30,
    and ten equal labels no longer give a zero-width interval."""
    v = np.asarray(values, dtype=float)
    return float((np.sum((v - v.mean()) ** 2) + span**2 / 4) / len(v))


def ppi_mean_small_n(y, yhat, yhat_all, span: float, alpha: float = 0.1) -> tuple[Interval, float]:
    """(interval, lambda) of PPI++ for a uniform sample of labels, made to hold at small n: ppi-python's
    point and lambda, the labels' term of the variance small-n corrected (`corrected_variance` of the
    rectifier y - lambda yhat, `span` the labels' scale range) and Student's t quantile (n - 1 degrees
    of freedom) instead of the normal one."""
    y, yhat, yhat_all = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_all))
    lam = power_tuning(y, yhat, yhat_all)
    imputed, rectifier = lam * yhat_all, y - lam * yhat
    point = imputed.mean() + rectifier.mean()
    se = np.sqrt(imputed.var() / len(yhat_all) + corrected_variance(rectifier, span) / len(y))
    half = float(t.ppf(1 - alpha / 2, len(y) - 1)) * se
    return Interval(float(point), float(point - half), float(point + half)), lam


def clopper_pearson(passed, alpha: float = 0.1) -> Interval:
    """A pass rate from 0/1 values and its Clopper-Pearson (exact binomial) interval: within [0, 1],
    never of zero width, and never below its level at any rate, 0 and 1 included. (Wilson's covered
    86% at 10 labels on Topical-Chat's naturalness for a nominal 90%; this one >= 92%, bench/ppi.py.)"""
    v = np.asarray(passed, dtype=float)
    n, k = len(v), float(v.sum())
    low = float(beta.ppf(alpha / 2, k, n - k + 1)) if k > 0 else 0.0
    high = float(beta.ppf(1 - alpha / 2, k + 1, n - k)) if k < n else 1.0
    return Interval(k / n, low, high)


FEW_EITHER_WAY = 10  # fewer labelled passes (or fails) than this: a powered pass rate holds the exact interval


def powered_rate(powered: Interval, exact: Interval, passed) -> Interval:
    """A prediction-powered pass rate's interval, widened to hold the labels' Clopper-Pearson one
    (`exact`) while the labels hold fewer than 10 passes or fewer than 10 fails: PPI's normal
    approximation fails there (at 10 labels, or at 30 labels of a 95% pass rate, it covered 76-85%
    and 79% for a nominal 90%: bench/ppi.py --small-n), and the hull covers at least as often as
    the exact one. The estimate stays the powered one."""
    v = np.asarray(passed, dtype=float)
    if min(v.sum(), len(v) - v.sum()) >= FEW_EITHER_WAY:
        return powered
    return Interval(powered.estimate, min(powered.low, exact.low), max(powered.high, exact.high))


def classical(y, weights=None, alpha: float = 0.1) -> Interval:
    """The labels alone: their (weighted) mean and its normal interval."""
    y = np.asarray(y, dtype=float)
    wy = _weights(weights, len(y)) * y
    return _interval(wy.mean(), wy.std() / np.sqrt(len(y)), alpha)


def power_tuning(y, yhat, yhat_all, weights=None) -> float:
    """The weight lambda in [0, 1] given to the judge that minimises the interval's variance (PPI++);
    0 (the labels alone) when the judge's scores do not vary."""
    y, yhat, yhat_all = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_all))
    n, big_n = len(y), len(yhat_all)
    w = _weights(weights, n)
    point = yhat_all.mean() + (w * (y - yhat)).mean()
    grads, grads_hat = w * (y - point), w * (yhat - point)
    cov = 2 * np.sum((grads - grads.mean()) * (grads_hat - grads_hat.mean())) / n
    var = np.concatenate([grads_hat, yhat_all - point]).var(ddof=1)
    if var <= 0:
        return 0.0
    return float(np.clip(cov / (2 * (1 + n / big_n) * var), 0, 1))


def ppi_mean(y, yhat, yhat_all, weights=None, alpha: float = 0.1, lam: float | None = None) -> tuple[Interval, float]:
    """(interval, lambda): y the labels, yhat the judge's scores of the same texts, yhat_all the judge's
    scores of every text of the corpus (the labelled ones too: the estimand is the corpus's mean)."""
    y, yhat, yhat_all = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_all))
    lam = power_tuning(y, yhat, yhat_all, weights) if lam is None else lam
    w = _weights(weights, len(y))
    imputed, rectifier = lam * yhat_all, w * (y - lam * yhat)
    point = imputed.mean() + rectifier.mean()
    se = np.sqrt(imputed.var() / len(yhat_all) + rectifier.var() / len(y))
    return _interval(point, se, alpha), lam


def effective_labels(n: int, labels_only: Interval, powered: Interval) -> float:
    """How many labels alone would give the prediction-powered interval's width: n x (width ratio)^2."""
    if powered.width <= 0:
        return float(n)
    return float(n * (labels_only.width / powered.width) ** 2)


def active_mean(
    y, labelled, yhat_all, pi_all, alpha: float = 0.1, lam: float | None = None, centred: bool = False
) -> tuple[Interval, float]:
    """(interval, lambda) of the corpus mean when each text was labelled with probability pi (Zrnic
    and Candes 2024, active inference): over every text i, z_i = lam f_i + xi_i (y_i - lam f_i) / pi_i
    (xi_i: labelled), whose mean is unbiased for any fixed lam; lam minimises var(z), clipped to
    [0, 1]; the interval is the normal one of z's mean. `y` holds the labels of the `labelled`
    positions (in their order); the judge's scores and probabilities cover the corpus. A given `lam`
    is used as it is (0: the labels alone, Horvitz-Thompson).

    `centred` adds c (1 - xi_i / pi_i) to each term, c tuned with lam to the smallest var(z): the
    term has mean 0 for any fixed c, so the estimate stays unbiased, and it removes what the paper's
    form pays for a judge whose mean is off the humans' (the mean residual, weighted by 1 / pi; 15%
    of the width on SFHOT's labels, bench/ppi.py). Under a uniform plan of exactly n labels the point
    is PPI++'s at the same lam."""
    f, pi = np.asarray(yhat_all, dtype=float), np.asarray(pi_all, dtype=float)
    xi = np.zeros(len(f), dtype=bool)
    xi[np.asarray(labelled)] = True
    full = np.zeros(len(f))
    full[np.asarray(labelled)] = np.asarray(y, dtype=float)
    inverse = np.where(xi, 1 / pi, 0.0)
    a, d = full * inverse, 1 - inverse  # z = a + lam * f d + c d
    lam, c = _tuned(a, f * d, d if centred else None, lam)
    z = a + lam * f * d + c * d
    return _interval(z.mean(), z.std() / np.sqrt(len(z)), alpha), lam


def _tuned(a: np.ndarray, b: np.ndarray, d: np.ndarray | None, lam: float | None) -> tuple[float, float]:
    """(lam, c) minimising var(a + lam b + c d): the least-squares coefficients of -a on b (and d),
    lam clipped to [0, 1] (the variance, c refitted, is convex in lam); a given lam is kept; c is 0
    without d."""
    if lam is None and d is not None:
        cov = np.cov(np.vstack([a, b, d]))
        if np.linalg.det(cov[1:, 1:]) > 1e-12 * cov[1, 1] * cov[2, 2]:
            lam = float(np.clip(-np.linalg.solve(cov[1:, 1:], cov[1:, 0])[0], 0, 1))
    if lam is None:
        var_b = b.var(ddof=1)
        lam = float(np.clip(-np.cov(a, b)[0, 1] / var_b, 0, 1)) if var_b > 0 else 0.0
    if d is None or d.var(ddof=1) <= 0:
        return lam, 0.0
    return lam, float(-np.cov(a + lam * b, d)[0, 1] / d.var(ddof=1))
