"""OpenAI Evals model-graded specs: a prompt with {input}/{completion}/{ideal} slots, the choices
the grader may answer and (optionally) the score of each choice."""

from __future__ import annotations

from pathlib import Path

from ..documents import RubricImportError, rubric_from_data
from ..model import Rubric
from .common import kebab


def import_evals(data: dict, source: Path) -> Rubric:
    name, spec = next(iter(data.items()))
    prompt = spec.get("prompt")
    if isinstance(prompt, list):  # chat-style prompt: a list of messages
        prompt = "\n\n".join(str(m.get("content", "")) for m in prompt if isinstance(m, dict))
    if not isinstance(prompt, str) or not prompt.strip():
        raise RubricImportError(source, f"field {name}.prompt: missing or empty")
    choices = spec.get("choice_strings")
    if isinstance(choices, str):
        choices = list(choices)
    if not choices:
        raise RubricImportError(source, f"field {name}.choice_strings: the grader's choices are required")
    scores = spec.get("choice_scores") or {}
    if scores == "from_strings":
        scores = {c: float(c) for c in choices}
    bad = [c for c in scores if c not in choices]
    if bad:
        raise RubricImportError(source, f"field {name}.choice_scores: {bad} are not among the choices {choices}")
    values = [float(v) for v in scores.values()]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    span = (high - low) or 1.0
    categories = [{"value": str(c), "score": (float(scores[c]) - low) / span if c in scores else None} for c in choices]
    instructions = [
        "The grader prompt below is the rubric's original wording; its {input}, {completion}, {ideal} and "
        "{criteria} slots refer to the INPUT, the TEXT and the CONTEXT blocks of the data.",
        prompt.strip(),
    ]
    if spec.get("eval_type") in ("cot_classify", "classify_cot"):
        instructions.append("Reason step by step in the rationale before choosing.")
    doc = {
        "metadata": {
            "id": kebab(str(name)),
            "title": str(name),
            "provenance": {
                "format": "openai-evals-modelgraded",
                "source": source.name,
                "eval_type": str(spec.get("eval_type", "")),
            },
        },
        "goal": f"Grade the submission as the OpenAI Evals '{name}' model-graded eval does.",
        "criteria": [
            {
                "id": "choice",
                "title": f"{name} choice",
                "description": "The grader's answer: one of " + ", ".join(map(str, choices)) + ".",
                "scale": {"kind": "nominal", "categories": categories},
            }
        ],
        "instructions": instructions,
    }
    return rubric_from_data(doc, source)
