"""Importers for the rubric formats other tools use. Each turns one parsed file into typed rubrics;
`detect_and_import` picks the importer from the file's suffix and shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..documents import RubricImportError, parse_yaml, rubric_from_data
from ..model import Rubric
from . import evals, forge, healthbench, markdown, paperbench, prometheus, xml_spec


def detect_and_import(text: str, path: Path) -> list[Rubric]:
    suffix = path.suffix.lower()
    stripped = text.lstrip("\ufeff \t\r\n")
    if not stripped:
        raise RubricImportError(path, "empty file")
    if suffix == ".xml" or stripped.startswith("<LLM_JUDGE_SPEC"):
        return [xml_spec.import_xml(text, path)]
    if suffix == ".md":
        return [markdown.import_markdown(text, path)]
    if suffix == ".jsonl":
        return prometheus.import_jsonl(text, path)
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RubricImportError(path, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    else:
        data = parse_yaml(text, path)
    return [import_data(data, path)]


def import_data(data: Any, path: Path) -> Rubric:
    """Route parsed YAML/JSON data to the importer its shape belongs to."""
    if not isinstance(data, dict):
        raise RubricImportError(path, f"expected a mapping at the top level, found {type(data).__name__}")
    if "metadata" in data:
        return rubric_from_data(data, path)
    if "rubric_sha256" in data:
        return paperbench.import_envelope(data, path)
    if "sub_tasks" in data and "requirements" in data:
        return paperbench.import_tree(data, path)
    if isinstance(data.get("rubrics"), list):
        return healthbench.import_healthbench(data, path)
    if "score_rubric" in data or {"criteria", "score1_description"} <= set(data):
        return prometheus.import_record(data, path)
    if len(data) == 1 and isinstance(next(iter(data.values())), dict) and "prompt" in next(iter(data.values())):
        return evals.import_evals(data, path)
    if forge.looks_like_forge(data):
        return forge.import_forge(data, path)
    raise RubricImportError(
        path,
        "not a rubric in any known format: expected a native rubric (a `metadata` key), a Forge YAML rubric, "
        "a PaperBench tree, a HealthBench example, an OpenAI Evals model-graded spec or a Prometheus record; "
        f"found top-level keys {sorted(map(str, data))[:8]}",
    )
