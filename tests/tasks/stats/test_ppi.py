"""The prediction-powered figures equal ppi-python's on the same numbers, to 1e-9: every point
estimate, interval and power-tuning weight, with and without inclusion weights."""

import numpy as np
import pytest
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

from rubricflow.tasks.stats import ppi
from rubricflow.tasks.stats.labelling_plan import inclusion_probabilities, systematic_sample


def sample(seed: int, n: int = 80, big_n: int = 900):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, big_n).astype(float)  # a 1-5 human scale
    judge = np.clip(truth + rng.normal(0.4, 0.9, big_n), 1, 5)  # biased, noisy judge
    chosen = rng.choice(big_n, n, replace=False)
    weights = 1 / rng.uniform(0.05, 0.6, n)  # inclusion probabilities of an active plan
    return truth[chosen], judge[chosen], judge, weights


def close(interval: ppi.Interval, reference) -> None:
    low, high = (float(np.ravel(v)[0]) for v in reference)
    assert interval.low == pytest.approx(low, abs=1e-9) and interval.high == pytest.approx(high, abs=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("alpha", [0.1, 0.05])
def test_ppi_mean_matches_ppi_python(seed, weighted, alpha):
    y, yhat, yhat_all, weights = sample(seed)
    w = weights if weighted else None
    got, lam = ppi.ppi_mean(y, yhat, yhat_all, w, alpha)
    close(got, ppi_mean_ci(y, yhat, yhat_all, alpha=alpha, w=w))
    point = ppi_mean_pointestimate(y, yhat, yhat_all, w=w)
    assert got.estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-9)
    assert 0 < lam <= 1  # the judge carries information here: tuned, not dropped
    close(ppi.classical(y, w, alpha), classical_mean_ci(y, w=w, alpha=alpha))
    assert got.width < ppi.classical(y, w, alpha).width


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_a_fixed_lambda_matches_too(lam):
    y, yhat, yhat_all, weights = sample(3)
    got, used = ppi.ppi_mean(y, yhat, yhat_all, weights, 0.1, lam=lam)
    assert used == lam
    close(got, ppi_mean_ci(y, yhat, yhat_all, alpha=0.1, lam=lam, w=weights))


def test_pass_rates_are_means_of_indicators():
    y, yhat, yhat_all, _ = sample(4)
    got, _ = ppi.ppi_mean(y >= 4, yhat >= 4, yhat_all >= 4)
    close(got, ppi_mean_ci((y >= 4).astype(float), (yhat >= 4).astype(float), (yhat_all >= 4).astype(float)))


def test_the_difference_of_two_judges_matches_ppi_python():
    y, yhat, yhat_all, weights = sample(5)
    rng = np.random.default_rng(9)
    other_all = yhat_all + rng.normal(-0.3, 0.5, len(yhat_all))
    index = {v: i for i, v in enumerate(yhat_all)}
    other = other_all[[index[v] for v in yhat]]
    a, lam_a = ppi.ppi_mean(y, yhat, yhat_all, weights)
    b, lam_b = ppi.ppi_mean(y, other, other_all, weights)
    diff = ppi.ppi_difference(((yhat, yhat_all, lam_a), (other, other_all, lam_b)), weights)
    assert diff.estimate == pytest.approx(a.estimate - b.estimate, abs=1e-9)
    gap, gap_all = lam_a * yhat - lam_b * other, lam_a * yhat_all - lam_b * other_all
    close(diff, ppi_mean_ci(np.zeros(len(y)), gap, gap_all, alpha=0.1, lam=1, w=weights))


def test_a_constant_judge_falls_back_to_the_labels():
    y = np.array([1.0, 2, 3, 4, 5, 3])
    got, lam = ppi.ppi_mean(y, np.full(6, 3.0), np.full(50, 3.0))
    assert lam == 0 and got == ppi.classical(y)
    assert ppi.effective_labels(6, ppi.classical(y), got) == pytest.approx(6)


def test_active_inference_is_ppi_under_a_uniform_plan_and_unbiased_under_an_active_one():
    """Zrnic and Candes's estimator: with every text equally likely it is ppi-python's point estimate
    at the same lambda; with probabilities that follow the judge's error its mean over many plans is
    the corpus mean (unbiased) and its interval narrower than uniform selection's."""
    rng = np.random.default_rng(5)
    big_n, n = 600, 120
    truth = rng.integers(1, 6, big_n).astype(float)
    noisy = rng.uniform(size=big_n) < 0.3  # the judge errs a lot on these texts, little on the rest
    judge = truth + np.where(noisy, rng.normal(0, 2.0, big_n), rng.normal(0, 0.2, big_n))
    chosen = rng.choice(big_n, n, replace=False)
    got, lam = ppi.active_mean(truth[chosen], chosen, judge, np.full(big_n, n / big_n))
    reference = ppi_mean_pointestimate(truth[chosen], judge[chosen], judge, lam=lam)
    assert got.estimate == pytest.approx(float(np.ravel(reference)[0]), abs=1e-9)
    pi = inclusion_probabilities(np.where(noisy, 2.0, 0.2), n, active=True)
    uniform = np.full(big_n, n / big_n)
    estimates, widths = [], {"active": [], "uniform": []}
    for _ in range(400):
        picked = systematic_sample(pi, rng)
        active, _ = ppi.active_mean(truth[picked], picked, judge, pi)
        estimates.append(active.estimate)
        widths["active"].append(active.width)
        picked = systematic_sample(uniform, rng)
        widths["uniform"].append(ppi.active_mean(truth[picked], picked, judge, uniform)[0].width)
    assert np.mean(estimates) == pytest.approx(truth.mean(), abs=0.02)
    assert np.median(widths["active"]) < 0.85 * np.median(widths["uniform"])
