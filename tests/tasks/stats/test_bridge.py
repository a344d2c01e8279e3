"""Judge succession's statistics (#54): a new judge that rescales the old one is bridged from a small
sample (the mapping recovered, the stitched mean near the full re-judge's, inside its band); one
that reorders texts, or whose mapping fails on the canary or a genre, is refused with the reason."""

import numpy as np
import pytest

from rubricflow.tasks.stats import bridge


@pytest.fixture
def corpus():
    rng = np.random.default_rng(3)
    old = rng.beta(4, 2, 600)
    new = 0.1 + 0.6 * old**1.5 + rng.normal(0, 0.01, 600)  # shifted, rescaled, bent: same order
    return old, new, np.arange(600) // 300  # two nights


def test_a_rescaling_judge_is_stitched_from_a_five_percent_bridge(corpus):
    old, new, nights = corpus
    chosen, weights = bridge.bridge_sample(old, nights, 30)
    assert len(chosen) == 30 and len(set(chosen)) == 30
    assert {int(n) for n in nights[chosen]} == {0, 1}  # both nights
    assert np.all(old[chosen].max() > np.quantile(old, 0.75)) and old[chosen].min() < np.quantile(old, 0.25)
    result = bridge.stitch(old, chosen, new[chosen], weights, reps=100)
    assert result.stitchable and result.rank_agreement > 0.95
    assert abs(result.mean - new.mean()) < 0.01
    assert result.band[0] <= new.mean() <= result.band[1]
    assert set(result.errors) == set(bridge.KINDS) and result.mapping.kind == min(result.errors, key=result.errors.get)
    assert abs(result.mapping(0.5) - (0.1 + 0.6 * 0.5**1.5)) < 0.03


def test_a_judge_that_reorders_texts_is_refused_with_the_reason(corpus):
    old, new, nights = corpus
    shuffled = np.random.default_rng(0).permutation(new)
    chosen, weights = bridge.bridge_sample(old, nights, 30)
    result = bridge.stitch(old, chosen, shuffled[chosen], weights, reps=20)
    assert not result.stitchable
    assert "reorders texts" in result.refusals[0] and "rho =" in result.refusals[0]


def test_a_mapping_that_fails_on_one_genre_does_not_transport(corpus):
    old, new, _ = corpus
    genres = np.where(np.arange(600) % 3 == 0, "poetry", "news")
    shifted = np.where(genres == "poetry", new + 0.1, new)  # the new judge is kinder to poetry only
    mapping = bridge.fit("linear", old[genres == "news"], shifted[genres == "news"])
    reasons = bridge.transports(mapping, old, shifted, genres, "genre", tolerance=0.02)
    assert len(reasons) == 1 and "genre poetry" in reasons[0] and "+0.09" in reasons[0]
    assert bridge.transports(mapping, old, new, genres, "genre", tolerance=0.02) == []


def test_each_kind_of_mapping_is_monotone_and_fits_its_pairs():
    x = np.array([0.0, 0.1, 0.2, 0.2, 0.5, 0.7, 0.9, 1.0])
    y = 2 * x + 1
    for kind in bridge.KINDS:
        mapped = bridge.fit(kind, x, y)(np.linspace(0, 1, 11))
        assert np.all(np.diff(mapped) >= -1e-12), kind
    assert np.allclose(bridge.fit("linear", x, y)(x), y)
    assert np.allclose(bridge.fit("isotonic", x, y)(x), y)
    with pytest.raises(ValueError, match="too small"):
        bridge.choose(x[:5], y[:5])


def test_an_ab_restated_through_the_mapping_says_when_its_decision_flips():
    a = np.linspace(0.4, 0.6, 40)
    b = a - 0.01 + np.random.default_rng(1).normal(0, 0.002, 40)
    squash = bridge.Mapping("linear", (0.0, 1.0), (0.5, 0.5 + 1e-4))  # the new judge barely tells them apart
    kept = bridge.restate_ab(bridge.fit("linear", [0, 1], [0.1, 0.9]), 0.0, a, b)
    assert kept["before"]["decision"] == kept["after"]["decision"] == "A" and not kept["flips"]
    flipped = bridge.restate_ab(squash, 0.001, a, b)
    assert flipped["after"]["decision"] == "none" and flipped["flips"]


def test_both_judges_equated_to_the_humans_give_one_human_mean_and_say_which_agrees_better(corpus):
    old, new, nights = corpus
    rng = np.random.default_rng(5)
    humans = 1 + 4 * old + rng.normal(0, 0.3, 600)  # the humans' 1-5 scale follows the old judge
    labelled = rng.choice(600, 80, replace=False)
    chosen, weights = bridge.bridge_sample(old, nights, 30)
    mapping = bridge.stitch(old, chosen, new[chosen], weights, reps=20).mapping
    before = bridge.equated_to_humans(humans[labelled], old[labelled], old[labelled], old)
    noisy = new + rng.normal(0, 0.1, 600)  # a new judge that tracks the humans less well
    after = bridge.equated_to_humans(humans[labelled], noisy[labelled], old[labelled], old, to_judge=mapping)
    for side in (before, after):
        assert side["interval"][0] <= humans.mean() <= side["interval"][1], side
    assert abs(before["human_mean"] - after["human_mean"]) < 0.1
    assert after["error_against_humans"] > before["error_against_humans"]
