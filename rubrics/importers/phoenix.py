"""Arize Phoenix classification evaluator configs (YAML, `prompts/classification_evaluator_configs/`
in the Phoenix repository, checked by its `classification_evaluator.schema.json`): `name`,
`description`, `messages` (the grader's chat template, `{{input}}`/`{{output}}` slots), `choices`
(each label's score) and `optimization_direction` (`minimize`: a higher choice score is worse,
as for hallucination or toxicity). The choice becomes one nominal criterion; the messages become
the instructions; `details` is the criterion's description; `inputs`, `specification`, `category`
and the rest are kept in the provenance or left to Phoenix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..documents import RubricImportError, rubric_from_data
from ..model import Rubric
from .common import kebab, safe_id


def looks_like_phoenix(data: dict) -> bool:
    return isinstance(data.get("messages"), list) and isinstance(data.get("choices"), dict)


def import_phoenix(data: dict, source: Path) -> Rubric:
    name = _text(data, "name", source) or source.stem
    categories = _categories(data.get("choices"), source)
    direction = data.get("optimization_direction", "maximize")
    if direction not in ("maximize", "minimize"):
        raise RubricImportError(source, f"field optimization_direction: {direction!r} is not maximize or minimize")
    inputs = data.get("inputs")
    inputs = inputs if isinstance(inputs, dict) else {}
    doc: dict[str, Any] = {
        "metadata": {
            "id": kebab(name),
            "title": name,
            "provenance": {
                "format": "phoenix-classification-evaluator",
                "source": source.name,
                "inputs": ", ".join(map(str, inputs)),
                "category": str(data.get("category") or ""),
            },
        },
        "goal": _text(data, "description", source) or f"Classify the output as Phoenix's {name} evaluator does.",
        "instructions": [_messages(data.get("messages"), source)],
        "criteria": [
            {
                "id": safe_id(kebab(name), "choice"),
                "title": name,
                "description": _text(data, "details", source)
                or "The grader's answer: one of " + ", ".join(c["value"] for c in categories) + ".",
                "scale": {"kind": "nominal", "categories": categories},
            }
        ],
        "scoring": {"invert": direction == "minimize"},
    }
    return rubric_from_data(doc, source)


def _text(data: dict, field: str, source: Path) -> str:
    value = data.get(field)
    if value is not None and not isinstance(value, str):
        raise RubricImportError(source, f"field {field}: must be text, found {value!r}")
    return (value or "").strip()


def _categories(choices: Any, source: Path) -> list[dict]:
    """Each label with its score normalised to 0..1 (Phoenix's scores are any numbers)."""
    if not isinstance(choices, dict) or len(choices) < 2:
        raise RubricImportError(source, "field choices: at least two labels, each with a score")
    for label, score in choices.items():
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise RubricImportError(source, f"field choices.{label}: the score must be a number, found {score!r}")
    low, high = min(choices.values()), max(choices.values())
    span = (high - low) or 1.0
    return [{"value": str(label), "score": (score - low) / span} for label, score in choices.items()]


def _messages(messages: Any, source: Path) -> str:
    """The grader's chat template as one text, turn by turn."""
    turns = []
    for i, m in enumerate(messages or []):
        if not isinstance(m, dict) or not isinstance(m.get("content"), str):
            raise RubricImportError(source, f"field messages[{i}]: a message needs `content` text")
        turns.append(f"{m.get('role', 'user')}: {m['content'].strip()}")
    if not turns:
        raise RubricImportError(source, "field messages: the grader's prompt is required")
    return "\n\n".join(turns)
