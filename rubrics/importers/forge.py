"""Forge-style YAML rubrics (seed 002): `rubric_id`, `artifact_type`, anchors 1-5 as a map,
examples score_1/score_5, per-criterion threshold, weight `essential`/`important`,
negative_criteria with fail_patterns, and `scoring: {pass_threshold, essential_minimum}` on the
1-5 scale (also read at the top level, as older files put them).

The seed's validation rules are enforced here, each error naming the file and the field: an
anchor text for every level 1-5 (RL-02), examples at scores 1 and 5 and none at a level outside 1-5
(RL-03), a weight of essential or important (RL-06), thresholds that are numbers (not `true`, not a
quoted "3.5"); a file in the
seed's schema (with `rubric_id`) also gives what that schema requires: a `name`, an `artifact_type`,
and every criterion a name, a description, a threshold and a weight from the enum (no number); a
`calibration_dataset` must be a URI (RL-09, checked by the model for every format)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..documents import RubricImportError, rubric_from_data
from ..model import Rubric
from .common import kebab, safe_id, semver

WEIGHTS = {"essential": 2.0, "important": 1.0}


LEVELS = (1, 2, 3, 4, 5)
SCORING_FIELDS = ("pass_threshold", "essential_minimum")


def looks_like_forge(data: dict) -> bool:
    criteria = data.get("criteria")
    if "negative_criteria" in data or "essential_minimum" in data or "rubric_id" in data:
        return True
    return isinstance(criteria, list) and any(
        isinstance(c, dict) and isinstance(c.get("anchors"), dict) for c in criteria
    )


def _unit(value: Any, low: int, high: int, field: str, source: Path) -> float:
    """A score on the 1-5 scale as a unit score. The schema says `number`: float() would take `true`
    (1.0) and the string "3.5", so both are refused, not read as numbers."""
    try:
        if isinstance(value, (bool, str)):
            raise TypeError(value)
        number = float(value)
    except (TypeError, ValueError):
        quoted = " (a quoted string: write it unquoted)" if isinstance(value, str) else ""
        raise RubricImportError(source, f"field {field}: {value!r} is not a number{quoted}") from None
    if not low <= number <= high:
        raise RubricImportError(source, f"field {field}: {number} is outside {low}..{high}")
    return (number - low) / (high - low)


def import_forge(data: dict, source: Path) -> Rubric:
    if "rubric_id" in data:  # the seed's schema, whose required fields are its rules
        _check_required(data, source)
    criteria = [_criterion(c, i, source) for i, c in enumerate(data.get("criteria") or [])]
    patterns: list[dict[str, Any]] = []
    disqualifiers = [_disqualifier(n, i, patterns) for i, n in enumerate(data.get("negative_criteria") or [])]
    scale_low, scale_high = 1, 5
    if criteria:
        scale_low = criteria[0]["scale"]["anchors"][0]["value"]
        scale_high = criteria[0]["scale"]["anchors"][-1]["value"]
    scoring = _scoring(data, scale_low, scale_high, source)
    name = str(data.get("name") or data.get("id") or source.stem)
    provenance = {"format": "forge-yaml", "source": source.name}
    if data.get("rubric_id") is not None:
        provenance["rubric_id"] = str(data["rubric_id"])
    metadata: dict[str, Any] = {
        "id": kebab(str(data.get("rubric_id") or name)),
        "version": semver(data.get("version")),
        "title": str(data.get("title", name)),
        "description": str(data.get("description", "")),
        "tags": [str(t) for t in data.get("tags", [])],
        "provenance": provenance,
    }
    for key in ("artifact_type", "calibration_dataset"):
        if data.get(key) is not None:
            metadata[key] = str(data[key])
    doc = {
        "metadata": metadata,
        "goal": str(data.get("goal") or data.get("description", "")),
        "criteria": criteria,
        "patterns": patterns,
        "disqualifiers": disqualifiers,
        "scoring": scoring,
        # rubricflow's own addition: examples with a known verdict (copied, so `doctor` sees each field read)
        "goldens": [{**g} if isinstance(g, dict) else g for g in data.get("goldens") or []],
    }
    return rubric_from_data(doc, source)


def _check_required(data: dict, source: Path) -> None:
    """A rubric in the seed's schema (it has `rubric_id`) gives what the schema requires: a `name`, an
    `artifact_type` (RL-10's look-up), a MAJOR.MINOR.PATCH `version` (RL-04), and per criterion what
    `_check_criterion` asks. A Forge-style file without `rubric_id` may leave them out (weight
    `important` or a number, version padded to semver, the file's name as the rubric's)."""
    if data.get("artifact_type") is None:
        raise RubricImportError(source, "field artifact_type: the Forge schema requires one (e.g. jira_tickets)")
    for field in ("name", "artifact_type"):
        _text(data.get(field), field, source)
    version = str(getattr(data.get("version"), "yaml_text", None) or data.get("version") or "")
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        raise RubricImportError(source, f"field version: {version or '(none)'!r} is not MAJOR.MINOR.PATCH (RL-04)")
    for i, c in enumerate(data.get("criteria") or []):
        if isinstance(c, dict):
            _check_criterion(c, f"criteria[{i}]", source)


def _check_criterion(c: dict, where: str, source: Path) -> None:
    """The schema's required fields of one criterion: a `name` and `description` (text), a
    `threshold` (RL-05) and a `weight` from the enum essential | important (RL-06), not a number."""
    for field, rule in (("threshold", "RL-05"), ("weight", "RL-06")):
        if c.get(field) is None:
            raise RubricImportError(
                source, f"field {where}.{field}: the Forge schema requires one per criterion ({rule})"
            )
    weight = c["weight"]
    if not (isinstance(weight, str) and weight in WEIGHTS):
        raise RubricImportError(
            source,
            f"field {where}.weight: {weight!r} is not one of {', '.join(WEIGHTS)} (the Forge schema's enum, RL-06)",
        )
    for field in ("name", "description"):
        _text(c.get(field), f"{where}.{field}", source)


def _text(value: Any, field: str, source: Path) -> str:
    """A string the Forge schema requires: absent, null, empty or not text is an error naming the field
    (before, `2: null` became the anchor text 'None')."""
    if not isinstance(value, str) or not value.strip():
        found = "missing" if value is None else f"{value!r} is not a non-empty string"
        raise RubricImportError(source, f"field {field}: the Forge schema requires text ({found})")
    return value


def _scoring(data: dict, low: int, high: int, source: Path) -> dict[str, float]:
    """`scoring: {pass_threshold, essential_minimum}` as the seed nests them (or at the top level)."""
    nested = data.get("scoring")
    if nested is not None and not isinstance(nested, dict):
        raise RubricImportError(source, "field scoring: a map of pass_threshold and essential_minimum is expected")
    nested = nested or {}
    scoring: dict[str, float] = {}
    for field in SCORING_FIELDS:
        for where, block in ((f"scoring.{field}", nested), (field, data)):
            if block.get(field) is not None:
                scoring[field] = _unit(block[field], low, high, where, source)
                break
    unread = sorted(set(nested) - set(SCORING_FIELDS))
    if unread:
        raise RubricImportError(
            source, f"field scoring.{unread[0]}: not a Forge scoring field ({', '.join(SCORING_FIELDS)})"
        )
    return scoring


def _check_levels(c: dict, where: str, source: Path) -> None:
    """RL-02: an anchor for every level 1-5, each with its text (the schema: `string (required)`)."""
    try:
        levels = {int(k) for k in c["anchors"]}
    except (TypeError, ValueError):
        raise RubricImportError(source, f"field {where}.anchors: levels must be the integers 1 to 5") from None
    missing = [level for level in LEVELS if level not in levels]
    if missing or levels - set(LEVELS):
        wrong = ", ".join(map(str, missing)) if missing else ", ".join(map(str, sorted(levels - set(LEVELS))))
        raise RubricImportError(
            source,
            f"field {where}.anchors: a Forge rubric anchors every level 1-5 "
            f"({'missing' if missing else 'outside 1-5'}: {wrong})",
        )
    for level, text in c["anchors"].items():
        _text(text, f"{where}.anchors.{level}", source)
    _check_examples(c.get("examples") or {}, where, source)


def _check_examples(examples: Any, where: str, source: Path) -> None:
    """RL-03: examples at scores 1 and 5; every `score_N` is a level 1-5 with its text (`score_9` or
    `score_best` names no level, and `score_3: null` is no example)."""
    if not isinstance(examples, dict):
        raise RubricImportError(source, f"field {where}.examples: a map score_1 / score_3 / score_5 is expected")
    absent = [key for key in ("score_1", "score_5") if examples.get(key) is None]
    if absent:
        raise RubricImportError(
            source, f"field {where}.examples.{absent[0]}: a Forge rubric gives an example at scores 1 and 5"
        )
    for key, text in examples.items():
        level = str(key).removeprefix("score_")
        if str(key).startswith("score_") and level not in {str(n) for n in LEVELS}:
            raise RubricImportError(
                source, f"field {where}.examples.{key}: not a score of the 1-5 scale (score_1 .. score_5)"
            )
        if str(key).startswith("score_"):
            _text(text, f"{where}.examples.{key}", source)


def _criterion(c: Any, i: int, source: Path) -> dict[str, Any]:
    """One `criteria[i]`: its anchors map (level -> description) is the ordinal scale."""
    where = f"criteria[{i}]"
    if not isinstance(c, dict) or not isinstance(c.get("anchors"), dict):
        raise RubricImportError(source, f"field {where}.anchors: a map of level -> description is required")
    _check_levels(c, where, source)
    levels = sorted((int(k), str(v)) for k, v in c["anchors"].items())
    anchors = [{"value": level, "description": text} for level, text in levels]
    low, high = levels[0][0], levels[-1][0]
    weight = _weight(c.get("weight", "important"), f"{where}.weight", source)
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


def _weight(weight: Any, field: str, source: Path) -> Any:
    """The seed's `weight` enum (essential | important), or a number; any other word is an error."""
    if isinstance(weight, str) and weight not in WEIGHTS:
        raise RubricImportError(source, f"field {field}: {weight!r} is not one of {', '.join(WEIGHTS)} (or a number)")
    if isinstance(weight, bool) or not isinstance(weight, (str, int, float)):
        raise RubricImportError(source, f"field {field}: {weight!r} is not one of {', '.join(WEIGHTS)} (or a number)")
    return weight


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
