"""A deployment's parameters as `prefect deploy` left them: deploy/prefect.yaml reads each
site-specific one from the environment (`{{ $RUBRICFLOW_SOURCE }}`), and Prefect keeps a placeholder
whose variable was unset as literal text. A flow run refuses such a parameter in one line, naming
the variable, instead of failing at 02:00 on a file called '{{ $RUBRICFLOW_SOURCE }}'."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from rubricflow.errors import InputError

_UNSET = re.compile(r"\{\{\s*\$(\w+)\s*\}\}")


def refuse_unset(**parameters: Any) -> None:
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
