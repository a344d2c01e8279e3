"""Prometheus score rubrics: a criteria question plus score1..score5 descriptions, one per JSONL line."""

from __future__ import annotations

import json
from pathlib import Path

from ..documents import RubricImportError, rubric_from_data
from ..model import Rubric
from .common import kebab


def import_jsonl(text: str, source: Path) -> list[Rubric]:
    rubrics = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RubricImportError(source, f"line {number}: invalid JSON ({exc.msg})") from None
        rubrics.append(import_record(record, source, line=number))
    if not rubrics:
        raise RubricImportError(source, "no records")
    return rubrics


def import_record(record: dict, source: Path, line: int | None = None) -> Rubric:
    where = f"line {line}: " if line else ""
    rubric = record.get("score_rubric", record)
    if not isinstance(rubric, dict) or "criteria" not in rubric:
        raise RubricImportError(source, f"{where}field score_rubric.criteria: missing")
    anchors = []
    for level in range(1, 6):
        desc = rubric.get(f"score{level}_description")
        if desc is None:
            raise RubricImportError(source, f"{where}field score_rubric.score{level}_description: missing")
        anchors.append({"value": level, "description": str(desc)})
    name = str(record.get("id") or f"{source.stem}-{line or 1}")
    tags = [str(record[k]) for k in ("capability", "task") if record.get(k)]
    doc = {
        "metadata": {
            "id": kebab(name),
            "title": name,
            "tags": tags,
            "provenance": {"format": "prometheus", "source": source.name, "line": line},
        },
        "goal": str(rubric["criteria"]),
        "criteria": [
            {
                "id": "score",
                "title": "Score rubric",
                "description": str(rubric["criteria"]),
                "scale": {"kind": "ordinal", "anchors": anchors},
            }
        ],
    }
    return rubric_from_data(doc, source)
