"""HealthBench examples: rubric items with signed points. Score = points of met items over the sum
of positive points, clipped to [0, 1] (the `points` aggregation)."""

from __future__ import annotations

from pathlib import Path

from ..documents import RubricImportError, rubric_from_data
from ..model import Rubric
from .common import items, kebab, number


def import_healthbench(data: dict, source: Path) -> Rubric:
    criteria = []
    for i, item in enumerate(data["rubrics"]):
        if not isinstance(item, dict) or "criterion" not in item or "points" not in item:
            raise RubricImportError(source, f"field rubrics[{i}]: needs `criterion` and `points`")
        points = number(item["points"], source, f"rubrics[{i}].points")
        criteria.append(
            {
                "id": f"R{i + 1}",
                "description": str(item["criterion"]),
                "scale": {"kind": "binary", "labels": ["not met", "met"]},
                "points": points,
                "tags": [str(t) for t in items(item.get("tags"), source, f"rubrics[{i}].tags")],
            }
        )
    conversation = "\n".join(
        f"{turn.get('role', 'user')}: {turn.get('content', '')}"
        for turn in items(data.get("prompt"), source, "prompt")
        if isinstance(turn, dict)
    )
    prompt_id = str(data.get("prompt_id") or source.stem)
    doc = {
        "metadata": {
            "id": kebab(f"healthbench-{prompt_id}"),
            "title": f"HealthBench {prompt_id}",
            "tags": [str(t) for t in items(data.get("example_tags"), source, "example_tags")],
            "provenance": {"format": "healthbench", "source": source.name, "prompt_id": prompt_id},
        },
        "goal": "Judge whether the assistant's final response meets each rubric item. Items with negative "
        "points describe undesirable behaviour: mark them met (1) when the response shows it.",
        "instructions": [f"The conversation the response answers:\n{conversation}"] if conversation else [],
        "criteria": criteria,
        "scoring": {"method": "points"},
    }
    return rubric_from_data(doc, source)
