"""Evaluator YAML in the Azure AI Evaluation style: `evaluation_criteria` (each with a description,
weight and `rating_levels`), or one `rating_levels` list for the whole evaluator, with
`score_normalization`, `input_mapping`, `chain_of_thought` and `output_format` beside them. An
umbrella evaluator names sub-evaluators that live in sibling files (`sub_rubrics`, `evaluators`,
`components` or `includes`: file names, or `{file|path|rubric, weight}`); each becomes a weighted
group of the umbrella's criteria.

waza's / Azure's evaluator layout writes `evaluation_criteria` as PROSE (the judge's instructions,
kept whole) with one `rating_levels` list of `{value, label, normalized_score, description}`,
`score_type: ordinal | binary` and `score_normalization {method, raw_min, raw_max, mapping}`: the
levels become one holistic criterion; levels whose normalized scores are not the linear min-max
map keep the author's scores (a nominal scale scored per level)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..documents import RubricImportError, parse_yaml, rubric_from_data
from ..model import Rubric
from .common import items, kebab, safe_id, semver, whole
from .levels import LEVEL_KEY, anchors_from

MARKERS = ("evaluation_criteria", "rating_levels", "score_normalization", "input_mapping", "chain_of_thought")
UMBRELLA_KEYS = ("sub_rubrics", "sub_evaluators", "evaluators", "components", "includes")
MAX_DEPTH = 4  # umbrella of umbrellas; deeper (or a cycle) is refused


def looks_like_evaluator(data: dict) -> bool:
    return any(k in data for k in MARKERS) or any(isinstance(data.get(k), list) for k in UMBRELLA_KEYS)


def import_evaluator(data: dict, source: Path) -> Rubric:
    criteria, groups = _criteria(data, source, seen=(source.resolve(),))
    name = str(data.get("name") or data.get("id") or source.stem)
    inputs = (
        [{"name": str(k), "description": str(v)} for k, v in (data.get("input_mapping") or {}).items()]
        if isinstance(data.get("input_mapping"), dict)
        else []
    )
    instructions = [
        str(data[k])
        for k in ("evaluation_criteria", "instructions", "prompt", "system_prompt")
        if isinstance(data.get(k), str)
    ]
    thought = data.get("chain_of_thought")
    if isinstance(thought, str) and thought.strip():  # the author's own words for how to reason
        instructions.append(thought.strip())
    elif thought:
        instructions.append("Reason step by step in the rationale before giving each score.")
    doc = {
        "metadata": {
            "id": kebab(name),
            "title": str(data.get("title") or name),
            "version": semver(data.get("version")),
            "description": str(data.get("description") or ""),
            "provenance": {
                "format": "evaluator-yaml",
                "source": source.name,
                "score_normalization": whole(data.get("score_normalization") or ""),
                "output_format": whole(data.get("output_format") or ""),
                **{f"evaluator_{k}": str(data[k]) for k in ("source", "score_type") if data.get(k) is not None},
            },
        },
        "goal": str(data.get("description") or data.get("goal") or f"Evaluate as the {name} evaluator does."),
        "inputs": inputs,
        "criteria": criteria,
        "groups": groups,
        "instructions": instructions,
    }
    if data.get("output_format"):  # the author's answer shape, shown to the judge (the JSON Schema governs)
        doc["output"] = {"template": whole(data["output_format"])}
    threshold = data.get("threshold", data.get("pass_threshold"))
    if isinstance(threshold, (int, float)) and not isinstance(threshold, bool):
        doc["scoring"] = {"pass_threshold": _unit(threshold, criteria)}
    elif len(criteria) == 1 and criteria[0]["scale"]["kind"] == "binary":  # pass/fail: the level is the verdict
        doc["scoring"] = {"pass_threshold": sum(criteria[0]["scale"]["scores"]) / 2}
    return rubric_from_data(doc, source)


def _criteria(data: dict, source: Path, seen: tuple[Path, ...], prefix: str = "") -> tuple[list[dict], list[dict]]:
    """The criteria (and groups) of one evaluator file, sub-evaluators resolved from sibling files."""
    criteria: list[dict] = []
    groups: list[dict] = []
    listed = data.get("evaluation_criteria")
    if isinstance(listed, str):  # prose: the judge's instructions (read by import_evaluator), not a list
        listed = None
    if isinstance(listed, dict):  # {name: {...}} as well as [{name: ..., ...}]
        listed = [{"name": k, **(v if isinstance(v, dict) else {"description": v})} for k, v in listed.items()]
    written = levels_as_list(data.get("rating_levels"))
    booleans = isinstance(written, list) and any(
        isinstance(v, dict) and isinstance(v.get("value"), bool) for v in written
    )
    data = {**data, "rating_levels": booleans_as_levels(written), BOOLEAN_MARK: booleans}
    shared_levels = anchors_from(data["rating_levels"])
    for i, entry in enumerate(items(listed, source, "evaluation_criteria")):
        if not isinstance(entry, dict):
            raise RubricImportError(
                source, f"field evaluation_criteria[{i}]: expected a mapping, found {type(entry).__name__}"
            )
        cid = prefix + safe_id(entry.get("id") or entry.get("name"), f"criterion-{i + 1}")
        levels = anchors_from(entry.get("rating_levels") or entry.get("levels") or entry.get("scale")) or shared_levels
        criteria.append(_criterion(cid, entry, levels, source, f"evaluation_criteria[{i}]"))
    if not listed and shared_levels and not _umbrella_entries(data):  # one holistic criterion
        holistic = _criterion(prefix + safe_id(data.get("name"), "score"), data, shared_levels, source, "rating_levels")
        holistic["scale"] = _levels_scale(data, shared_levels, source)
        if holistic["scale"]["kind"] == "binary":  # a binary scale holds labels only: the levels' words as notes
            holistic["notes"] = "\n".join(_level_text(a) for a in shared_levels)
        criteria.append(holistic)
    for i, (file, weight) in enumerate(_umbrella_entries(data)):
        where = f"field {next(k for k in UMBRELLA_KEYS if k in data)}[{i}]"
        path = (source.parent / file).resolve()
        if path in seen or len(seen) >= MAX_DEPTH:
            raise RubricImportError(source, f"{where}: {file} includes itself (or nests deeper than {MAX_DEPTH})")
        if not path.is_file():
            raise RubricImportError(source, f"{where}: sub-rubric file {file} not found beside {source.name}")
        sub = parse_yaml(path.read_text(encoding="utf-8"), path)
        if not isinstance(sub, dict):
            raise RubricImportError(path, "expected a mapping at the top level")
        group_id = safe_id(sub.get("name") or path.stem, f"part-{i + 1}")
        sub_criteria, sub_groups = _criteria(sub, path, seen + (path,), prefix=f"{group_id}.")
        if not sub_criteria:
            raise RubricImportError(path, "no evaluation_criteria or rating_levels: nothing to score")
        criteria += sub_criteria
        groups += sub_groups
        held = {c for g in sub_groups for c in g["children"]}  # the sub-file's top: what no group of it holds
        children = [g["id"] for g in sub_groups if g["id"] not in held] + [
            c["id"] for c in sub_criteria if c["id"] not in held
        ]
        groups.append(
            {
                "id": f"{prefix}{group_id}",
                "title": str(sub.get("name") or path.stem),
                "weight": weight,
                "description": str(sub.get("description") or ""),
                "children": children,
            }
        )
    return criteria, groups


def _levels_scale(data: dict, anchors: list[dict], source: Path) -> dict:
    """The scale of one `rating_levels` list: binary (`score_type: binary`, levels 0 and 1), ordinal,
    or, when the levels' `normalized_score`s are not the linear min-max map, nominal with them."""
    values = [a["value"] for a in anchors]
    kind = str(data.get("score_type") or ("binary" if values == [0, 1] and _boolean(data) else "ordinal")).lower()
    kind = BINARY_TYPES.get(kind, kind)
    if kind not in ("ordinal", "binary"):
        raise RubricImportError(source, f"field score_type: {kind!r} is not ordinal, binary or binary_flag")
    normalized = _normalized(data.get("rating_levels"), source) or _mapping(data.get("score_normalization"), source)
    if kind == "binary":
        if values != [0, 1]:
            raise RubricImportError(
                source, f"field rating_levels: a binary score_type needs levels 0 and 1, found {values}"
            )
        return {
            "kind": "binary",
            "labels": [a.get("label") or a["description"][:40] or str(a["value"]) for a in anchors],
            "scores": [normalized.get(0, 0.0), normalized.get(1, 1.0)],
        }
    low, high = min(values), max(values)
    if not normalized or all(
        abs(normalized.get(v, (v - low) / (high - low)) - (v - low) / (high - low)) < 1e-9 for v in values
    ):
        return {"kind": "ordinal", "anchors": anchors}
    return {
        "kind": "nominal",
        "categories": [
            {
                "value": str(a["value"]),
                "description": _level_text(a),
                "score": normalized.get(a["value"]),
            }
            for a in anchors
        ],
    }


def _level_text(anchor: dict) -> str:
    """One level as words, for a scale that holds no anchors: label: description (examples: ...)."""
    text = ": ".join(x for x in (anchor.get("label"), anchor["description"]) if x)
    examples = anchor.get("examples") or []
    return text + (f" (examples: {' | '.join(examples)})" if examples else "")


BOOLEAN_MARK = " levels were booleans"  # set on the reader's copy of a file's data, never a YAML key
BINARY_TYPES = {"binary_flag": "binary", "pass_fail": "binary", "pass-fail": "binary", "boolean": "binary"}


def levels_as_list(levels: Any) -> Any:
    """Levels written as a map (`{1: {label, description, examples}}`, `{true: ..., false: ...}`) as
    the list layout `[{value, ...}]`, so a map keeps its labels, examples and normalized scores."""
    if not isinstance(levels, dict) or not all(isinstance(k, (bool, int)) or LEVEL_KEY.match(str(k)) for k in levels):
        return levels
    listed = []
    for key, level in levels.items():
        value = key if isinstance(key, (bool, int)) else int(LEVEL_KEY.match(str(key)).group(1))  # type: ignore[union-attr]
        listed.append({**level, "value": value} if isinstance(level, dict) else {"value": value, "description": level})
    return listed


def booleans_as_levels(levels: Any) -> Any:
    """Levels written `value: true` / `value: false` (a pass/fail evaluator) as levels 1 and 0."""
    if not isinstance(levels, list):
        return levels
    return [
        {**level, "value": int(level["value"])}
        if isinstance(level, dict) and isinstance(level.get("value"), bool)
        else level
        for level in levels
    ]


def _boolean(data: dict) -> bool:
    return bool(data.get(BOOLEAN_MARK))


def _normalized(levels: Any, source: Path) -> dict[int, float]:
    """`normalized_score` per level value (levels as `anchors_from` reads them), each in [0, 1]."""
    found: dict[int, float] = {}
    for i, level in enumerate(levels if isinstance(levels, list) else []):
        if not isinstance(level, dict) or level.get("normalized_score") is None:
            continue
        value = anchors_from([level])
        score = level["normalized_score"]
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
            raise RubricImportError(source, f"field rating_levels[{i}].normalized_score: {score!r} is not in [0, 1]")
        if value:
            found[value[0]["value"]] = float(score)
    return found


def _mapping(normalization: Any, source: Path) -> dict[int, float]:
    """`score_normalization.mapping` written as {raw level: normalized score}."""
    mapping = normalization.get("mapping") if isinstance(normalization, dict) else None
    if not isinstance(mapping, dict):
        return {}
    try:
        found = {int(k): float(v) for k, v in mapping.items()}
    except (TypeError, ValueError):
        raise RubricImportError(
            source, f"field score_normalization.mapping: {mapping!r} is not level -> score"
        ) from None
    if not all(0 <= v <= 1 for v in found.values()):
        raise RubricImportError(
            source, f"field score_normalization.mapping: scores must lie in [0, 1], found {mapping!r}"
        )
    return found


def _umbrella_entries(data: dict) -> list[tuple[str, float]]:
    key = next((k for k in UMBRELLA_KEYS if isinstance(data.get(k), list)), None)
    entries = []
    for item in data.get(key) or [] if key else []:
        if isinstance(item, str):
            entries.append((item, 1.0))
        elif isinstance(item, dict):
            file = item.get("file") or item.get("path") or item.get("rubric") or item.get("source")
            if isinstance(file, str):
                weight = item.get("weight", 1.0)
                entries.append((file, float(weight) if isinstance(weight, (int, float)) else 1.0))
    return entries


def _criterion(cid: str, entry: dict, anchors: list[dict], source: Path, where: str) -> dict:
    if len(anchors) < 2:
        raise RubricImportError(source, f"field {where}: needs rating_levels with at least two scores")
    weight = entry.get("weight", 1.0)
    if not isinstance(weight, (int, float)) or isinstance(weight, bool) or weight < 0:
        raise RubricImportError(source, f"field {where}.weight: expected a number >= 0, found {weight!r}")
    return {
        "id": cid,
        "title": str(entry.get("name") or cid),
        "description": str(entry.get("description") or ""),
        "weight": float(weight),
        "scale": {"kind": "ordinal", "anchors": anchors},
    }


def _unit(threshold: float, criteria: list[dict]) -> float:
    """A threshold on the native scale (e.g. 3 of 1-5) as a unit score; a fraction stays as is."""
    if 0 <= threshold <= 1 or not criteria:
        return max(0.0, min(1.0, float(threshold)))
    values = [a["value"] for a in criteria[0]["scale"]["anchors"]]
    low, high = min(values), max(values)
    return max(0.0, min(1.0, (threshold - low) / (high - low)))
