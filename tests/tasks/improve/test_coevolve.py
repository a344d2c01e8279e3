"""The rules of co-evolution (tasks/improve/coevolve.py): a meta-component's value is checked against the
lenient bounds, and refused where, under it, a round the evolution accepted would have been refused."""

import json

import pytest

from rubricflow.tasks.improve import coevolve
from rubricflow.tasks.improve.objectives import Objectives
from rubricflow.tasks.improve.reflect import GUIDANCE, ReflectionRefused

SETTINGS = Objectives({"agreement": 1.0, "discrimination": 1.0}, "pareto", {})
# an accepted round that raised agreement by 0.05 and lost 0.1 of discrimination
ACCEPTED = [
    coevolve.Accepted(
        1, None, None, {"agreement": 0.30, "discrimination": 0.5}, {"agreement": 0.35, "discrimination": 0.4}
    )
]


def test_tolerances_that_would_have_refused_an_accepted_round_are_refused():
    assert coevolve.degradation("acceptance", {"discrimination": 0.1}, ACCEPTED, SETTINGS, None) is None
    why = coevolve.degradation("acceptance", {"discrimination": 0.05}, ACCEPTED, SETTINGS, None)
    assert why.startswith("under it, accepted round 1 would have been refused: discrimination fell beyond")


def test_a_gate_is_replayed_on_the_accepted_rounds_and_a_template_undoes_none():
    seen = []

    def screen(parent, child, gate):
        seen.append(gate)
        return "the proposal gate refused it: it lowers economy (3 -> 0)" if gate["slack"] == 0 else None

    assert coevolve.degradation("gate", {"properties": ["economy"], "slack": 0.1}, ACCEPTED, SETTINGS, screen) is None
    assert "it lowers economy" in coevolve.degradation(
        "gate", {"properties": ["economy"], "slack": 0.0}, ACCEPTED, SETTINGS, screen
    )
    assert len(seen) == 2
    assert coevolve.degradation("reflection", "Anything.", ACCEPTED, SETTINGS, None) is None


def test_values_outside_the_lenient_bounds_or_unchanged_are_refused():
    with pytest.raises(ReflectionRefused, match="tolerances are 0 to 0.1"):
        coevolve.parse("acceptance", '{"value": {"agreement": 0.5}}', {})
    with pytest.raises(ReflectionRefused, match="lattice properties"):
        coevolve.parse("gate", '{"value": {"properties": ["nonsense"], "slack": 0}}', {})
    with pytest.raises(ReflectionRefused, match="changes nothing"):
        coevolve.parse("reflection", json.dumps({"value": GUIDANCE}), GUIDANCE)
    assert coevolve.parse("gate", '{"value": {"properties": ["economy", "mission"], "slack": 0.1}}', {}) == {
        "properties": ["mission", "economy"],
        "slack": 0.1,
    }


def test_round_robin_takes_the_gate_only_where_there_is_one():
    assert [coevolve.component(n, coevolve.components(True)) for n in range(1, 6)] == [
        "target",
        "gate",
        "reflection",
        "acceptance",
        "target",
    ]
    assert [coevolve.component(n, coevolve.components(False)) for n in range(1, 5)] == [
        "target",
        "reflection",
        "acceptance",
        "target",
    ]
