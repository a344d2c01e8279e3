"""OpenAI Evals model-graded specs: a prompt with {input}/{completion}/{ideal} slots, the choices
the grader may answer and (optionally) the score of each choice."""

from __future__ import annotations

from pathlib import Path

from ..documents import RubricImportError, rubric_from_data
from ..model import Rubric
from .common import kebab

SPEC_FIELDS = {"prompt", "choice_strings", "choice_scores", "input_outputs", "eval_type", "args", "output_template"}


def looks_like_spec(data: dict) -> bool:
    """A model-graded spec itself: a prompt, the grader's choices, and only the spec's own fields."""
    return "prompt" in data and "choice_strings" in data and set(map(str, data)) <= SPEC_FIELDS


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
    criteria = _criteria(name, spec, choices, categories, source)
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
        "criteria": criteria,
        "instructions": instructions,
    }
    return rubric_from_data(doc, source)


def _criteria(name: str, spec: dict, choices: list, categories: list[dict], source: Path) -> list[dict]:
    """One criterion, the grader's choice; or, with `args: {criteria: {id: text}}` (the eval asks the
    same question once per criterion, as `closedqa` does), one criterion per entry."""
    scale = {"kind": "nominal", "categories": categories}
    asked = (spec.get("args") or {}).get("criteria") if isinstance(spec.get("args"), dict) else None
    if asked is None:
        said = "The grader's answer: one of " + ", ".join(map(str, choices)) + "."
        return [{"id": "choice", "title": f"{name} choice", "description": said, "scale": scale}]
    if not isinstance(asked, dict) or not asked:
        raise RubricImportError(source, f"field {name}.args.criteria: a map of criterion -> its wording is required")
    return [
        {"id": kebab(str(cid)), "title": str(cid), "description": str(text), "scale": scale}
        for cid, text in asked.items()
    ]
