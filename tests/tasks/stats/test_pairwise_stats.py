"""The pairwise statistics: Bradley-Terry ratings against the closed form, and the label kappa."""

import math

import pytest

from rubricflow.tasks.stats.pairwise_stats import bradley_terry, label_kappa


def test_two_systems_rate_by_the_log_odds_of_their_wins():
    outcomes = [("x", "y", "a")] * 30 + [("x", "y", "b")] * 10  # x wins 3 of 4
    ranking = bradley_terry(outcomes)
    gap = 400 * math.log10(30 / 10)  # the MLE of a two-system Bradley-Terry model, on the Elo scale
    assert [r["system"] for r in ranking] == ["x", "y"]
    assert ranking[0]["rating"] - ranking[1]["rating"] == pytest.approx(gap, rel=0.02)
    assert ranking[0]["low"] < ranking[0]["rating"] < ranking[0]["high"]
    assert ranking[0]["comparisons"] == 40


def test_ties_count_half_and_order_follows_strength():
    outcomes = (
        [("a", "b", "a")] * 8
        + [("b", "c", "a")] * 8
        + [("a", "c", "a")] * 8
        + [("a", "b", "tie")] * 4
        + [("c", "a", "b")] * 2
    )
    assert [r["system"] for r in bradley_terry(outcomes)] == ["a", "b", "c"]
    assert bradley_terry(outcomes[::-1]) == bradley_terry(outcomes)  # SQL fixes no order; the intervals must not move
    even = bradley_terry([("p", "q", "tie")] * 10)
    assert abs(even[0]["rating"]) < 1e-6 and abs(even[1]["rating"]) < 1e-6


def test_label_kappa_is_cohens_over_a_b_tie():
    assert label_kappa(["a", "b", "a", "b"], ["a", "b", "a", "b"]) == pytest.approx(1.0)
    assert label_kappa(["a", "a", "a", "a"], ["a", "b", "a", "b"]) == pytest.approx(0.0)
    assert label_kappa(["a"], ["a"]) is None
