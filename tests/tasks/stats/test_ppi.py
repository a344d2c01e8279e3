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


@pytest.mark.parametrize(
    "values",
    [
        np.arange(10.0) % 3,  # n = 10, the least `estimate` takes, with ties
        np.array([0.0] * 9 + [1.0]),  # a paired error difference that is almost always 0
        np.random.default_rng(6).normal(0.5, 1, 40),
    ],
)
def test_the_t_interval_of_a_mean_is_scipys(values):
    from scipy import stats

    got = ppi.t_mean(values, 0.1)
    low, high = stats.ttest_1samp(values, 0).confidence_interval(0.9)
    assert (got.estimate, got.low, got.high) == (
        pytest.approx(values.mean(), abs=1e-12), pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12)
    )  # fmt: skip


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


def centred_terms(y, labelled, f, pi):
    """a, b, d of the per-text terms z = a + lam b + c d (the centred active estimator), built here."""
    xi = np.isin(np.arange(len(f)), labelled)
    full = np.zeros(len(f))
    full[labelled] = y
    inverse = np.where(xi, 1 / pi, 0.0)
    return full * inverse, f * (1 - inverse), 1 - inverse


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_centred_active_estimator_matches_ppi_python_and_statsmodels(seed):
    """Under a uniform plan the centred estimate is ppi-python's PPI++ point at the same lambda; its
    interval is ppi-python's of the per-text terms; (lambda, c) are the least-squares coefficients
    statsmodels fits to the terms (the variance they minimise)."""
    import statsmodels.api as sm

    rng = np.random.default_rng(seed)
    big_n, n = 500, 90
    truth = rng.integers(1, 6, big_n).astype(float)
    judge = truth + rng.normal(1.5, 1.2, big_n)  # off the humans' mean: the offset c carries it
    for pi in (np.full(big_n, n / big_n), inclusion_probabilities(np.abs(judge - 3) + 0.3, n, active=True)):
        picked = systematic_sample(pi, rng)
        got, lam = ppi.active_mean(truth[picked], picked, judge, pi, centred=True)
        a, b, d = centred_terms(truth[picked], picked, judge, pi)
        fit = sm.OLS(-a, sm.add_constant(np.column_stack([b, d]))).fit()
        assert 0 < lam < 1 and lam == pytest.approx(fit.params[1], abs=1e-9)
        close(got, classical_mean_ci(a + lam * b + fit.params[2] * d, alpha=0.1))
    picked = systematic_sample(np.full(big_n, n / big_n), rng)
    got, lam = ppi.active_mean(truth[picked], picked, judge, np.full(big_n, n / big_n), centred=True)
    point = ppi_mean_pointestimate(truth[picked], judge[picked], judge, lam=lam)
    assert got.estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-9)


def test_the_centred_active_estimator_is_unbiased_and_pays_nothing_for_an_offset_judge():
    """A judge on a 0-1 scale against 1-5 labels (UniEval's on SFHOT): the paper's form pays for the
    mean residual (wider than PPI++ on the same uniform labels), the centred form does not; under an
    active plan it stays unbiased over many plans."""
    rng = np.random.default_rng(7)
    big_n, n = 700, 100
    truth = rng.integers(1, 6, big_n).astype(float)
    judge = (truth - 1) / 4 + rng.normal(0, np.where(rng.uniform(size=big_n) < 0.3, 0.4, 0.05))
    uniform = np.full(big_n, n / big_n)
    pi = inclusion_probabilities(np.abs(truth - 1 - 4 * judge) + 0.1, n, active=True)
    ratios, estimates = {"paper": [], "centred": []}, []
    for _ in range(300):
        picked = systematic_sample(uniform, rng)
        base = ppi.ppi_mean(truth[picked], judge[picked], judge)[0].width
        for form in ratios:
            width = ppi.active_mean(truth[picked], picked, judge, uniform, centred=form == "centred")[0].width
            ratios[form].append(width / base)
        picked = systematic_sample(pi, rng)
        estimates.append(ppi.active_mean(truth[picked], picked, judge, pi, centred=True)[0].estimate)
    assert np.median(ratios["paper"]) > 2 and np.median(ratios["centred"]) < 1.06
    assert np.mean(estimates) == pytest.approx(truth.mean(), abs=0.02)


@pytest.mark.parametrize("k", [0, 1, 4, 9, 10])  # rates 0 and 1 at n = 10 included
def test_clopper_pearson_is_statsmodels(k):
    from statsmodels.stats.proportion import proportion_confint

    got = ppi.clopper_pearson(np.array([1.0] * k + [0.0] * (10 - k)), 0.1)
    low, high = proportion_confint(k, 10, alpha=0.1, method="beta")
    assert (got.estimate, got.low, got.high) == (k / 10, pytest.approx(low), pytest.approx(high))
    assert got.width > 0


def test_small_n_intervals_hold_on_a_skewed_scale_where_the_normal_ones_do_not():
    """A 1-6 criterion shaped like SFHOT's informativeness (56% at 6, a thin low tail) and a weak judge:
    at 10 labels the normal PPI interval covers ~80% for a nominal 90%, the small-n one >= 88%."""
    rng = np.random.default_rng(3)
    truth = rng.choice([1.0, 2, 3, 4, 5, 6], 800, p=[0.01, 0.01, 0.04, 0.1, 0.28, 0.56])
    judge = np.clip(truth + rng.normal(0, 1.5, 800), 1, 6)
    covered = np.zeros(2)
    for _ in range(600):
        chosen = rng.choice(800, 10, replace=False)
        small = ppi.ppi_mean_small_n(truth[chosen], judge[chosen], judge, 5.0)[0]
        normal = ppi.ppi_mean(truth[chosen], judge[chosen], judge)[0]
        covered += [i.low <= truth.mean() <= i.high for i in (small, normal)]
    assert covered[0] / 600 >= 0.88 and covered[1] / 600 < 0.86, covered / 600


def test_a_powered_pass_rate_holds_the_exact_interval_only_while_passes_or_fails_are_few():
    powered, exact = ppi.Interval(0.9, 0.85, 0.95), ppi.Interval(0.9, 0.7, 0.97)
    few_fails = np.array([1.0] * 27 + [0.0] * 3)
    assert ppi.powered_rate(powered, exact, few_fails) == ppi.Interval(0.9, 0.7, 0.97)
    balanced = np.array([1.0] * 15 + [0.0] * 15)
    assert ppi.powered_rate(powered, exact, balanced) == powered
