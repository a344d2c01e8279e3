"""Verdicts by tool call (waza, seed 004): the judge is given two tools, `set_waza_grade_pass` and
`set_waza_grade_fail`, and the tool it calls is its verdict on the rubric's one pass/fail
criterion (`--output-mode verdict_tools`, and `auto`'s first mode for a waza rubric where the API
has tool calls). The call's `reason` is the rationale. Everything else (retries, the answer's
checks, landing) is the ordinary judge loop's."""

from __future__ import annotations

import json
from typing import Any

from rubricflow.errors import InputError
from rubricflow.rubrics.model import Rubric
from rubricflow.rubrics.render import (
    VERDICT_TOOLS,
    VERDICT_TOOLS_MODE,
    VERDICT_TOOLS_RULE,
    CallUnit,
    is_waza,
    one_pass_fail,
    with_output_rules,
)

MODE = VERDICT_TOOLS_MODE
PASS, FAIL = VERDICT_TOOLS
INSTRUCTION = VERDICT_TOOLS_RULE
_REASON = {
    "type": "object",
    "properties": {"reason": {"type": "string", "description": "Why, in a sentence."}},
    "required": ["reason"],
}


def output_modes(rubric: Rubric, units: list[CallUnit], offered: tuple[str, ...]) -> tuple[str, ...]:
    """The modes `--output-mode auto` tries, richest first: the API's own, after verdict_tools for a
    waza rubric judged one pass/fail criterion a call where the API has tool calls (seed 004: the
    judge gets the two tools). A refusal falls back along the API's modes as any mode's does."""
    if "tools" in offered and is_waza(rubric) and units and all(one_pass_fail(rubric, u) for u in units):
        return (MODE, *offered)
    return offered


def check(rubric: Rubric, units: list[CallUnit]) -> None:
    """The mode fits a rubric whose every call unit judges one pass/fail criterion; else an error naming it."""
    for unit in units:
        if not one_pass_fail(rubric, unit):
            raise InputError(
                f"--output-mode {MODE}: rubric {rubric.metadata.id} call unit {unit.id} judges "
                f"{', '.join(unit.criteria)}; verdicts by tool call need one pass/fail criterion per call"
            )


def request(system: str, rubric: Rubric, criteria: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    """The system prompt with the tools' rule in place of its JSON answer rules (the unit of `rubric`
    judging `criteria`; a text not rendered from it gets the rule appended), and the request's
    tools (a call is required)."""
    tools = [
        {"type": "function", "function": {"name": name, "description": what, "parameters": _REASON}}
        for name, what in ((PASS, "The response passes the rubric."), (FAIL, "The response fails the rubric."))
    ]
    swapped = with_output_rules(system, rubric, CallUnit("_", criteria), MODE)
    return swapped or f"{system}\n\n{INSTRUCTION}", {"tools": tools, "tool_choice": "required"}


def ignored(response: Any) -> bool:
    """The endpoint took the tools but answered in text, calling none (llama.cpp's Python server
    does not honour `tool_choice: required`): for `auto`, a refusal of the mode."""
    choices = getattr(response, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    if message is None or getattr(message, "refusal", None) or not getattr(message, "content", None):
        return False  # refused, or no answer at all: the ordinary checks say what went wrong
    calls = getattr(message, "tool_calls", None) or []
    return not any(getattr(getattr(c, "function", None), "name", None) in (PASS, FAIL) for c in calls)


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
