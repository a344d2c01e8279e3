"""Rubric documents: parsed YAML/JSON data to a typed rubric and back.

The leaf of the file-format code: `formats` and every importer build on it, and it imports
neither, so the two never import each other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from rubricflow.errors import InputError

from .model import Rubric

try:  # the C loader is ~10x faster; both are safe loaders (no custom tags)
    SAFE_LOADER: Any = yaml.CSafeLoader
    SAFE_DUMPER: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    SAFE_LOADER, SAFE_DUMPER = yaml.SafeLoader, yaml.SafeDumper

NATIVE_SUFFIXES = (".yaml", ".yml", ".json")


class RubricImportError(InputError):
    """A file that cannot be read as a rubric; the message names the file and the field."""

    def __init__(self, source: str | Path, message: str):
        self.source = str(source)
        super().__init__(f"{source}: {message}")


def parse_yaml(text: str, source: str | Path) -> Any:
    try:
        return yaml.load(text, Loader=SAFE_LOADER)
    except yaml.constructor.ConstructorError as exc:
        raise RubricImportError(source, f"YAML tag refused (only plain YAML is read): {exc.problem} {exc.problem_mark}") from None
    except yaml.YAMLError as exc:
        raise RubricImportError(source, f"invalid YAML: {exc}") from None


def validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        parts.append(f"field {loc}: {err['msg']}")
    return "; ".join(parts)


def rubric_from_data(data: Any, source: str | Path) -> Rubric:
    try:
        return Rubric.model_validate(data)
    except ValidationError as exc:
        raise RubricImportError(source, validation_message(exc)) from None


def rubric_to_data(rubric: Rubric) -> dict:
    """The rubric as the smallest document that loads back to an equal rubric (defaults left out)."""
    data = rubric.model_dump(mode="json", exclude_defaults=True)
    for i, criterion in enumerate(rubric.criteria):  # keep the scale's discriminator
        entry = data["criteria"][i] if "criteria" in data else {}
        if "scale" in entry:
            entry["scale"] = {"kind": criterion.scale.kind, **entry["scale"]}
    return data
