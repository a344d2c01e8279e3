"""Forge-style YAML rubrics: anchors 1-5 as a map, examples score_1/score_5, per-criterion
threshold, weight `essential`/`important`, negative_criteria with fail_patterns,
pass_threshold and essential_minimum on the 1-5 scale."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..documents import RubricImportError, rubric_from_data
from ..model import Rubric
from .common import kebab, safe_id, semver

WEIGHTS = {"essential": 2.0, "important": 1.0}


def looks_like_forge(data: dict) -> bool:
    criteria = data.get("criteria")
    if "negative_criteria" in data or "essential_minimum" in data:
        return True
    return isinstance(criteria, list) and any(
        isinstance(c, dict) and isinstance(c.get("anchors"), dict) for c in criteria
    )


def _unit(value: Any, low: int, high: int, field: str, source: Path) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise RubricImportError(source, f"field {field}: {value!r} is not a number") from None
    if not low <= number <= high:
        raise RubricImportError(source, f"field {field}: {number} is outside {low}..{high}")
    return (number - low) / (high - low)


def import_forge(data: dict, source: Path) -> Rubric:
    criteria = [_criterion(c, i, source) for i, c in enumerate(data.get("criteria") or [])]
    patterns: list[dict[str, Any]] = []
    disqualifiers = [_disqualifier(n, i, patterns) for i, n in enumerate(data.get("negative_criteria") or [])]
    scale_low, scale_high = 1, 5
    if criteria:
        scale_low = criteria[0]["scale"]["anchors"][0]["value"]
        scale_high = criteria[0]["scale"]["anchors"][-1]["value"]
    scoring: dict[str, Any] = {}
    for field in ("pass_threshold", "essential_minimum"):
        if data.get(field) is not None:
            scoring[field] = _unit(data[field], scale_low, scale_high, field, source)
    name = str(data.get("name") or data.get("id") or source.stem)
    doc = {
        "metadata": {
            "id": kebab(name),
            "version": semver(data.get("version")),
            "title": str(data.get("title", name)),
            "description": str(data.get("description", "")),
            "tags": [str(t) for t in data.get("tags", [])],
            "provenance": {"format": "forge-yaml", "source": source.name},
        },
        "goal": str(data.get("goal") or data.get("description", "")),
        "criteria": criteria,
        "patterns": patterns,
        "disqualifiers": disqualifiers,
        "scoring": scoring,
    }
    return rubric_from_data(doc, source)


def _criterion(c: Any, i: int, source: Path) -> dict[str, Any]:
    """One `criteria[i]`: its anchors map (level -> description) is the ordinal scale."""
    where = f"criteria[{i}]"
    if not isinstance(c, dict) or not isinstance(c.get("anchors"), dict):
        raise RubricImportError(source, f"field {where}.anchors: a map of level -> description is required")
    levels = sorted((int(k), str(v)) for k, v in c["anchors"].items())
    anchors = [{"value": level, "description": text} for level, text in levels]
    low, high = levels[0][0], levels[-1][0]
    weight = c.get("weight", "important")
    examples = [
        {"score": int(str(k).split("_")[-1]), "text": str(v)}
        for k, v in (c.get("examples") or {}).items()
        if str(k).startswith("score_")
    ]
    crit: dict[str, Any] = {
        "id": safe_id(c.get("id") or c.get("name"), f"C{i + 1}"),
        "title": str(c.get("name", "")),
        "description": str(c.get("description", "")),
        "scale": {"kind": "ordinal", "anchors": anchors},
        "weight": WEIGHTS.get(weight, weight) if isinstance(weight, str) else float(weight),
        "importance": weight if weight in WEIGHTS else "important",
        "examples": examples,
    }
    if c.get("threshold") is not None:
        crit["pass_threshold"] = _unit(c["threshold"], low, high, f"{where}.threshold", source)
    return crit


def _disqualifier(n: dict, i: int, patterns: list[dict[str, Any]]) -> dict[str, Any]:
    """One `negative_criteria[i]`: a pattern disqualifier when it lists fail_patterns (added to
    `patterns`), else one the judge decides."""
    nid = safe_id(n.get("id") or n.get("name"), f"N{i + 1}")
    ids = []
    for j, regex in enumerate(n.get("fail_patterns") or []):
        pid = f"{nid}_p{j + 1}"
        patterns.append({"id": pid, "regex": str(regex)})
        ids.append(pid)
    dq: dict[str, Any] = {"id": nid, "description": str(n.get("description", n.get("name", "")))}
    dq.update({"kind": "pattern", "patterns": ids} if ids else {"kind": "judge"})
    return dq
