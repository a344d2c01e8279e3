"""`estimate`'s small-n intervals rebuilt from reference implementations on the same numbers: the point
and the normal standard error are ppi-python's, the quantile is scipy's Student t (n - 1 df), and the
small-n correction adds one pseudo-observation of the largest variance a value within the scale's
span can have (span^2 / 4) to the labels' sum of squares."""

import numpy as np
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
from scipy import stats


def powered(y, yhat, yhat_all, lam: float, span: float, alpha: float = 0.1) -> tuple[float, float, float]:
    """(point, low, high): ppi-python's at `lam`, the labels' variance term + span^2 / 4 / n^2, t quantile."""
    n, z = len(y), stats.norm.ppf(1 - alpha / 2)
    point = float(ppi_mean_pointestimate(y, yhat, yhat_all, lam=lam)[0])
    (low,), (high,) = ppi_mean_ci(y, yhat, yhat_all, alpha=alpha, lam=lam)
    se = np.sqrt(((high - low) / (2 * z)) ** 2 + span**2 / 4 / n**2)
    half = stats.t.ppf(1 - alpha / 2, n - 1) * se
    return point, point - half, point + half


def labels_only(y, span: float, alpha: float = 0.1) -> tuple[float, float]:
    """scipy's t interval of the labels' mean, the variance small-n corrected."""
    y = np.asarray(y, dtype=float)
    n = len(y)
    scale = np.sqrt((np.sum((y - y.mean()) ** 2) + span**2 / 4) / n / n)
    return stats.t.interval(1 - alpha, n - 1, loc=y.mean(), scale=scale)
