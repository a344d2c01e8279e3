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

from rubricflow.rubrics.algebra import evolve
from rubricflow.rubrics.formats import load_rubric
from rubricflow.rubrics.library import Library
from rubricflow.tasks.improve import invariants, reflect
from rubricflow.tasks.standins import offline_judge
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
