"""The objectives of a multi-objective `improve evolve`, each checked against a reference implementation
(scipy) on the same numbers, and the acceptance rules: tolerances, weighted, Pareto; the structural
invariants; and the multi-objective settings naming another evolution."""

import numpy as np
import pytest
from scipy import stats

from rubricflow.errors import InputError
from rubricflow.rubrics.algebra import evolve
from rubricflow.rubrics.formats import load_rubric
from rubricflow.tasks.improve import invariants
from rubricflow.tasks.improve.evolve import evolution_id
from rubricflow.tasks.improve.objectives import Objectives, auc, compute, consistency, front, refusal
from tests.conftest import ROOT

RUBRIC = load_rubric(ROOT / "flows" / "samples" / "topical-chat-dialogue.yaml")


def test_agreement_and_discrimination_match_scipy():
    rng = np.random.default_rng(7)
    human = rng.integers(1, 4, 90).astype(float)
    score = np.clip(human / 3 + rng.normal(0, 0.3, 90), 0, 1).round(2)  # ties on purpose
    rows = [{"score": s, "human": h, "spread": None, "samples": 1} for s, h in zip(score, human, strict=True)]
    values = compute(rows)
    assert values["agreement"] == pytest.approx(stats.pearsonr(score, human).statistic)
    low, high = np.quantile(human, [1 / 3, 2 / 3])
    u = stats.mannwhitneyu(score[human >= high], score[human <= low]).statistic
    assert values["discrimination"] == pytest.approx(u / ((human >= high).sum() * (human <= low).sum()))
    assert values["consistency"] is None  # one sample: no re-asks to be consistent across
    assert auc(np.array([0.1, 0.2, 0.3]), np.array([1.0, 1.0, 1.0])) is None  # no good/bad split


def test_consistency_is_one_minus_twice_the_mean_spread_over_re_asks():
    rows = [{"score": 0.5, "human": 1, "spread": s, "samples": 3} for s in (0.0, 0.1, 0.2)]
    assert consistency(rows) == pytest.approx(1 - 2 * np.mean([0.0, 0.1, 0.2]))


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
