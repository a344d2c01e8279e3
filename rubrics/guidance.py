"""A constraint-profile rubric as seed 000 uses it: in-context guidance, never a scorer. Seed 000's
ConstraintProfile is "P_mission AND P_examples >= 1 AND NOT P_criteria" (its Completeness rubric:
instructions and one ICL example; its META_GENERATOR rubrics steer rubric generation), so such a
rubric is placed in a model's context as a guidance block (the mission, the role, the instructions,
the definitions, the examples, the output format) and `score` refuses it with that reason."""

from __future__ import annotations

from .compiler import profile_of
from .model import Rubric


def is_guidance(rubric: Rubric) -> bool:
    """True for a rubric seed 000 puts in context rather than scores with (the constraint profile)."""
    return not rubric.criteria and profile_of(rubric) == "constraint"


def render_guidance(rubric: Rubric) -> str:
    """The guidance block: every part a generating model should follow, in the order a reader meets it."""
    r = rubric
    parts: list[str] = []
    if r.goal:
        parts.append(f"## Mission\n{r.goal}")
    if r.role.persona or r.role.obligations or r.role.constraints:
        lines = [r.role.persona] if r.role.persona else []
        lines += [f"- MUST: {o}" for o in r.role.obligations] + [f"- MUST NOT: {c}" for c in r.role.constraints]
        parts.append("## Role\n" + "\n".join(lines))
    if r.instructions:
        parts.append("## Instructions\n" + "\n".join(f"- {i.strip()}" for i in r.instructions))
    if r.definitions:
        parts.append("## Definitions\n" + "\n".join(f"- {d.term}: {d.meaning}" for d in r.definitions))
    examples = [_example(e.id, e.input, e.output, e.note) for e in r.mapping_examples]
    if examples:
        parts.append("## Examples\n" + "\n\n".join(examples))
    shape = [r.output.template] if r.output.template else []
    shape += [c.description or f"{c.field}: {c.id}" for c in r.output.constraints] + list(r.output.notes)
    if shape:
        parts.append("## Output format\n" + "\n".join(shape))
    if r.validation:
        parts.append("## Before answering, check\n" + "\n".join(f"- {v}" for v in r.validation))
    return "\n\n".join(parts) + "\n"


def _example(name: str, given: str, answer: str, note: str) -> str:
    lines = [f"### {name}"]
    lines += [f"Input: {given}"] if given else []
    lines += [f"Output: {answer}"] if answer else []
    lines += [f"Why: {note}"] if note else []
    return "\n".join(lines)
