"""The cascade's continuous confidence (the margin of the cheap judge's expected score to the pass
threshold) on real recorded judgments of two different models (bench/data, JudgeBench), against the
earlier modal share of re-asks; the calibration sample keeping its failed texts; the cost line."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from rubricflow.cli.cascade import cost_against_strong_only
from rubricflow.tasks.stats.cascade import choose_threshold, conservative_agreement, margin_confidence

BENCH = Path(__file__).resolve().parents[3] / "bench" / "cascade.py"


def bench():
    spec = importlib.util.spec_from_file_location("bench_cascade", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_margin_is_the_distance_to_the_nearest_verdict_change():
    assert margin_confidence(0.8, [0.5]) == pytest.approx(0.3)
    assert margin_confidence(0.45, [0.5]) == pytest.approx(0.05)
    assert margin_confidence(0.62, [0.25, 0.5, 0.75]) == pytest.approx(0.12)  # label bands: the nearest bound
    assert margin_confidence(0.3, []) == 1.0  # one verdict whatever the score: sure, and never inf ("escalate all")


def test_failed_strong_calibration_texts_count_against_the_cheap_judge():
    """Dropping the texts the strong judge failed on would certify a threshold the sample with them
    in cannot: with them counted as disagreements, the bound is taken over every confident text."""
    confidence = [0.9] * 40
    agree = [True] * 34 + [None] * 6  # 6 strong failures among 40 confident texts
    kept_only_judged = choose_threshold(confidence[:34], [True] * 34, 0.9, 0.1)
    counted = choose_threshold(confidence, conservative_agreement(agree), 0.9, 0.1)
    assert kept_only_judged.value == 0.9 and kept_only_judged.disagreements == 0
    assert counted.value == math.inf  # 6 of 40 disagreements: 0.9 cannot be certified


def test_on_real_recorded_judges_the_margin_keeps_what_the_modal_share_cannot():
    """JudgeBench's recorded rewards of Skywork-Reward-Llama-3.1-8B (cheap) and -Gemma-2-27B (strong),
    which agree on >= 78% of the 350 pairs: at target 0.8 the margin keeps >= 40% of the test texts on
    the cheap judge with the guarantee holding in >= 1 - delta of splits; the modal share of the two
    recorded games (near 1 on every pair) keeps far less and costs more than strong-only."""
    b = bench()
    data = b.recorded(350)
    assert data["agree"].size == 350 and data["agree"].mean() >= 0.78
    args = type("Args", (), {"seed": 0, "splits": 60, "calibration": 0.5, "agreement": 0.8, "delta": 0.1})()
    args.price_ratio = 0.1
    margin = b.splits(data["margin"], data["agree"], 1, args)
    modal = b.splits(data["modal"], data["agree"], 2, args)
    assert margin["kept"] >= 0.4 and margin["reached"] >= 0.9 and margin["cost"] < 1
    assert modal["kept"] < margin["kept"] / 2 and modal["cost"] > margin["cost"]
    assert len(np.unique(data["margin"])) > 200 and len(np.unique(data["modal"])) <= 2


def test_the_cost_line_counts_re_asks_and_says_when_dollars_are_unknown():
    costs = {"cheap_calls": 270, "strong_calls": 35, "strong_only_calls": 90.0, "cheap_usd": 0.27,
             "strong_usd": 3.5, "strong_only_usd": 9.0}  # fmt: skip
    assert cost_against_strong_only(costs) == "cascade $3.7700 = 0.419 of strong-only $9.0000"
    unpriced = costs | {"cheap_usd": None, "strong_usd": None, "strong_only_usd": None}
    line = cost_against_strong_only(unpriced)
    assert line.startswith("270 cheap calls (re-asks included) + 35 strong calls against 90 strong-only calls")
    assert "dollars are unknown" in line
    cheap_unpriced = costs | {"cheap_usd": None}  # the offline judge is priced at 0, a cheap persona not at all
    assert "dollars are unknown" in cost_against_strong_only(cheap_unpriced)
    free = costs | {"cheap_usd": 0.0, "strong_usd": 0.0, "strong_only_usd": 0.0}
    assert cost_against_strong_only(free).endswith("; $0 at these models' prices")
