"""`estimate`'s figures at the edges a team meets first: the least label count (10), ties, every label
equal, pass rates of 0 and 1. Each interval is checked against a reference on the same numbers: the
point and the normal standard error are ppi-python's, the quantile is scipy's Student t, the small-n
correction adds one pseudo-observation of the scale's largest variance, and a pass rate's labels-only
interval is statsmodels' Clopper-Pearson ('beta'). No interval has zero width, and equal labels or a
small label count always come with a note."""

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from rubricflow.tasks.stats.estimate import Criterion, figures, warnings
from tests.tasks.stats import small_n_reference

TEXTS = [f"t{i:02d}" for i in range(40)]


def criterion(judge: np.ndarray, labels: np.ndarray) -> Criterion:
    """A 1-5 criterion (pass at 0.5: a 3) judged on 40 texts, the first len(labels) labelled."""
    label = np.full(len(TEXTS), np.nan)
    label[: len(labels)] = (labels - 1) / 4
    return Criterion("c", TEXTS, (judge - 1) / 4, label, (1.0, 5.0), 1.0, 0.5)


def figure(records, name: str):
    return next(r for r in records if r.figure == name)


def test_ten_tied_labels_match_the_references_within_the_scale():
    judge = np.tile([2.0, 3, 3, 4, 5], 8)
    labels = np.array([3.0, 3, 4, 4, 4, 2, 3, 5, 4, 4])  # n = 10, ties
    got = figures("A", criterion(judge, labels), None, "ann", 0.1)
    mean = figure(got, "mean")
    point, low, high = small_n_reference.powered(labels, judge[:10], judge, mean.lam, 4.0)
    assert mean.powered.estimate == pytest.approx(point, abs=1e-12)
    assert (mean.powered.low, mean.powered.high) == (pytest.approx(max(1, low)), pytest.approx(min(5, high)))
    low, high = small_n_reference.labels_only(labels, 4.0)
    assert (mean.labels_only.low, mean.labels_only.high) == (pytest.approx(low), pytest.approx(high))
    rate = figure(got, "pass_rate")
    low, high = proportion_confint(int((labels >= 3).sum()), 10, alpha=0.1, method="beta")
    assert (rate.labels_only.low, rate.labels_only.high) == (pytest.approx(low), pytest.approx(high))
    assert rate.powered.low <= low and rate.powered.high >= high  # under 10 passes or fails: holds the exact one
    assert any("fewer than 30 labels on c" in note for note in warnings(got))


@pytest.mark.parametrize("value", [1.0, 5.0])  # every label fails (rate 0) / passes (rate 1), all equal
def test_equal_labels_give_a_clipped_interval_of_nonzero_width_and_a_warning(value):
    judge = np.tile([1.0, 2, 3, 4, 5], 8)
    got = figures("A", criterion(judge, np.full(10, value)), None, "ann", 0.1)
    for f in got:
        for span in (f.labels_only, f.powered):
            lo, hi = (0.0, 1.0) if f.figure == "pass_rate" else (1.0, 5.0)
            assert lo <= span.low <= span.estimate <= span.high <= hi, (f.figure, span)
            assert span.width > 0, (f.figure, span)
    rate = figure(got, "pass_rate").labels_only
    low, high = proportion_confint(10 if value == 5 else 0, 10, alpha=0.1, method="beta")
    assert (rate.estimate, rate.low, rate.high) == (value == 5, pytest.approx(low), pytest.approx(high))
    low, high = small_n_reference.labels_only(np.full(10, value), 4.0)
    mean = figure(got, "mean").labels_only
    assert (mean.low, mean.high) == (pytest.approx(max(1, low)), pytest.approx(min(5, high)))
    notes = warnings(got)
    for name in ("pass_rate", "mean"):
        assert any(f"A c {name}: every one of the 10 labelled values is equal" in n and "not exact" in n for n in notes)


def test_labels_gained_are_of_the_intervals_shown_clipped_to_the_range():
    """An outside probe: 10 labels all at the top of the scale, a pass rate of 1: both intervals show
    [0.7411, 1], yet "labels gained -4.5" (5.45 effective) came from the powered interval before it
    was clipped to [0, 1]. The same intervals shown are the same labels: 10 effective, 0 gained."""
    import numpy as np

    from rubricflow.tasks.stats.estimate import Criterion, figures

    texts = [f"t{i}" for i in range(40)]
    judge = np.linspace(0.2, 1.0, 40)
    label = np.full(40, np.nan)
    label[:10] = 1.0  # every label the scale's top: the humans pass all 10
    c = Criterion("usefulness", texts, judge, label, (1.0, 5.0), 1.0, 0.5)
    rate = next(f for f in figures("a", c, None, "human", 0.1) if f.figure == "pass_rate")
    assert rate.labels_only.high == rate.powered.high == 1.0
    assert rate.effective_labels == pytest.approx(10 * (rate.labels_only.width / rate.powered.width) ** 2)


def test_a_judge_that_says_nothing_gives_the_labels_only_figure_for_a_rate_too():
    """docs/analysis.md: lambda 0 (the judge's scores do not vary) is the labels-only figure; an
    outside probe found the pass rate's powered interval [0.39, 0.98] beside its exact one [0.39, 0.91]."""
    import numpy as np

    from rubricflow.tasks.stats.estimate import Criterion, figures

    label = np.full(40, np.nan)
    label[:10] = [1.0, 0.75, 0.25, 1.0, 0.75, 1.0, 0.5, 1.0, 0.75, 1.0]
    c = Criterion("tone", [f"t{i}" for i in range(40)], np.full(40, 0.5), label, (1.0, 5.0), 1.0, 0.5)
    for figure in figures("a", c, None, "human", 0.1):
        assert figure.lam == 0 and figure.powered == figure.labels_only, figure.figure
