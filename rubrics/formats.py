"""Rubric files: native YAML/JSON, detection of other tools' formats, and export.

`load_rubrics(path)` reads any supported file and returns typed rubrics; a file that is not a
rubric is refused with a reason, never read as an empty rubric.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import yaml
from pydantic import ValidationError

from .model import Rubric

try:  # the C loader is ~10x faster; both are safe loaders (no custom tags)
    _SafeLoader: Any = yaml.CSafeLoader
    _SafeDumper: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _SafeLoader, _SafeDumper = yaml.SafeLoader, yaml.SafeDumper

NATIVE_SUFFIXES = (".yaml", ".yml", ".json")


class RubricImportError(ValueError):
    """A file that cannot be read as a rubric; the message names the file and the field."""

    def __init__(self, source: str | Path, message: str):
        self.source = str(source)
        super().__init__(f"{source}: {message}")


def parse_yaml(text: str, source: str | Path) -> Any:
    try:
        return yaml.load(text, Loader=_SafeLoader)
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


# --------------------------------------------------------------------------- export


def rubric_to_data(rubric: Rubric) -> dict:
    """The rubric as the smallest document that loads back to an equal rubric (defaults left out)."""
    data = rubric.model_dump(mode="json", exclude_defaults=True)
    for i, criterion in enumerate(rubric.criteria):  # keep the scale's discriminator
        entry = data["criteria"][i] if "criteria" in data else {}
        if "scale" in entry:
            entry["scale"] = {"kind": criterion.scale.kind, **entry["scale"]}
    return data


def dump_yaml(rubric: Rubric) -> str:
    return yaml.dump(rubric_to_data(rubric), Dumper=_SafeDumper, sort_keys=False, allow_unicode=True, width=100)


def dump_json(rubric: Rubric) -> str:
    return json.dumps(rubric_to_data(rubric), ensure_ascii=False, indent=2)


def dump(rubric: Rubric, fmt: str) -> str:
    from .importers.xml_spec import dump_xml

    writers: dict[str, Callable[[Rubric], str]] = {"yaml": dump_yaml, "json": dump_json, "xml": dump_xml}
    if fmt not in writers:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(writers)}")
    return writers[fmt](rubric)


# --------------------------------------------------------------------------- import


def load_rubric(path: str | Path) -> Rubric:
    rubrics = load_rubrics(path)
    if len(rubrics) != 1:
        raise RubricImportError(path, f"holds {len(rubrics)} rubrics; name one (e.g. with `rubric convert`)")
    return rubrics[0]


def load_rubrics(path: str | Path) -> list[Rubric]:
    path = Path(path)
    if not path.is_file():
        raise RubricImportError(path, "no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RubricImportError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return loads_rubrics(text, path)


def loads_rubrics(text: str, source: str | Path) -> list[Rubric]:
    """Detect the format of `text` and import it."""
    from .importers import detect_and_import

    return detect_and_import(text, Path(str(source)))
