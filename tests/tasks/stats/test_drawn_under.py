"""`estimate` under the labelling plan the labels were drawn under: an active plan's figures are Zrnic
and Candes's active-inference estimator, centred (each label weighted by 1 / the probability it had
of being labelled, a plan labelled in part counting as a random k of its m chosen texts), equal on the same
numbers to ppi-python's interval of the per-text terms; a uniform plan's are ppi-python's PPI++."""

import numpy as np
import pytest
import statsmodels.api as sm
from ppi_py import classical_mean_ci

from rubricflow.tasks.stats.drawn_under import DrawnUnder
from rubricflow.tasks.stats.estimate import Criterion, agreement, figures
from rubricflow.tasks.stats.labelling_plan import PlanError, inclusion_probabilities, systematic_sample
from tests.tasks.stats import small_n_reference

BIG_N, CHOSEN, LABELLED = 80, 30, 24


def sides(seed: int, active: bool):
    """Two judges' unit scores of BIG_N texts, a plan of CHOSEN, labels on its first LABELLED (0-3 scale)."""
    rng = np.random.default_rng(seed)
    texts = [f"t{i:03d}" for i in range(BIG_N)]
    truth = rng.integers(0, 4, BIG_N) / 3
    judge_a = np.clip(truth + rng.normal(0, 0.15, BIG_N), 0, 1)
    judge_b = np.clip(truth + rng.normal(0.1, 0.3, BIG_N), 0, 1)
    pi = inclusion_probabilities(np.abs(judge_a - 0.5) + 0.05, CHOSEN, active=active)
    queue = systematic_sample(pi, rng)
    plan = DrawnUnder("p", dict(zip(texts, pi, strict=True)), frozenset(texts[i] for i in queue))
    label = np.full(BIG_N, np.nan)
    label[queue[:LABELLED]] = truth[queue[:LABELLED]]
    a, b = (Criterion("c", texts, j, label, (0.0, 3.0), 1.0, 0.5) for j in (judge_a, judge_b))
    return a, b, plan, pi * LABELLED / CHOSEN


def terms(c: Criterion, pi: np.ndarray, lam: float, judge=None) -> np.ndarray:
    """The per-text terms over the corpus, native units: the paper's lam f + xi (y - lam f) / pi,
    centred by c (1 - xi / pi) with c the least-squares coefficient statsmodels fits (the offset
    that makes their variance smallest at this lam)."""
    f = c.native(c.judge) if judge is None else judge
    xi = np.isfinite(c.label)
    y = np.where(xi, c.native(np.nan_to_num(c.label)), 0.0)
    return centred(lam * f + xi * (y - lam * f) / pi, 1 - xi / pi)


def centred(z: np.ndarray, d: np.ndarray) -> np.ndarray:
    """z + c d with c minimising the variance: z less its least-squares fit on d (statsmodels)."""
    return z - sm.OLS(z, sm.add_constant(d)).fit().params[1] * d


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_active_plan_gives_the_active_inference_figures(seed):
    a, b, plan, pi = sides(seed, active=True)
    mean = next(f for f in figures("A", a, plan, "ann", 0.1) if f.figure == "mean")
    assert mean.n_labels == LABELLED and mean.lam is not None
    for interval, lam in ((mean.powered, mean.lam), (mean.labels_only, 0.0)):
        (low,), (high,) = (np.ravel(v) for v in classical_mean_ci(terms(a, pi, lam), alpha=0.1))
        assert (interval.low, interval.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
    gap = next(f for f in agreement(a, b, plan, "ann", 0.1) if f.side == "A-B" and f.figure == "error")
    xi = np.isfinite(a.label)
    y = a.native(np.nan_to_num(a.label))
    error = np.abs(a.native(a.judge) - y) - np.abs(b.native(b.judge) - y)  # A's error less B's, per text
    per_text = centred(xi * error / pi, 1 - xi / pi)  # known on the labelled texts, weighted by 1 / pi
    (low,), (high,) = (np.ravel(v) for v in classical_mean_ci(per_text, alpha=0.1))
    assert (gap.labels_only.low, gap.labels_only.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
    assert gap.powered is None and gap.better == ("A" if high < 0 else "B" if low > 0 else None)


def test_a_uniform_plan_gives_ppi_and_a_label_outside_the_plan_is_refused():
    a, _, plan, _ = sides(3, active=False)
    mean = next(f for f in figures("A", a, plan, "ann", 0.1) if f.figure == "mean")
    at = np.isfinite(a.label)
    lo, hi = a.native(np.array([0.0, 1.0]))
    y, yhat, every = a.native(a.label[at]), a.native(a.judge[at]), a.native(a.judge)
    _, low, high = small_n_reference.powered(y, yhat, every, mean.lam, hi - lo)  # PPI++, small-n corrected
    assert (mean.powered.low, mean.powered.high) == (
        pytest.approx(max(lo, low), abs=1e-9), pytest.approx(min(hi, high), abs=1e-9)
    )  # fmt: skip
    outside = next(i for i, t in enumerate(a.texts) if t not in plan.chosen)
    a.label[outside] = 1.0
    with pytest.raises(PlanError, match=f"not in the labelling plan 'p' \\(e.g. '{a.texts[outside]}'\\)"):
        figures("A", a, plan, "ann", 0.1)
