"""The mutations `rubric refine` may propose: the rubric algebra's (rewrite, merge, split, add a pattern
or disqualifier, reweight, remove) and three that reach the parts a lattice property lives in but the
algebra leaves alone: the mission (`set_goal`), the output's ritual constraints
(`add_output_constraint`) and their restatement (`add_validation`)."""

from __future__ import annotations

from functools import cache
from typing import Annotated, Literal, Union

import semver
from pydantic import Field, TypeAdapter

from rubricflow.rubrics.algebra import (
    AddCriterion,
    AddDisqualifier,
    AddPattern,
    AdjustWeight,
    MergeCriteria,
    RemoveCriterion,
    RewriteCriterion,
    SplitCriterion,
    evolve,
)
from rubricflow.rubrics.model import OutputConstraint, Rubric, Strict


class SetGoal(Strict):
    op: Literal["set_goal"] = "set_goal"
    goal: str = Field(min_length=1)


class AddOutputConstraint(Strict):
    """A constraint on the judge's output; one with the same id is replaced."""

    op: Literal["add_output_constraint"] = "add_output_constraint"
    constraint: OutputConstraint


class AddValidation(Strict):
    op: Literal["add_validation"] = "add_validation"
    text: str = Field(min_length=1)


BY_OP = {
    cls.model_fields["op"].default: cls
    for cls in (
        AddCriterion,
        RemoveCriterion,
        AdjustWeight,
        AddPattern,
        AddDisqualifier,
        RewriteCriterion,
        SplitCriterion,
        MergeCriteria,
        SetGoal,
        AddOutputConstraint,
        AddValidation,
    )
}
STRUCTURAL = frozenset({"remove_criterion", "split_criterion", "merge_criteria"})


@cache
def mutations_of(ops: tuple[str, ...]) -> TypeAdapter:
    """The list of mutations a proposal aimed at one property may hold: only that property's
    operations (its JSON Schema is what the proposer is shown, a few hundred tokens, not every
    operation's ~25 KB: a small local model's context holds the prompt)."""
    classes = tuple(BY_OP[op] for op in ops)
    if len(classes) == 1:
        return TypeAdapter(list[classes[0]])  # type: ignore[valid-type]
    return TypeAdapter(list[Annotated[Union[classes], Field(discriminator="op")]])  # type: ignore[valid-type]  # noqa: UP007


def _apply_one(rubric: Rubric, m) -> Rubric:
    if isinstance(m, SetGoal):
        return rubric.model_copy(update={"goal": m.goal})
    if isinstance(m, AddOutputConstraint):
        kept = tuple(c for c in rubric.output.constraints if c.id != m.constraint.id)
        output = rubric.output.model_copy(update={"constraints": (*kept, m.constraint)})
        return rubric.model_copy(update={"output": output})
    if isinstance(m, AddValidation):
        if m.text in rubric.validation:
            return rubric
        return rubric.model_copy(update={"validation": (*rubric.validation, m.text)})
    if isinstance(m, MergeCriteria):
        rubric = _repointed(rubric, m)
    return evolve(rubric, [m])


def _repointed(rubric: Rubric, m: MergeCriteria) -> Rubric:
    """A merge carries the merged criteria's floor disqualifiers to the merged criterion, one per
    criterion (the algebra refuses a merge that leaves one naming a criterion gone: refine's
    disqualifiers round comes before its economy round)."""
    gone = set(m.ids) - {m.into.id}
    floors = {d.criterion for d in rubric.disqualifiers if d.kind == "criterion" and d.criterion not in gone}
    kept = []
    for d in rubric.disqualifiers:
        if d.kind == "criterion" and d.criterion in gone:
            if m.into.id in floors:
                continue
            floors.add(m.into.id)
            d = d.model_copy(update={"criterion": m.into.id})
        kept.append(d)
    return rubric.model_copy(update={"disqualifiers": tuple(kept)})


def apply(rubric: Rubric, mutations: list) -> Rubric:
    """Apply in order; the version moves one major step if a criterion was removed, split or merged
    (old judgments no longer line up with its criteria), else one minor step."""
    result = rubric
    for m in mutations:
        result = _apply_one(result, m)
    version = semver.Version.parse(rubric.metadata.version)
    structural = any(m.op in STRUCTURAL for m in mutations)
    bumped = version.bump_major() if structural else version.bump_minor()
    metadata = result.metadata.model_copy(update={"version": str(bumped)})
    return Rubric.model_validate({**result.model_dump(mode="json"), "metadata": metadata.model_dump(mode="json")})
