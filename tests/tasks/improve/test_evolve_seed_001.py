"""Evolution as seed 001 states it: "Structural invariants (criterion IDs, scale types, ranges, groups,
disqualifiers, patterns) are never changed. Only text components and weights are evolvable: goal,
criterion descriptions, anchor descriptions, weights, role persona/obligations/constraints, instructions,
definitions, advice rules, and calibration examples." Under `--invariants` the reflection model is
offered only those operations, a structural proposal is refused with its mutations, and a refused or
rejected proposal is shown to the next reflection for the criterion."""

from __future__ import annotations

import json
import re

import pytest

from rubricflow.errors import InputError
from rubricflow.rubrics.algebra import evolve
from rubricflow.rubrics.formats import load_rubric
from rubricflow.rubrics.library import Library
from rubricflow.rubrify import (
    AnnotatedExample,
    CoEvolutionConfig,
    Criterion,
    NumericScale,
    RubricEvolutionConfig,
    RubricMeta,
    ScaleAnchor,
    evolve_rubric,
    get_model,
)
from rubricflow.rubrify import Rubric as RubrifyRubric
from rubricflow.tasks.improve import invariants, reflect
from rubricflow.tasks.improve.objectives import weighted
from rubricflow.tasks.judging.config import OFFLINE_MODEL
from rubricflow.tasks.standins import offline_judge
from rubricflow.tasks.standins.judge_server import RunningServer
from tests.conftest import ROOT, SHARED

SEED = (SHARED.parent / "seeds" / "001_646671bcea772b80.txt").read_text(encoding="utf-8")
RUBRIC = load_rubric(ROOT / "flows" / "samples" / "topical-chat-dialogue.yaml")
CID = RUBRIC.criteria[0].id
EXAMPLES = [
    reflect.Example("a fun chat about films and actors", 4.0, 0.2),
    reflect.Example("such a fun story about actors", 5.0, 0.3),
    reflect.Example("a dull reply", 1.0, 0.8),
    reflect.Example("no", 1.0, 0.7),
]


def seed_evolvable() -> list[str]:
    said = re.search(r"Only text components and weights are evolvable: (.*?)\.\n", SEED).group(1)
    return [part.strip().removeprefix("and ") for part in said.split(",")]


def test_every_field_the_seed_lets_evolve_evolves_and_keeps_the_invariants():
    assert seed_evolvable() == [
        "goal",
        "criterion descriptions",
        "anchor descriptions",
        "weights",
        "role persona/obligations/constraints",
        "instructions",
        "definitions",
        "advice rules",
        "calibration examples",
    ]
    rubric = Library().get("llm-slop").rubric  # ordinal anchors, patterns and an advice rule
    cid = rubric.criteria[0].id
    changes = {
        "goal": "Score the reply as a careful human rater would.",
        "role": {
            "persona": "a patient dialogue rater",
            "obligations": ["quote the reply"],
            "constraints": ["no guessing"],
        },
        "instructions": ["Read the whole reply first."],
        "definitions": [{"term": "engaging", "meaning": "invites the partner to go on"}],
        "advice": [
            {**a.model_dump(mode="json"), "advice": f"Name the fact the hype stands in for ({i})."}
            for i, a in enumerate(rubric.advice)
        ],
    }
    evolved = evolve(rubric, [{"op": "rewrite_rubric", "changes": changes}])
    assert evolved.goal == changes["goal"] and evolved.role.persona == "a patient dialogue rater"
    assert evolved.role.constraints == ("no guessing",) and evolved.instructions == ("Read the whole reply first.",)
    assert evolved.definitions[0].term == "engaging" and evolved.advice[0].advice.startswith("Name the fact")
    anchors = rubric.criteria[0].scale.model_dump(mode="json")
    anchors["anchors"][0]["description"] = "Nothing to follow."
    worded = evolve(
        evolved,
        [
            {"op": "rewrite_criterion", "id": cid, "changes": {"description": "New words.", "scale": anchors}},
            {"op": "adjust_weight", "id": cid, "weight": 2},
        ],
    )
    assert invariants.broken(rubric, worded) is None  # all of it text and weights
    anchors["anchors"] = anchors["anchors"][:-1]
    fewer = evolve(rubric, [{"op": "rewrite_criterion", "id": cid, "changes": {"scale": anchors}}])
    assert "criteria changed shape" in invariants.broken(rubric, fewer)  # a scale's levels are structure
    with pytest.raises(Exception, match=r"rewrite_rubric: only .* can be rewritten, not \['criteria'\]"):
        evolve(rubric, [{"op": "rewrite_rubric", "changes": {"criteria": []}}])


def test_under_invariants_the_reflection_is_offered_text_operations_only():
    system = reflect.messages(RUBRIC, CID, {CID: 0.1}, EXAMPLES, "human:overall", invariants=True)[0]["content"]
    offered = set(re.findall(r'"const": "([a-z_]+)"', system)) | set(re.findall(r'"enum": \["([a-z_]+)"\]', system))
    assert offered == {"rewrite_criterion", "rewrite_rubric", "adjust_weight"}
    assert "split_criterion" not in system and "add_pattern" not in system and "merge_criteria" not in system
    free = reflect.messages(RUBRIC, CID, {CID: 0.1}, EXAMPLES, "human:overall")[0]["content"]
    assert "split_criterion" in free and "add_pattern" in free  # without --invariants: every operation


def test_a_structural_proposal_is_refused_with_its_mutations_and_fed_back():
    user = reflect.messages(RUBRIC, CID, {CID: 0.1}, EXAMPLES, "human:overall", invariants=True)[1]["content"]
    proposal = offline_judge.reflect(user)  # the stand-in proposes a pattern (structure) whatever it is told
    with pytest.raises(reflect.ReflectionRefused, match="only text and weights may evolve") as refused:
        reflect.candidate(RUBRIC, json.dumps(proposal), invariants=True)
    assert [m["op"] for m in refused.value.mutations] == [m["op"] for m in proposal["mutations"]]
    assert proposal["mutations"][0]["op"] == "add_pattern"
    tried = [reflect.Tried(refused.value.mutations, "refused", str(refused.value))]
    again = reflect.messages(RUBRIC, CID, {CID: 0.1}, EXAMPLES, "human:overall", tried, invariants=True)[1]["content"]
    assert "## Already tried for this criterion" in again and "refused, add_pattern changes the structure" in again
    assert offline_judge.reflect(again) != proposal  # shown its refusal, it proposes something else


# ---------------------------------------------------------------- rubricflow.rubrify's evolve_rubric

# The offline judge, asked as itself (another model name is a judge with its own jitter), gives each of
# these texts C1 = 4 (of 0..5) and C2 = true.
TEXTS = [f"Reply {i}: a {['clear', 'vague', 'concrete', 'muddled'][i % 4]} answer about item {i}." for i in range(8)]


def port_evolution(monkeypatch, human_scores: dict, **config):
    """rubrify's evolve_rubric on the 8 texts, each with these human scores, against the offline judge
    (no reflection round: the start's figures are the result's)."""
    clarity = NumericScale(
        minimum=0,
        maximum=5,
        step=1,
        anchors=[ScaleAnchor(value=0, label="muddled"), ScaleAnchor(value=5, label="clear")],
    )
    rubric = RubrifyRubric(
        meta=RubricMeta(name="MyRubric", version="1.0"),
        goal="Evaluate clarity.",
        criteria=[Criterion(id="C1", title="Clarity", scale=clarity), Criterion(id="C2", title="Concrete", weight=3)],
    )
    examples = [AnnotatedExample(id=f"ex_{i}", response_text=t, human_scores=human_scores) for i, t in enumerate(TEXTS)]
    with RunningServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-offline")
        judge = get_model("openai", OFFLINE_MODEL)
        return evolve_rubric(rubric, examples, judge, config=RubricEvolutionConfig(max_rounds=0, **config))


def test_the_evolution_settings_default_to_rubrifys():
    """rubrify 0.1.4's RubricEvolutionConfig defaults (the seed's example sets the same weights, and
    names `consistency_runs`); before: 1.0 / 0 / 0, no call limit, 5, seed 0, no consistency_runs."""
    assert "agreement_weight=0.6,\n        consistency_weight=0.2,\n        discrimination_weight=0.2," in SEED
    assert "(optional, via `consistency_runs > 1`)" in SEED
    c = RubricEvolutionConfig()
    assert (c.agreement_weight, c.consistency_weight, c.discrimination_weight) == (0.6, 0.2, 0.2)
    assert (c.train_split, c.max_metric_calls, c.reflection_minibatch_size, c.seed, c.consistency_runs) == (
        0.7,
        200,
        3,
        42,
        1,
    )
    assert CoEvolutionConfig().max_metric_calls == 500  # rubrify's co-evolution default
    with pytest.raises(InputError, match=r"^RubricEvolutionConfig: consistency_runs must be 1 or more, not 0$"):
        RubricEvolutionConfig(consistency_runs=0)
    with pytest.raises(InputError, match=r"^RubricEvolutionConfig: train_split must be in \(0, 1\], not 0$"):
        RubricEvolutionConfig(train_split=0)


@pytest.mark.slow
def test_a_judge_that_gives_the_humans_scores_agrees_fully_on_eight_examples(monkeypatch):
    """Seed 001's agreement, "1 - mean error, scaled 0-1", per criterion on its scale's range: 1.0 for a
    judge that gives the humans' scores, though every human gave the same ones; 8 examples evolve on a
    train / validation split (before: an EvolveError, fewer than 10 texts, and a test part)."""
    assert "**Agreement** -- normalized absolute error vs. human annotations (1 - mean error, scaled 0-1)." in SEED
    assert "Set `discrimination_weight=0.0` with fewer than ~10 examples." in SEED
    result = port_evolution(
        monkeypatch, {"C1": 4, "C2": 1}, agreement_weight=1.0, consistency_weight=0.0, discrimination_weight=0.0
    )
    assert result.best_score == 1.0
    report = result.report
    assert (report["training_texts"], report["validation_texts"], report["test_texts"]) == (5, 3, 0)


@pytest.mark.slow
def test_consistency_runs_ask_the_judge_that_many_samples(monkeypatch):
    """Seed 001: "**Consistency** -- 1 - coefficient of variation across repeated runs (optional, via
    `consistency_runs > 1`)": with 3 runs the objective is measured (before: TypeError, and never
    measured); agreement is each criterion's on its own range, weighted by the criteria's weights."""
    assert "**Consistency** -- 1 - coefficient of variation across repeated runs (optional, via" in SEED
    result = port_evolution(monkeypatch, {"C1": 2, "C2": 1}, consistency_runs=3)
    start = result.report["objectives"]["validation"]["start"]
    assert start["consistency"] == 1.0  # the offline judge answers every sample alike
    assert start["agreement"] == pytest.approx((1 * (1 - abs(2 - 4) / 5) + 3 * 1.0) / 4)  # C1 0.6, C2 1.0
    assert result.best_score == pytest.approx(
        weighted(start, {"agreement": 0.6, "consistency": 0.2, "discrimination": 0.2})
    )
