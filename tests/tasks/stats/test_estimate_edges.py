"""`estimate`'s figures at the edges a team meets first: the least label count (10), ties, every label
equal, pass rates of 0 and 1. The intervals are ppi-python's, kept within the figure's range, and a
zero-width interval or a small label count always comes with a note."""

import numpy as np
import pytest
from ppi_py import classical_mean_ci, ppi_mean_ci

from rubricflow.tasks.stats.estimate import Criterion, figures, warnings

TEXTS = [f"t{i:02d}" for i in range(40)]


def criterion(judge: np.ndarray, labels: np.ndarray) -> Criterion:
    """A 1-5 criterion (pass at 0.5: a 3) judged on 40 texts, the first len(labels) labelled."""
    label = np.full(len(TEXTS), np.nan)
    label[: len(labels)] = (labels - 1) / 4
    return Criterion("c", TEXTS, (judge - 1) / 4, label, (1.0, 5.0), 1.0, 0.5)


def interval(records, figure: str, kind: str):
    f = next(r for r in records if r.figure == figure)
    return getattr(f, kind)


def test_ten_tied_labels_match_ppi_python_within_the_scale():
    judge = np.tile([2.0, 3, 3, 4, 5], 8)
    labels = np.array([3.0, 3, 4, 4, 4, 2, 3, 5, 4, 4])  # n = 10, ties
    got = figures("A", criterion(judge, labels), None, "ann", 0.1)
    mean = next(f for f in got if f.figure == "mean")
    (low,), (high,) = ppi_mean_ci(labels, judge[:10], judge, alpha=0.1, lam=mean.lam)
    assert (mean.powered.low, mean.powered.high) == (pytest.approx(max(1, low)), pytest.approx(min(5, high)))
    low, high = classical_mean_ci(labels, alpha=0.1)
    assert (mean.labels_only.low, mean.labels_only.high) == (pytest.approx(low), pytest.approx(high))
    assert any("fewer than 30 labels on c" in note for note in warnings(got))


@pytest.mark.parametrize("value", [1.0, 5.0])  # every label fails (rate 0) / passes (rate 1), all equal
def test_equal_labels_give_a_clipped_interval_and_a_zero_width_warning(value):
    judge = np.tile([1.0, 2, 3, 4, 5], 8)
    got = figures("A", criterion(judge, np.full(10, value)), None, "ann", 0.1)
    for f in got:
        for span in (f.labels_only, f.powered):
            lo, hi = (0.0, 1.0) if f.figure == "pass_rate" else (1.0, 5.0)
            assert lo <= span.low <= span.estimate <= span.high <= hi, (f.figure, span)
    rate = interval(got, "pass_rate", "labels_only")
    assert rate.estimate == (1.0 if value == 5 else 0.0) and rate.width == 0
    notes = warnings(got)
    assert any("A c pass_rate: the labels-only interval has zero width" in note for note in notes), notes
    assert any("A c mean: the labels-only interval has zero width" in note for note in notes), notes
