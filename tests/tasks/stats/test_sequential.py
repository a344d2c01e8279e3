"""The confidence sequence behind `compare --sequential`: the paper's formulas evaluated directly,
scipy's fixed-n interval, and simulated coverage."""

import math

import numpy as np
import pytest
from scipy import stats

from rubricflow.tasks.stats.sequential import ConfidenceSequence, decision, run_sequence, seeded_order


def reference_bounds(diffs, alpha, grid):
    """Waudby-Smith & Ramdas (2024), Theorem 3, one observation and one grid point at a time, as
    written in the paper: mu-hat_t = (1/2 + sum x) / (t + 1), sigma-hat^2_t = (1/4 + sum (x_i -
    mu-hat_i)^2) / (t + 1), lambda_t = sqrt(2 log(2/alpha) / (sigma-hat^2_{t-1} t log(1 + t))),
    hedged capital 1/2 K+ + 1/2 K-, running intersection."""
    x = [(d + 1) / 2 for d in diffs]
    lower, upper, total, squares = -1.0, 1.0, 0.0, 0.0
    up = [0.0] * len(grid)
    down = [0.0] * len(grid)
    for t, xt in enumerate(x, start=1):
        variance = (0.25 + squares) / t
        lam = math.sqrt(2 * math.log(2 / alpha) / (variance * t * math.log(1 + t)))
        kept = []
        for k, m in enumerate(grid):
            up[k] += math.log(1 + min(lam, 0.5 / m) * (xt - m))
            down[k] += math.log(1 - min(lam, 0.5 / (1 - m)) * (xt - m))
            if 0.5 * math.exp(up[k]) + 0.5 * math.exp(down[k]) < 1 / alpha:
                kept.append(m)
        total += xt
        squares += (xt - (0.5 + total) / (t + 1)) ** 2
        half = 0.5 / len(grid)
        if kept:
            lower, upper = max(lower, 2 * (kept[0] - half) - 1), min(upper, 2 * (kept[-1] + half) - 1)
    return lower, upper


def test_the_sequence_is_the_papers_capital_process_however_the_observations_arrive():
    rng = np.random.default_rng(5)
    diffs = list(np.clip(rng.normal(0.3, 0.4, 120), -1, 1))
    grid = (np.arange(200) + 0.5) / 200
    expected = reference_bounds(diffs, 0.05, list(grid))
    at_once = ConfidenceSequence(0.05, grid=grid).update(diffs)
    in_pieces = ConfidenceSequence(0.05, grid=grid)
    for start in range(0, len(diffs), 7):
        in_pieces.update(diffs[start : start + 7])
    assert (at_once.lower, at_once.upper) == pytest.approx(expected)
    assert (in_pieces.lower, in_pieces.upper) == pytest.approx(expected)
    assert at_once.estimate == pytest.approx(np.mean(diffs))
    assert expected[0] > 0  # the data's effect is found


@pytest.mark.parametrize("n", [30, 200, 1000])
def test_the_sequence_is_never_narrower_than_scipys_fixed_n_interval(n):
    """Valid at every n at once costs width: at any one n it is wider than the t interval."""
    rng = np.random.default_rng(n)
    diffs = np.clip(rng.normal(0.1, 0.3, n), -1, 1)
    cs = ConfidenceSequence(0.05).update(diffs)
    t_low, t_high = stats.t.interval(0.95, n - 1, loc=diffs.mean(), scale=stats.sem(diffs))
    assert cs.lower <= t_low and cs.upper >= t_high
    assert cs.lower < diffs.mean() < cs.upper


def test_the_sequence_misses_the_true_mean_at_some_look_in_at_most_alpha_of_runs():
    rng = np.random.default_rng(11)
    misses = 0
    for _ in range(150):
        diffs = rng.choice([-1.0, 0.0, 0.0, 1.0, 1.0], size=300)  # true mean 0.2
        cs = ConfidenceSequence(0.1)
        for start in range(0, 300, 10):
            cs.update(diffs[start : start + 10])
            if not cs.lower <= 0.2 <= cs.upper:
                misses += 1
                break
    assert misses / 150 <= 0.1


def test_the_decision_and_the_order():
    assert decision(0.01, 0.2, None) == "B" and decision(-0.3, -0.01, 0.5) == "A"
    assert decision(-0.05, 0.04, 0.1) == "equivalent" and decision(-0.05, 0.04, None) is None
    assert decision(-0.2, 0.04, 0.1) is None
    ids = [f"t{i}" for i in range(50)]
    assert seeded_order(ids, 3) == seeded_order(list(reversed(ids)), 3) != seeded_order(ids, 4)
    assert sorted(seeded_order(ids, 3)) == sorted(ids)
    assert run_sequence([1.0] * 40, 0.05, None, 10)[:2] == ("B", 10)  # stops at the first look that decides
    with pytest.raises(ValueError, match="outside"):
        ConfidenceSequence(0.05).update([1.5])


@pytest.mark.parametrize("mean", [0.0, 0.2, -0.5])
def test_the_sequence_follows_a_maintained_librarys_betting_sequence(mean):
    """sequential-analysis (PyPI, pure Python; AGPL, so a test oracle here, not a dependency)
    implements the same hedged-capital betting sequence; it indexes the plug-in variance one
    observation earlier and widens by a whole grid step, so the bounds agree to within a few grid
    steps early and to 0.01 from 50 observations on, at every look."""
    betting = pytest.importorskip("sequential_analysis.procedures.betting")
    rng = np.random.default_rng(7)
    diffs = np.clip(rng.normal(mean, 0.5, 300), -1, 1)
    library = betting.BettingConfidenceSequence(lower=-1, upper=1, alpha=0.05, grid=1000, backend="numpy")
    state, ours = library.initial_state(), ConfidenceSequence(0.05)
    for n, value in enumerate(diffs, 1):
        state, theirs = library.step(state, {"x": float(value)})
        ours.update([value])
        tolerance = 0.06 if n < 50 else 0.01
        assert abs(ours.lower - theirs.lower) <= tolerance and abs(ours.upper - theirs.upper) <= tolerance, n
