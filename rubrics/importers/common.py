"""Small helpers the importers share."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..documents import RubricImportError

TEXT_SUFFIXES = (".md", ".txt", ".prompt", ".jinja2", ".j2")  # prompts as text, Prompt flow's as Jinja templates


def kebab(name: str, fallback: str = "rubric") -> str:
    """`AntiLLMY` -> `anti-llmy`, `planning_travel_plan_0` -> `planning-travel-plan-0`."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", name.strip())
    slug = re.sub(r"[^a-z0-9]+", "-", spaced.lower()).strip("-")
    return slug[:128].strip("-") or fallback


def semver(version: object) -> str:
    """Pad `1` or `1.0` to `1.0.0`; keep a full semver as is."""
    text = str(getattr(version, "yaml_text", None) or version or "1.0.0").strip().lstrip("vV")  # 2.10 stays 2.10
    parts = text.split(".")
    if all(p.isdigit() for p in parts) and 1 <= len(parts) < 3:
        parts += ["0"] * (3 - len(parts))
        return ".".join(parts)
    return text


def safe_id(raw: object, fallback: str) -> str:
    """A criterion/pattern id the model accepts."""
    text = re.sub(r"[^A-Za-z0-9_.:-]+", "_", str(raw or "").strip()).strip("_.:-")
    return text[:128] or fallback


def number(value: Any, source: Path, field: str) -> float:
    """A field that must be a number (a numeric string counts, as YAML users write "2"); anything
    else is an error naming the field, never a silent default."""
    try:
        if isinstance(value, bool):
            raise TypeError(value)
        return float(value)  # what float refuses is the error below
    except (TypeError, ValueError):
        raise RubricImportError(source, f"field {field}: a number is required, found {value!r}") from None


def items(value: object, source: Path, field: str) -> list:
    """A field that must be a list (absent or null: empty)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise RubricImportError(source, f"field {field}: a list is required, found {value!r}")
    return value


def whole(value: Any) -> str:
    """A field kept whole (in provenance): as JSON, every part of it read (so `doctor` says used)."""

    def plain(node: Any) -> Any:
        if isinstance(node, dict):
            return {str(k): plain(v) for k, v in node.items()}
        if isinstance(node, list):
            return [plain(v) for v in node]
        return node

    found = plain(value)
    return found if isinstance(found, str) else json.dumps(found, sort_keys=True, ensure_ascii=False)
