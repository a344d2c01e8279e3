"""Verdicts by tool call (waza, seed 004): the judge is given two tools, `set_waza_grade_pass` and
`set_waza_grade_fail`, and the tool it calls is its verdict on the rubric's one pass/fail
criterion (`--output-mode verdict_tools`). The call's `reason` is the rationale. Everything else
(retries, the answer's checks, landing) is the ordinary judge loop's."""

from __future__ import annotations

import json
from typing import Any

from rubricflow.errors import InputError
from rubricflow.rubrics.model import Rubric
from rubricflow.rubrics.render import CallUnit

MODE = "verdict_tools"
PASS, FAIL = "set_waza_grade_pass", "set_waza_grade_fail"
INSTRUCTION = (
    f"Give your verdict by calling a tool: `{PASS}` when the response passes, otherwise `{FAIL}` "
    "with the reason (the unsupported claim, the missed instruction)."
)
_REASON = {
    "type": "object",
    "properties": {"reason": {"type": "string", "description": "Why, in a sentence."}},
    "required": ["reason"],
}


def check(rubric: Rubric, units: list[CallUnit]) -> None:
    """The mode fits a rubric whose every call unit judges one pass/fail criterion; else an error naming it."""
    for unit in units:
        if len(unit.criteria) != 1 or rubric.criterion(unit.criteria[0]).scale.kind != "binary":
            raise InputError(
                f"--output-mode {MODE}: rubric {rubric.metadata.id} call unit {unit.id} judges "
                f"{', '.join(unit.criteria)}; verdicts by tool call need one pass/fail criterion per call"
            )


def request(system: str) -> tuple[str, dict[str, Any]]:
    """The system prompt with the tools' instruction, and the request's tools (a call is required)."""
    tools = [
        {"type": "function", "function": {"name": name, "description": what, "parameters": _REASON}}
        for name, what in ((PASS, "The response passes the rubric."), (FAIL, "The response fails the rubric."))
    ]
    return f"{system}\n\n{INSTRUCTION}", {"tools": tools, "tool_choice": "required"}


def answer(tool_call: Any, unit: CallUnit) -> str | None:
    """The verdict call as the judgment JSON the answer checks read (None: not a verdict tool)."""
    name = tool_call.function.name
    if name not in (PASS, FAIL):
        return None
    try:
        reason = str(json.loads(tool_call.function.arguments or "{}").get("reason", ""))
    except (json.JSONDecodeError, AttributeError):
        reason = str(tool_call.function.arguments or "")
    verdict: dict[str, Any] = {"value": 1 if name == PASS else 0, "rationale": reason or name, "evidence": []}
    return json.dumps({"criteria": {unit.criteria[0]: verdict}, "disqualifiers": []})
