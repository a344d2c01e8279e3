"""OpenAI Evals grader exports (the hosted Evals API's eval objects, as users export them while
those Evals are retired): `testing_criteria`, each a grader. `label_model` becomes a criterion
whose labels are categories (a passing label scores 1), `score_model` a numeric criterion over its
`range` with its `pass_threshold`; `string_check` and `text_similarity` are deterministic graders
rubricflow has no engine for: each becomes a criterion the judge decides, its check stated as a
mechanical rule. A `python` or `multi` grader is refused by name, never dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..documents import RubricImportError, rubric_from_data
from ..model import Rubric
from .common import items, kebab, number, safe_id, whole

GRADERS = ("label_model", "score_model", "string_check", "text_similarity")
STRING_OPERATIONS = {"eq": "equals", "ne": "differs from", "like": "contains (case-sensitive)", "ilike": "contains"}


def looks_like_export(data: dict) -> bool:
    evals = data.get("data") if data.get("object") == "list" else None
    return isinstance(data.get("testing_criteria"), list) or (
        isinstance(evals, list) and any(isinstance(e, dict) and "testing_criteria" in e for e in evals)
    )


def import_export(data: dict, source: Path) -> list[Rubric]:
    """One rubric per eval: an eval object, or the API's list of them (`{"object": "list", "data": [...]}`)."""
    if data.get("object") == "list":
        evals = items(data.get("data"), source, "data")
        return [_eval(e, source, f"data[{i}].") for i, e in enumerate(evals)]
    return [_eval(data, source, "")]


def _eval(data: Any, source: Path, where: str) -> Rubric:
    if not isinstance(data, dict):
        raise RubricImportError(source, f"field {where.rstrip('.') or '(top level)'}: an eval object is expected")
    graders = items(data.get("testing_criteria"), source, f"{where}testing_criteria")
    if not graders:
        raise RubricImportError(source, f"field {where}testing_criteria: no graders")
    criteria, instructions = [], []
    for i, grader in enumerate(graders):
        field = f"{where}testing_criteria[{i}]"
        if not isinstance(grader, dict):
            raise RubricImportError(source, f"field {field}: a grader object is expected")
        criterion = _criterion(grader, i, field, source)
        criteria.append(criterion)
        said = _messages(grader.get("input"), field, source) if grader.get("type") in GRADERS[:2] else ""
        if said:
            instructions.append(f"Grader {criterion['id']} ({grader['type']}), as its author wrote it:\n{said}")
    name = str(data.get("name") or data.get("id") or source.stem)
    doc = {
        "metadata": {
            "id": kebab(name),
            "title": name,
            "provenance": {
                "format": "openai-evals-graders",
                "source": source.name,
                **{f"eval_{k}": whole(data[k]) for k in ("id", "created_at", "metadata") if data.get(k) is not None},
                **({"data_source_config": whole(data["data_source_config"])} if data.get("data_source_config") else {}),
            },
        },
        "goal": f"Grade each sample as the OpenAI eval '{name}' does: every grader must pass.",
        "criteria": criteria,
        "instructions": instructions,
        "scoring": {"method": "all", "pass_threshold": 1.0},
    }
    return rubric_from_data(doc, source)


def _criterion(grader: dict, index: int, field: str, source: Path) -> dict:
    kind = grader.get("type")
    if kind not in GRADERS:
        raise RubricImportError(
            source, f"field {field}.type: {kind!r} is not read (rubricflow reads {', '.join(GRADERS)})"
        )
    cid = safe_id(grader.get("name") or grader.get("id"), f"grader-{index + 1}")
    base: dict[str, Any] = {"id": cid, "title": str(grader.get("name") or cid), "tags": _grader_tags(grader)}
    if kind == "label_model":
        return {**base, **_labels(grader, field, source)}
    if kind == "score_model":
        low, high = _range(grader.get("range"), field, source)
        scored: dict[str, Any] = {
            **base,
            "scale": {"kind": "numeric", "min": low, "max": high},
            "description": "The grader's score.",
        }
        if grader.get("pass_threshold") is not None:
            threshold = number(grader["pass_threshold"], source, f"{field}.pass_threshold")
            if not low <= threshold <= high:
                raise RubricImportError(source, f"field {field}.pass_threshold: {threshold} is outside {low}..{high}")
            scored["pass_threshold"] = (threshold - low) / (high - low)
        return scored
    rule = _check(grader, kind, field, source)
    if kind == "string_check":
        return {**base, "description": rule, "mechanical_rules": [rule], "scale": {"kind": "binary"}}
    threshold = number(grader.get("pass_threshold"), source, f"{field}.pass_threshold")
    if not 0 <= threshold <= 1:
        raise RubricImportError(source, f"field {field}.pass_threshold: {threshold} is outside 0..1")
    scale = {"kind": "numeric", "min": 0.0, "max": 1.0}
    return {**base, "description": rule, "mechanical_rules": [rule], "scale": scale, "pass_threshold": threshold}


def _grader_tags(grader: dict) -> list[str]:
    """The grader's type, its own id and the model its author chose (rubricflow's judge settings decide)."""
    tags = [f"grader:{grader['type']}"]
    tags += [f"{key}:{grader[key]}" for key in ("id", "model") if isinstance(grader.get(key), str)]
    return tags


def _labels(grader: dict, field: str, source: Path) -> dict:
    labels = items(grader.get("labels"), source, f"{field}.labels")
    passing = items(grader.get("passing_labels"), source, f"{field}.passing_labels")
    if len(labels) < 2 or not all(isinstance(lab, str) and lab for lab in labels):
        raise RubricImportError(source, f"field {field}.labels: at least two label names are required")
    stray = [lab for lab in passing if lab not in labels]
    if stray or not passing:
        raise RubricImportError(
            source, f"field {field}.passing_labels: {stray or passing!r} must be some of the labels {labels}"
        )
    categories = [{"value": lab, "score": 1.0 if lab in passing else 0.0} for lab in labels]
    said = f"The grader's label: one of {', '.join(labels)}; passing: {', '.join(passing)}."
    return {"description": said, "scale": {"kind": "nominal", "categories": categories}, "pass_threshold": 1.0}


def _range(value: Any, field: str, source: Path) -> tuple[float, float]:
    if value is None:
        return 0.0, 1.0  # the API's default range
    bounds = items(value, source, f"{field}.range")
    if len(bounds) != 2:
        raise RubricImportError(source, f"field {field}.range: [min, max] is required, found {value!r}")
    low, high = (number(b, source, f"{field}.range") for b in bounds)
    if low >= high:
        raise RubricImportError(source, f"field {field}.range: min {low} is not below max {high}")
    return low, high


def _check(grader: dict, kind: str, field: str, source: Path) -> str:
    """The deterministic grader's check, in words."""
    said, reference = grader.get("input"), grader.get("reference")
    if not isinstance(said, str) or not isinstance(reference, str):
        raise RubricImportError(source, f"field {field}: `input` and `reference` (template strings) are required")
    if kind == "string_check":
        operation = grader.get("operation")
        if not isinstance(operation, str) or operation not in STRING_OPERATIONS:
            raise RubricImportError(
                source, f"field {field}.operation: {operation!r} is not one of {', '.join(STRING_OPERATIONS)}"
            )
        return f"String check ({operation}): {said} {STRING_OPERATIONS[operation]} {reference}."
    metric = grader.get("evaluation_metric")
    if not isinstance(metric, str) or not metric:
        raise RubricImportError(source, f"field {field}.evaluation_metric: a metric name is required")
    return f"Text similarity ({metric}) of {said} to {reference}, from 0 (none) to 1 (identical)."


def _messages(value: Any, field: str, source: Path) -> str:
    """A model grader's `input` messages as text (`role: content`)."""
    if isinstance(value, str):
        return value
    lines = []
    for j, message in enumerate(items(value, source, f"{field}.input")):
        if not isinstance(message, dict):
            raise RubricImportError(source, f"field {field}.input[{j}]: a message object is expected")
        content = message.get("content")
        if isinstance(content, list):  # content parts: keep their text
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        lines.append(f"{message.get('role', 'user')}: {content}")
    return "\n".join(lines)
