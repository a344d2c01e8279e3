"""Importers for the rubric formats other tools use. Each turns one parsed file into typed rubrics;
`detect_and_import` picks the importer by the registry (`registry.FORMATS`): the first text format
that recognises the file's text, else the first data format that recognises its parsed YAML/JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..documents import DuplicateKey, RubricImportError, no_duplicate_keys, parse_yaml
from ..model import Rubric
from . import dispatcher, prometheus, xml_spec  # noqa: F401 - xml_spec: `doctor` accounts for its elements
from .registry import FORMATS, Format, Importer, expected_shapes


def detect_and_import(text: str, path: Path) -> list[Rubric]:
    if not text.lstrip("\ufeff \t\r\n"):
        raise RubricImportError(path, "empty file")
    if found := text_importer(text, path):
        return guarded(found, text, path)
    data = parse_data(text, path)
    return guarded(importer_for(data, path), data, path)


def guarded(found: tuple[str, Importer], data: Any, path: Path) -> list[Rubric]:
    """Run an importer; a value it did not expect (a field of a type or form no check foresaw) is
    an error naming the file and the importer, never a traceback."""
    name, read = found
    try:
        return read(data, path)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:  # RubricImportError passes
        raise RubricImportError(
            path, f"read as {name}, but a field has a form that importer does not take ({type(exc).__name__}: {exc})"
        ) from None


def text_format(text: str, path: Path) -> Format | None:
    """The text format that recognises the file (None: the file is YAML or JSON data)."""
    return next((f for f in FORMATS if f.text and f.detect(text, path)), None)


def text_importer(text: str, path: Path) -> tuple[str, Importer] | None:
    found = text_format(text, path)
    return (found.name, found.read) if found else None


def import_jsonl(text: str, path: Path) -> list[Rubric]:
    """One record a line, each read by the importer its shape belongs to: a Prometheus dataset,
    or HealthBench as it is released (one example a line). An error names the line."""
    rubrics: list[Rubric] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line, object_pairs_hook=no_duplicate_keys)
        except DuplicateKey as exc:
            raise RubricImportError(path, f"line {number}: {exc}") from None
        except json.JSONDecodeError as exc:
            raise RubricImportError(path, f"line {number}: invalid JSON ({exc.msg})") from None
        if isinstance(record, dict) and prometheus.looks_like_levels(record):
            rubrics.append(prometheus.import_record(record, path, line=number))
            continue
        try:
            rubrics += import_data(record, path)
        except RubricImportError as exc:
            raise RubricImportError(path, f"line {number}: {str(exc).removeprefix(f'{path}: ')}") from None
    if not rubrics:
        raise RubricImportError(path, "no records")
    return rubrics


def parse_data(text: str, path: Path) -> Any:
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text, object_pairs_hook=no_duplicate_keys)
        except DuplicateKey as exc:
            raise RubricImportError(path, str(exc)) from None
        except json.JSONDecodeError as exc:
            raise RubricImportError(path, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    return parse_yaml(text, path)


def import_data(data: Any, path: Path) -> list[Rubric]:
    """Route parsed YAML/JSON data to the importer its shape belongs to (a file may hold several rubrics)."""
    return importer_for(data, path)[1](data, path)


def _prometheus_records(data: list, path: Path) -> list[Rubric]:
    """A JSON list of Prometheus records (BiGGen-Bench's data.json), read as its JSON-lines form is."""
    return [_record(path, number, record) for number, record in enumerate(data, start=1)]


def _record(path: Path, number: int, record: dict) -> Rubric:
    try:
        return prometheus.import_record(record, path, name=None if record.get("id") else f"{path.stem}-{number}")
    except RubricImportError as exc:
        raise RubricImportError(path, f"record {number}: {str(exc).removeprefix(f'{path}: ')}") from None


def data_format(data: Any, path: Path) -> Format:
    """The data format that recognises parsed YAML/JSON: the first in the registry's order."""
    if not isinstance(data, dict | list):
        raise RubricImportError(path, f"expected a mapping at the top level, found {type(data).__name__}")
    found = next((f for f in FORMATS if not f.text and f.detect(data, path)), None)
    if found is not None:
        return found
    if isinstance(data, list) and data and all(isinstance(m, dict) and "role" in m for m in data):
        raise RubricImportError(
            path,
            "not a rubric: a list of chat messages (a grading prompt; a promptfoo config that names it in "
            "`rubricPrompt: file://...` reads it)",
        )
    if isinstance(data, list):
        raise RubricImportError(path, "a list at the top level that is neither promptfoo assertions nor a skill set")
    raise RubricImportError(
        path,
        f"not a rubric in any known format: expected {expected_shapes()}; found top-level keys {sorted(map(str, data))[:8]}",
    )


def importer_for(data: Any, path: Path) -> tuple[str, Importer]:
    """The importer (its format's name and the function) that parsed data's shape belongs to."""
    if isinstance(data, list) and data and all(isinstance(r, dict) and prometheus.looks_like_levels(r) for r in data):
        return "Prometheus", _prometheus_records
    found = data_format(data, path)
    return found.name, found.read


dispatcher.register(detect_and_import, import_jsonl)  # for the importers that read more rubric text
