"""Structural invariants for `improve evolve --invariants` (rubrify's option): only the text and the
weights of a rubric evolve. A candidate that adds, removes, splits or merges criteria, changes a scale's
kind or levels, the patterns a criterion names, the pattern library, the disqualifiers or the groups
is refused before it is scored. The rubric's own text (goal, role, instructions, definitions, advice
words) evolves, as seed 001 lets it; the reflection model is offered only these operations
(tasks/improve/reflect.py)."""

from __future__ import annotations

from typing import Any

from rubricflow.rubrics.model import Rubric

# what may change: text and weights (an advice rule's words; the patterns it fires on stay)
TEXT = frozenset({"title", "description", "notes", "examples", "label", "weight", "advice"})


def _shape(node: Any) -> Any:
    """The document with every free-text field and weight removed: what must stay equal."""
    if isinstance(node, dict):
        return {k: _shape(v) for k, v in node.items() if k not in TEXT}
    if isinstance(node, list):
        return [_shape(v) for v in node]
    return node


def broken(parent: Rubric, child: Rubric) -> str | None:
    """None if only text and weights changed; else the first part of the structure that changed."""
    a, b = parent.model_dump(mode="json"), child.model_dump(mode="json")
    for part in ("criteria", "groups", "patterns", "disqualifiers", "scoring", "output", "advice"):
        if _shape(a[part]) != _shape(b[part]):
            return f"the {part} changed shape (--invariants: only text and weights may evolve)"
    return None
