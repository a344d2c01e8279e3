"""promptfoo model-graded assertions: `llm-rubric` (pass/fail against a rubric text) and `g-eval`
(a 0-1 score against criteria, with a threshold), from a `promptfooconfig.yaml` (`defaultTest`
and every test's `assert`) or an asserts file (a list of assertions, or `{assert: [...]}`).
Each distinct assertion becomes one criterion; other assertion types (contains, regex, cost...)
are checks promptfoo runs itself, not rubric criteria, and are left out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..documents import RubricImportError, rubric_from_data
from ..model import Rubric
from .common import kebab, safe_id

GRADED = ("llm-rubric", "g-eval", "model-graded-closedqa")
G_EVAL_LEVELS = [
    {"value": v, "description": d}
    for v, d in (
        (1, "does not meet the criteria"),
        (2, "meets few of the criteria"),
        (3, "meets the criteria in part"),
        (4, "meets most of the criteria"),
        (5, "fully meets the criteria"),
    )
]


def assertions(data: Any) -> list[dict]:
    """Every model-graded assertion in a config or asserts file, in file order."""
    found: list[dict] = []

    def take(items: Any) -> None:
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and str(item.get("type", "")).removeprefix("not-") in GRADED:
                found.append(item)
            elif isinstance(item, dict) and item.get("type") in ("assert-set",):
                take(item.get("assert"))

    if isinstance(data, list):
        take(data)
    elif isinstance(data, dict):
        take(data.get("assert"))
        default = data.get("defaultTest")
        if isinstance(default, dict):
            take(default.get("assert"))
        for test in data.get("tests") or [] if isinstance(data.get("tests"), list) else []:
            if isinstance(test, dict):
                take(test.get("assert"))
    return found


def looks_like_promptfoo(data: Any) -> bool:
    return bool(assertions(data))


def import_promptfoo(data: Any, source: Path) -> Rubric:
    found = assertions(data)
    if not found:
        raise RubricImportError(source, f"no {', '.join(GRADED)} assertions: nothing a judge scores")
    criteria: list[dict] = []
    seen: set[str] = set()
    for i, item in enumerate(found):
        value = item.get("value")
        text = "\n".join(f"- {v}" for v in value) if isinstance(value, list) else str(value or "").strip()
        if not text:
            raise RubricImportError(source, f"assertion {i + 1} ({item.get('type')}): no `value` (the rubric text)")
        if text in seen:
            continue  # the same rubric asserted by several tests is one criterion
        seen.add(text)
        kind = str(item["type"])
        cid = safe_id(item.get("metric") or f"{kind.removeprefix('not-')}-{len(criteria) + 1}", f"criterion-{i + 1}")
        criterion: dict = {"id": cid, "title": str(item.get("metric") or kind), "description": text, "tags": [kind]}
        threshold = item.get("threshold")
        if kind.endswith("g-eval"):
            criterion["scale"] = {"kind": "ordinal", "anchors": G_EVAL_LEVELS}
            if isinstance(threshold, (int, float)) and not isinstance(threshold, bool):
                criterion["pass_threshold"] = max(0.0, min(1.0, float(threshold)))
        else:
            criterion["scale"] = {"kind": "binary", "labels": ["fail", "pass"]}
            if kind.startswith("not-"):
                criterion["description"] = f"The output must NOT meet this rubric: {text}"
        weight = item.get("weight")
        if isinstance(weight, (int, float)) and not isinstance(weight, bool) and weight >= 0:
            criterion["weight"] = float(weight)
        criteria.append(criterion)
    name = str(
        data.get("description") if isinstance(data, dict) and isinstance(data.get("description"), str) else source.stem
    )
    doc = {
        "metadata": {
            "id": kebab(source.stem if source.stem != "promptfooconfig" else name),
            "title": name,
            "provenance": {"format": "promptfoo", "source": source.name},
        },
        "goal": f"Grade the output by the model-graded assertions of {source.name}.",
        "criteria": criteria,
    }
    return rubric_from_data(doc, source)
