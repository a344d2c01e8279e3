"""A flow's site-specific parameters checked before any work: deploy/prefect.yaml reads each from the
environment (`{{ $RUBRICFLOW_SOURCE }}`). Prefect keeps a placeholder whose variable was unset as
literal text on its first templating pass, and the real `prefect deploy` CLI templates again and
leaves an empty string: an empty source read the current folder (the repository, `.venv` included)
and marked the real corpus removed. A flow run refuses either in one line, naming the variable,
instead of ingesting or judging the wrong data; the CLI and the API run the same check."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from rubricflow.errors import InputError

_UNSET = re.compile(r"\{\{\s*\$(\w+)\s*\}\}")
# The variable deploy/prefect.yaml reads each parameter from.
VARIABLE = {
    "source": "RUBRICFLOW_SOURCE",
    "warehouse_path": "RUBRICFLOW_WAREHOUSE",
    "rubric": "RUBRICFLOW_RUBRIC",
    "rubrics": "RUBRICFLOW_RUBRIC",
    "rubric_a": "RUBRICFLOW_RUBRIC",
    "rubric_b": "RUBRICFLOW_RUBRIC_B",
    "judge": "RUBRICFLOW_MODEL",
    "judge_a": "RUBRICFLOW_MODEL",
    "judge_b": "RUBRICFLOW_MODEL",
}


def refuse_unset(**parameters: Any) -> None:
    """Refuse a parameter left as a `{{ $NAME }}` placeholder or empty (a string, a list holding
    one, a judge whose model is empty): `prefect deploy` ran with its variable unset."""
    for name, value in parameters.items():
        if isinstance(value, BaseModel):  # a typed parameter (JudgeConfig) validated from the placeholder
            value = value.model_dump()
        text = repr(value) if isinstance(value, dict | list | tuple) else value
        found = _UNSET.search(text) if isinstance(text, str) else None
        if found:
            raise InputError(
                f"deployment parameter {name} is still {found.group(0)!r}: {found.group(1)} was unset when "
                f"`prefect deploy` ran; export {found.group(1)} (see deploy/prefect.yaml) and deploy again"
            )
        if _empty(value):
            raise InputError(f"parameter {name} is empty: {_why_empty(name)}")


def _empty(value: Any) -> bool:
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list | tuple):
        return not value or any(_empty(v) for v in value)
    if isinstance(value, dict) and "model" in value:
        return isinstance(value["model"], str) and not value["model"].strip()
    return False


def _why_empty(name: str) -> str:
    variable = VARIABLE.get(name)
    if variable is None:
        return "give it a value"
    return (
        f"give it a value (in a deployment: {variable} was unset or empty when `prefect deploy` ran; "
        f"export {variable} (see deploy/prefect.yaml) and deploy again)"
    )
