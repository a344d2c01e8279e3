"""Prometheus score rubrics: a criteria question plus score1..score5 descriptions, one per JSONL line
(also the Preference Collection's `orig_` fields, and Ragas' RubricsScore maps of levels, 0-based or
not). The levels sit in `score_rubric` (the Feedback Collection) or `rubric_data` (what
prometheus-eval's SCORE_RUBRIC_TEMPLATE is formatted with), with an `instruction` beside them; a
file may name several such records (`{relevance: {instruction, rubric_data}, ...}`)."""

from __future__ import annotations

import re
from pathlib import Path

from ..documents import RubricImportError, rubric_from_data
from ..model import Rubric
from .common import kebab

LEVEL = re.compile(r"^(?:orig_)?score(\d+)_description$")
RUBRIC_KEYS = ("score_rubric", "rubric_data")


def _rubric(record: dict):
    """Where a record keeps its levels: under one of RUBRIC_KEYS, or at its top level."""
    return next((record[k] for k in RUBRIC_KEYS if k in record), record)


def looks_like_named_records(data: dict) -> bool:
    """A map of names to Prometheus records, each with its levels under a RUBRIC_KEYS key."""
    return bool(data) and all(isinstance(v, dict) and any(k in v for k in RUBRIC_KEYS) for v in data.values())


def looks_like_levels(data: dict) -> bool:
    """A Prometheus record (`score_rubric`, or `criteria` beside `score1_description`, also with the
    Preference Collection's `orig_` prefix) or a bare map of levels as Ragas' RubricsScore takes it."""
    rubric = _rubric(data)
    return isinstance(rubric, dict) and sum(bool(LEVEL.match(str(k))) for k in rubric) >= 2


def import_record(record: dict, source: Path, line: int | None = None, name: str | None = None) -> Rubric:
    where = f"line {line}: " if line else (f"{name}: " if name else "")
    rubric = _rubric(record)
    if not isinstance(rubric, dict):
        raise RubricImportError(
            source, f"{where}field score_rubric: a map of criteria and level descriptions is required"
        )
    levels = {int(m.group(1)): value for key, value in rubric.items() if (m := LEVEL.match(str(key)))}
    if len(levels) < 2 or sorted(levels) != list(range(min(levels), max(levels) + 1)):
        raise RubricImportError(
            source,
            f"{where}field score_rubric: scoreN_description for consecutive levels is required, found {sorted(levels)}",
        )
    bad = [n for n, text in levels.items() if not isinstance(text, str) or not text.strip()]
    if bad:
        raise RubricImportError(
            source, f"{where}field score{bad[0]}_description: text is required, found {levels[bad[0]]!r}"
        )
    anchors = [{"value": n, "description": levels[n].strip()} for n in sorted(levels)]
    question = rubric.get("criteria", rubric.get("orig_criteria"))
    if question is not None and not isinstance(question, str):
        raise RubricImportError(source, f"{where}field criteria: text is required, found {question!r}")
    question = question or "How well the response fits the levels below (a rubric given by its levels only)."
    instruction = record.get("instruction")
    if instruction is not None and not isinstance(instruction, str):
        raise RubricImportError(source, f"{where}field instruction: text is required, found {instruction!r}")
    name = str(name or record.get("id") or f"{source.stem}-{line or 1}")
    tags = [str(record[k]) for k in ("capability", "task") if record.get(k)]
    doc = {
        "metadata": {
            "id": kebab(name),
            "title": name,
            "tags": tags,
            "provenance": {"format": "prometheus", "source": source.name, "line": line},
        },
        "goal": question,
        "instructions": [f"The instruction the response answers: {instruction.strip()}"] if instruction else [],
        "criteria": [
            {
                "id": "score",
                "title": "Score rubric",
                "description": question,
                "scale": {"kind": "ordinal", "anchors": anchors},
            }
        ],
    }
    return rubric_from_data(doc, source)
