"""The objectives of a multi-objective `improve evolve`, each as seed 001 defines it, and the acceptance
rules: tolerances, weighted, Pareto; the structural invariants; and the multi-objective settings naming
another evolution."""

import numpy as np
import pytest

from rubricflow.errors import InputError
from rubricflow.rubrics.algebra import evolve
from rubricflow.rubrics.formats import load_rubric
from rubricflow.tasks.improve import invariants
from rubricflow.tasks.improve.evolve import evolution_id
from rubricflow.tasks.improve.objectives import Objectives, compute, consistency, front, refusal
from tests.conftest import ROOT, SHARED

RUBRIC = load_rubric(ROOT / "flows" / "samples" / "topical-chat-dialogue.yaml")


SEED = (SHARED.parent / "seeds" / "001_646671bcea772b80.txt").read_text(encoding="utf-8")


def row(score, human, units=(), cv=None, samples=1, low=1.0, high=5.0) -> dict:
    return {
        "score": score,
        "human": human,
        "human_min": low,
        "human_max": high,
        "units": list(units),
        "cv": cv,
        "samples": samples,
    }


def test_the_three_objectives_are_the_seeds_definitions():
    """Seed 001: agreement "normalized absolute error vs. human annotations (1 - mean error, scaled 0-1)",
    consistency "1 - coefficient of variation across repeated runs", discrimination "normalized entropy of
    the score distribution (0 = all same score, 1 = uniform spread)" (before: Pearson r, 1 - twice the
    spread, an AUC)."""
    assert "**Agreement** -- normalized absolute error vs. human annotations (1 - mean error, scaled 0-1)." in SEED
    assert "**Consistency** -- 1 - coefficient of variation across repeated runs" in SEED
    assert "**Discrimination** -- normalized entropy of the score distribution (0 = all same score, 1 = uniform" in SEED
    # humans 1..5 -> 0, 0.5, 1 on the unit scale; errors 0.1, 0.2, 0.0
    rows = [row(0.1, 1, [0.05]), row(0.7, 3, [0.55]), row(1.0, 5, [0.95])]
    assert compute(rows)["agreement"] == pytest.approx(1 - np.mean([0.1, 0.2, 0.0]))
    same = [row(0.5, h, [0.5, 0.52]) for h in (1, 3, 5)]
    assert compute(same)["discrimination"] == 0.0  # one bin: the same score for everything
    uniform = [row(0.5, 3, [i / 10 + 0.05]) for i in range(10)]
    assert compute(uniform)["discrimination"] == pytest.approx(1.0)  # every bin once
    two = [row(0.5, 3, [0.05, 0.95])]
    assert compute(two)["discrimination"] == pytest.approx(1 / np.log2(10))
    assert compute([row(0.5, 3, [0.5])])["consistency"] is None  # one sample: no re-asks to be consistent across
    assert compute([row(0.5, 3, low=3, high=3)])["agreement"] is None  # every human the same: no scale


def test_consistency_is_one_minus_the_mean_coefficient_of_variation():
    rows = [row(0.5, 1, cv=cv, samples=3) for cv in (0.0, 0.1, 0.2)]
    assert consistency(rows) == pytest.approx(1 - np.mean([0.0, 0.1, 0.2]))
    assert consistency([row(0.5, 1, cv=1.7, samples=3)]) == 0.0  # floored, as rubrify floors it


def test_acceptance_by_weights_by_pareto_and_by_tolerances():
    before = {"agreement": 0.30, "consistency": 0.80, "discrimination": 0.60}
    trade = {"agreement": 0.40, "consistency": 0.70, "discrimination": 0.60}
    assert refusal(before, trade, Objectives({"agreement": 2, "consistency": 1})) is None  # 0.500 > 0.467
    assert "did not improve" in refusal(before, trade, Objectives({"agreement": 1, "consistency": 2}))  # 0.6 < 0.633
    assert "did not improve" in refusal(before, trade, Objectives({"agreement": 1, "consistency": 1}))  # a tie
    pareto = Objectives({"agreement": 1, "consistency": 1}, select="pareto")
    assert refusal(before, trade, pareto) is None  # a trade-off is on the front
    worse = {"agreement": 0.20, "consistency": 0.70, "discrimination": 0.60}
    assert "dominated" in refusal(before, worse, pareto)
    strict = Objectives({"agreement": 1, "consistency": 1}, select="pareto", tolerances={"consistency": 0.05})
    assert "consistency fell beyond its tolerance 0.05 (0.800 -> 0.700)" == refusal(before, trade, strict)
    points = {"start": before, "trade": trade, "worse": worse}
    assert front(points, ["agreement", "consistency"]) == ["start", "trade"]
    with pytest.raises(InputError, match="unknown objective fluency"):
        Objectives({"fluency": 1})


def test_invariants_let_only_text_and_weights_evolve():
    cid = RUBRIC.criteria[0].id
    reworded = evolve(RUBRIC, [{"op": "rewrite_criterion", "id": cid, "changes": {"description": "New words."}}])
    reweighted = evolve(RUBRIC, [{"op": "adjust_weight", "id": cid, "weight": 3}])
    assert invariants.broken(RUBRIC, reworded) is None and invariants.broken(RUBRIC, reweighted) is None
    pattern = {"op": "add_pattern", "pattern": {"id": "p", "words": ["fun"]}}
    patterned = evolve(RUBRIC, [pattern, {"op": "rewrite_criterion", "id": cid, "changes": {"patterns": ["p"]}}])
    assert "criteria changed shape" in invariants.broken(RUBRIC, patterned)
    removed = evolve(RUBRIC, [{"op": "remove_criterion", "id": cid}])
    assert "criteria changed shape" in invariants.broken(RUBRIC, removed)


def test_multi_objective_settings_name_another_evolution_and_the_defaults_keep_old_ids():
    args = ("tc", "r" * 64, "j" * 64, "human:overall", 0, 0.2, 0.2, "x" * 64)
    assert evolution_id(*args) == evolution_id(*args, extra=Objectives().key())
    pareto = Objectives({"agreement": 1, "discrimination": 1}, select="pareto").key()
    assert evolution_id(*args, extra=pareto) != evolution_id(*args)


def test_rubrifys_agreement_is_per_criterion_on_each_scale_and_weighted_over_criteria():
    """Seed 001's agreement as rubrify's evolution computes it (rubricflow.rubrify's evolve_rubric): each
    criterion's 1 - mean |human - judge| / its scale's range (the SQL's `error`), then the criteria's
    weighted mean; a judge that gives the humans' scores gets 1.0 even where the humans all agree (before:
    the text score against the min-max scaled mean of the human scores: 0.6, or None)."""
    assert "**Agreement** -- normalized absolute error vs. human annotations (1 - mean error, scaled 0-1)." in SEED

    def labelled(human, errors) -> dict:  # errors: {criterion: (weight, |human - judge| / range)}
        cells = [{"criterion_id": c, "weight": w, "error": e} for c, (w, e) in errors.items()]
        return {**row(0.6, human, low=3, high=3), "criteria": cells}

    exact = [labelled(3, {"C1": (1.0, 0.0), "C2": (3.0, 0.0)}) for _ in range(2)]
    assert compute(exact)["agreement"] is None  # the text score against the target: humans all agree
    assert compute(exact, per_criterion=True)["agreement"] == 1.0
    # C1 on 0..5 (weight 1): humans 4 and 3, judge 2 and 3 -> 1 - mean(0.4, 0) = 0.8; C2 on 0..2 (weight 3):
    # humans 2 and 0, judge 1 and 0 -> 1 - mean(0.5, 0) = 0.75
    apart = [labelled(3, {"C1": (1.0, 0.4), "C2": (3.0, 0.5)}), labelled(3, {"C1": (1.0, 0.0), "C2": (3.0, 0.0)})]
    assert compute(apart, per_criterion=True)["agreement"] == pytest.approx((0.8 + 3 * 0.75) / 4)
    assert compute([{**row(0.6, 3), "criteria": None}], per_criterion=True)["agreement"] is None  # nothing labelled
