"""Red-team calibration cases (seed 001's red_team_judge.py runner, as a file): a JSON object with
`rubric` (a library name or a path, relative to the file), `source`, `allowed_judgements` (the
verdicts a case may expect) and `cases`, each a request, a response and the judgement expected.
They are imported as the rubric's goldens (`expected_label`) and run by `rubricflow rubric test
--cases FILE` or `rf.load_calibration_cases(FILE)` + `judge.test(...)`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rubricflow.errors import InputError
from rubricflow.rubrics.library import resolve
from rubricflow.rubrics.model import Golden, Rubric

KEYS = ("allowed_judgements", "cases", "rubric", "source")
FIELDS = {  # a case's field -> the names it is found under (the runner's, then common synonyms)
    "name": ("name", "id", "case"),
    "input": ("input", "prompt", "request", "user"),
    "output": ("response", "output", "completion", "model_response"),
    "expected": ("expected", "expected_judgement", "judgement", "label"),
}


def load_cases(path: str | Path) -> Rubric:
    """The file's rubric with its cases added as goldens; a bad file is one error naming the file
    and the key or case. The cases' judgements must be the rubric's verdict labels."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not a readable JSON calibration-cases file: {exc}") from None
    if not isinstance(doc, dict) or (missing := [k for k in KEYS if k not in doc]):
        have = sorted(doc) if isinstance(doc, dict) else type(doc).__name__
        raise InputError(
            f"{path}: a calibration-cases file needs {', '.join(KEYS)}; missing {missing or KEYS} ({have})"
        )
    allowed = _allowed(path, doc["allowed_judgements"])
    ref = str(doc["rubric"])
    rubric = resolve(str(path.parent / ref) if (path.parent / ref).is_file() else ref)
    labels = {lab.label for lab in rubric.scoring.labels} | {rubric.scoring.disqualified_label}
    if unknown := sorted(set(allowed) - labels):
        raise InputError(f"{path}: allowed_judgements {unknown} are not labels of rubric {ref!r} ({sorted(labels)})")
    if not isinstance(doc["cases"], list) or not doc["cases"]:
        raise InputError(f"{path}: `cases` must be a non-empty list")
    goldens = [_golden(path, n, case, allowed) for n, case in enumerate(doc["cases"], 1)]
    return rubric.model_copy(update={"goldens": (*rubric.goldens, *goldens)})


def _allowed(path: Path, value: Any) -> list[str]:
    allowed = [v.strip() for v in value.split(",")] if isinstance(value, str) else value
    if not isinstance(allowed, list) or not allowed or not all(isinstance(v, str) and v for v in allowed):
        raise InputError(f"{path}: allowed_judgements must be a list of verdicts (or 'Yes,Somewhat,No')")
    return allowed


def _golden(path: Path, n: int, case: Any, allowed: list[str]) -> Golden:
    if not isinstance(case, dict):
        raise InputError(f"{path}: case {n} is a {type(case).__name__}, not an object")
    found = {field: next((case[k] for k in names if k in case), None) for field, names in FIELDS.items()}
    if not isinstance(found["output"], str) or not found["output"].strip():
        raise InputError(f"{path}: case {n} has no response (one of {', '.join(FIELDS['output'])})")
    if found["expected"] not in allowed:
        raise InputError(f"{path}: case {n} expects {found['expected']!r}, not one of allowed_judgements {allowed}")
    return Golden(
        name=str(found["name"] or f"case-{n}"),
        input=str(found["input"] or ""),
        output=found["output"],
        expected_label=found["expected"],
    )
