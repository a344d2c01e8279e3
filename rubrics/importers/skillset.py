"""FLASK-style skill sets: each skill is a criterion (its criteria question plus 1-5 scoring
levels), optionally filed under a primary ability, which becomes a group. Read from a list of
skills, a `{skill: {...}}` mapping, or `{skills: [...]}`; levels as anything levels.py reads
(`Scoring: {"1": ...}`, `score1_description`..., a list of `{score, description}`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..documents import RubricImportError, rubric_from_data
from ..model import Rubric
from .common import kebab, safe_id
from .levels import anchors_from

NAME_KEYS = ("skill", "Skill", "name", "Name", "title")
QUESTION_KEYS = ("criteria", "Criteria", "criterion", "description", "Description", "question")
LEVEL_KEYS = ("scoring", "Scoring", "rubric", "Rubric", "score_rubric", "levels", "scores", "rating_levels")
GROUP_KEYS = ("ability", "Ability", "primary_ability", "category", "Category")


def _skills(data: Any) -> list[dict]:
    if isinstance(data, dict) and isinstance(data.get("skills"), (list, dict)):
        data = data["skills"]
    if isinstance(data, dict):
        data = [{"name": k, **v} for k, v in data.items() if isinstance(v, dict)]
    return [s for s in data if isinstance(s, dict)] if isinstance(data, list) else []


def _levels(skill: dict) -> list[dict]:
    for key in LEVEL_KEYS:
        if key in skill:
            return anchors_from(skill[key])
    return anchors_from({k: v for k, v in skill.items() if str(k).lower().startswith(("score", "level"))})


def looks_like_skillset(data: Any) -> bool:
    skills = _skills(data)
    return bool(skills) and all(any(k in s for k in NAME_KEYS) and len(_levels(s)) >= 2 for s in skills)


def import_skillset(data: Any, source: Path) -> Rubric:
    skills = _skills(data)
    if not skills:
        raise RubricImportError(source, "no skills found")
    criteria: list[dict] = []
    groups: dict[str, list[str]] = {}
    for i, skill in enumerate(skills):
        name = next((str(skill[k]) for k in NAME_KEYS if skill.get(k)), f"skill-{i + 1}")
        anchors = _levels(skill)
        if len(anchors) < 2:
            raise RubricImportError(source, f"skill {name!r}: needs scoring levels (e.g. 1-5 descriptions)")
        cid = safe_id(kebab(name, f"skill-{i + 1}"), f"skill-{i + 1}")
        question = next((str(skill[k]) for k in QUESTION_KEYS if isinstance(skill.get(k), str)), "")
        criteria.append(
            {"id": cid, "title": name, "description": question, "scale": {"kind": "ordinal", "anchors": anchors}}
        )
        ability = next((str(skill[k]) for k in GROUP_KEYS if skill.get(k)), None)
        if ability:
            groups.setdefault(ability, []).append(cid)
    title = str(data.get("name") or source.stem) if isinstance(data, dict) else source.stem
    doc = {
        "metadata": {
            "id": kebab(title),
            "title": title,
            "provenance": {"format": "flask-skillset", "source": source.name},
        },
        "goal": "Score the response on each skill by its scoring levels.",
        "criteria": criteria,
        "groups": [
            {"id": safe_id(kebab(a), f"ability-{i + 1}"), "title": a, "children": ids}
            for i, (a, ids) in enumerate(groups.items())
        ],
    }
    return rubric_from_data(doc, source)
