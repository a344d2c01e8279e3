"""Each agreement statistic against published values or an independent implementation."""

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats import inter_rater

from rubricflow.tasks.stats.agreement import (
    alpha,
    bootstrap_mean_ci,
    categories,
    confusion,
    fleiss,
    kappas,
    rater_agreement,
)


def test_cohen_kappa_matches_the_textbook_example():
    # Wikipedia's "Cohen's kappa" example: 50 proposals, yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> 0.4
    a = [1] * 25 + [0] * 25
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    cohen, qwk = kappas(a, b)
    assert cohen == pytest.approx(0.4)
    assert qwk == pytest.approx(0.4)  # two categories: the weights change nothing


def test_quadratic_kappa_of_a_perfect_reversal_is_minus_one_and_of_identity_one():
    assert kappas([1, 2, 3], [3, 2, 1])[1] == pytest.approx(-1.0)
    assert kappas([1, 2, 3, 3], [1, 2, 3, 3])[1] == pytest.approx(1.0)


def test_fleiss_kappa_matches_the_textbook_example():
    # Wikipedia's "Fleiss' kappa" worked example: 10 subjects, 14 raters, 5 categories -> 0.210
    counts = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    codes = np.array([[cat for cat, n in enumerate(row) for _ in range(n)] for row in counts])  # subjects x raters
    assert fleiss(codes) == pytest.approx(0.2099, abs=5e-5)


def test_krippendorff_alpha_matches_krippendorffs_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 coders, 12 units, gaps
    nan = np.nan
    data = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
    assert alpha(data, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert alpha(data, "ordinal") == pytest.approx(0.815, abs=5e-4)
    assert alpha(data, "interval") == pytest.approx(0.849, abs=5e-4)


def test_bootstrap_over_value_counts_matches_scipys_row_bootstrap():
    rng = np.random.default_rng(1)
    deltas = rng.choice([-0.5, 0.0, 0.25, 0.5, 1.0], size=400, p=[0.1, 0.4, 0.2, 0.2, 0.1])
    values, counts = np.unique(deltas, return_counts=True)
    lo, hi = bootstrap_mean_ci(values, counts, resamples=4000, seed=3)
    ref = stats.bootstrap((deltas,), np.mean, n_resamples=4000, method="percentile", random_state=3).confidence_interval
    assert lo == pytest.approx(ref.low, abs=0.01) and hi == pytest.approx(ref.high, abs=0.01)
    assert lo < deltas.mean() < hi
    assert bootstrap_mean_ci([1.0], [1]) is None


def test_the_bootstrap_interval_does_not_depend_on_the_order_the_values_arrive_in():
    # SQL hands the distinct deltas over in its hash aggregate's order; a stored comparison and a fresh
    # one of the same data must agree (CI once saw them differ)
    values, counts = [-0.5, 0.0, 0.25, 0.5, 1.0], [3, 40, 11, 9, 2]
    once = bootstrap_mean_ci(values, counts, resamples=500, seed=0)
    assert bootstrap_mean_ci(values[::-1], counts[::-1], resamples=500, seed=0) == once


def test_confusion_spans_the_full_range_of_codes():
    levels, table = confusion([1, 3, 3], [1, 1, 3])
    assert levels == [1, 2, 3]
    assert table.tolist() == [[1, 0, 0], [0, 0, 0], [1, 0, 1]]


def test_rater_agreement_with_several_humans_and_the_baseline():
    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, size=60)
    humans = {
        f"h{i}": {f"t{k}": float(np.clip(truth[k] + rng.integers(-1, 2), 1, 5)) for k in range(60)} for i in range(3)
    }
    judge = {f"t{k}": float(truth[k]) for k in range(60)}
    judge.pop("t0")  # the judge skipped one text
    (row,) = rater_agreement({"quality": {**humans, "judge": judge}}, "judge", ["h0", "h1", "h2"])
    assert row.n == 59 and row.humans == 3
    texts = [f"t{k}" for k in range(1, 60)]
    grid = np.array([[humans[h][t] for t in texts] for h in ("h0", "h1", "h2")])
    consensus = grid.mean(axis=0)
    j = np.array([judge[t] for t in texts])
    assert row.pearson == pytest.approx(stats.pearsonr(j, consensus).statistic)
    assert row.kendall_tau_b == pytest.approx(stats.kendalltau(j, consensus).statistic)
    _, table = confusion(categories(j), categories(consensus))
    assert row.qwk == pytest.approx(inter_rater.cohens_kappa(table, wt="quadratic").kappa)
    assert np.array(row.confusion).sum() == 59
    full = grid.T  # texts x raters, over the texts the judge also scored
    assert row.fleiss_kappa == pytest.approx(
        inter_rater.fleiss_kappa(inter_rater.aggregate_raters(full.astype(int))[0])
    )
    assert row.alpha_humans < row.alpha_with_judge  # the judge sits on the truth the humans scatter around
    assert 0 < row.human_pearson < 1 and row.human_qwk is not None


def test_half_point_scores_round_up_not_to_even():
    """Round-half-to-even put 1.5 and 2.5 both in category 2, changing QWK on half-point human scales."""
    assert categories([1.5, 2.5, 3.5, 0.5, 2.49]).tolist() == [2, 3, 4, 1, 2]
    assert categories([0.25, 0.75], step=0.5).tolist() == [1, 2]


def test_a_constant_judge_gets_undefined_correlations_with_the_reason_and_no_negative_zero():
    scores = {
        "c": {
            "judge": {f"t{i}": 3.0 for i in range(6)},
            "ann": {f"t{i}": float(1 + i % 5) for i in range(6)},
            "bob": {f"t{i}": float(1 + (i + 1) % 5) for i in range(4)},
        }
    }  # bob rated 4 of the 6 texts
    (row,) = rater_agreement(scores, "judge", ["ann", "bob"])
    assert np.isnan(row.pearson) and np.isnan(row.spearman)
    assert "judge gave every text the same score (3)" in row.note
    assert str(row.qwk) == "0.0" and str(row.cohen_kappa) == "0.0"  # not -0.0
    assert row.fleiss_texts == 4  # Fleiss' kappa counts only the texts every human rated


def test_two_texts_give_no_correlation_and_say_why():
    """An outside probe: `calibrate` on 2 labelled texts printed Pearson 1.0 (two points lie on a
    line: +/-1 whatever the agreement), and that calibration cleared a version flagged at r = -1."""
    from rubricflow.tasks.stats.agreement import rater_agreement

    scores = {"c": {"judge": {"a": 1.0, "b": 2.0}, "human": {"a": 5.0, "b": 4.0}}}
    [row] = rater_agreement(scores, "judge", ["human"])
    assert row.n == 2 and all(np.isnan(x) for x in (row.pearson, row.spearman, row.kendall_tau_b))
    assert row.note.startswith("2 texts: correlations need 3 (n/a)")
    scores["c"]["judge"]["x"], scores["c"]["human"]["x"] = 3.0, 3.0
    [three] = rater_agreement(scores, "judge", ["human"])
    assert three.pearson == pytest.approx(-1.0) and three.note == ""


def test_an_undefined_alpha_is_nan_with_the_reason_not_a_crash():
    """An outside probe: humans who all gave one score, or who rated different texts, made the
    krippendorff package raise, and `calibrate` lost every criterion's figures to a traceback."""
    same = {
        "c": {"h1": dict.fromkeys("abc", 3.0), "h2": dict.fromkeys("abc", 3.0), "j": {"a": 1.0, "b": 3.0, "c": 5.0}}
    }
    [row] = rater_agreement(same, "j", ["h1", "h2"])
    assert np.isnan(row.alpha_humans) and row.alpha_with_judge == pytest.approx(
        alpha([[3, 3, 3], [3, 3, 3], [1, 3, 5]])
    )
    assert "Krippendorff's alpha of the humans is undefined (n/a): every rating is the same" in row.note
    apart = {
        "c": {"h1": {"a": 1.0, "b": 2.0}, "h2": {"c": 4.0, "d": 5.0}, "j": {"a": 1.0, "b": 3.0, "c": 4.0, "d": 4.0}}
    }
    [row] = rater_agreement(apart, "j", ["h1", "h2"])
    assert np.isnan(row.alpha_humans) and "no text was rated by two of them" in row.note
    assert row.alpha_with_judge == pytest.approx(alpha([[1, 2, np.nan, np.nan], [np.nan, np.nan, 4, 5], [1, 3, 4, 4]]))


def test_the_human_baseline_r_leaves_out_humans_with_two_shared_texts_and_says_so():
    """Two points give r = +/-1: the human baseline printed 1.000 on 2 texts."""
    two = {"c": {"h1": {"a": 1.0, "b": 4.0}, "h2": {"a": 2.0, "b": 3.0}, "j": {"a": 2.0, "b": 5.0}}}
    [row] = rater_agreement(two, "j", ["h1", "h2"])
    assert np.isnan(row.human_pearson) and "human r is n/a: 0 of 2 humans: 2 share fewer than 3 texts" in row.note
    assert row.human_qwk == pytest.approx(0.6)  # kappa on 2 texts stands (sklearn's quadratic kappa: 0.6)
    # h3 shares 2 texts with the others: left out of the average, which is h1's and h2's
    texts = {"a": 1.0, "b": 2.0, "c": 4.0, "d": 5.0}
    three = {"c": {"h1": texts, "h2": {k: v + (k == "b") for k, v in texts.items()}, "h3": {"a": 2.0, "d": 4.0}}}
    three["c"]["j"] = texts
    [row] = rater_agreement(three, "j", ["h1", "h2", "h3"])
    grid = np.array([[texts[t], texts[t] + (t == "b"), {"a": 2.0, "d": 4.0}.get(t, np.nan)] for t in "abcd"]).T
    expected = []
    for i in (0, 1):  # each against the mean of the other two where they rated
        others = np.nanmean(np.delete(grid, i, axis=0), axis=0)
        expected.append(stats.pearsonr(grid[i], others).statistic)
    assert row.human_pearson == pytest.approx(np.mean(expected))
    assert "human r averages 2 of 3 humans: 1 share fewer than 3 texts" in row.note


def test_deltas_that_cancel_give_an_interval_that_reaches_zero_not_one_just_below():
    """Scores are stored to 9 decimals, so the deltas of identical score changes differ by 1e-9
    (-0.166666667 and -0.166666666): a resample whose deltas cancel came out -6.6e-11, an interval
    printed [-0.108, -0.000] that the gate read as a significant drop."""
    noisy = [-0.166666667, -0.166666666, 0.083333333, 0.083333334, 0.0], [6, 6, 5, 5, 4]
    exact = bootstrap_mean_ci([-1 / 6, 1 / 12, 0.0], [12, 10, 4], resamples=2000, seed=0)
    assert bootstrap_mean_ci(*noisy, resamples=2000, seed=0) == exact  # the same draws, the same bits
    lo, hi = exact
    assert lo < 0 and hi == 0.0 and str(hi) == "0.0"  # the upper end is a resample whose deltas cancel
