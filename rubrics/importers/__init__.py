"""Importers for the rubric formats other tools use. Each turns one parsed file into typed rubrics;
`detect_and_import` picks the importer from the file's suffix and shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..documents import RubricImportError, parse_yaml, rubric_from_data
from ..model import Rubric
from . import (
    evals,
    evaluator_yaml,
    forge,
    healthbench,
    markdown,
    paperbench,
    prometheus,
    prompt_text,
    promptfoo,
    prompty,
    skillset,
    xml_spec,
)


def detect_and_import(text: str, path: Path) -> list[Rubric]:
    suffix = path.suffix.lower()
    stripped = text.lstrip("\ufeff \t\r\n")
    if not stripped:
        raise RubricImportError(path, "empty file")
    if prompty.looks_like_prompty(text, path):
        return [prompty.import_prompty(text, path)]
    if suffix == ".xml" or stripped.startswith("<LLM_JUDGE_SPEC"):
        return [xml_spec.import_xml(text, path)]
    if suffix in (".md", ".txt", ".prompt") and not stripped.startswith("---"):
        if prompt_text.looks_like_prometheus_block(text):
            return [prompt_text.import_prometheus_block(text, path)]
        if prompt_text.looks_like_geval(text):
            return [prompt_text.import_geval(text, path)]
    if suffix in (".md", ".txt", ".prompt"):
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
    return import_data(data, path)


def import_data(data: Any, path: Path) -> list[Rubric]:
    """Route parsed YAML/JSON data to the importer its shape belongs to (a file may hold several rubrics)."""
    if isinstance(data, list):
        if promptfoo.looks_like_promptfoo(data):
            return [promptfoo.import_promptfoo(data, path)]
        if skillset.looks_like_skillset(data):
            return [skillset.import_skillset(data, path)]
        raise RubricImportError(path, "a list at the top level that is neither promptfoo assertions nor a skill set")
    if not isinstance(data, dict):
        raise RubricImportError(path, f"expected a mapping at the top level, found {type(data).__name__}")
    if "metadata" in data:
        return [rubric_from_data(data, path)]
    if "rubric_sha256" in data:
        return [paperbench.import_envelope(data, path)]
    if "sub_tasks" in data and "requirements" in data:
        return [paperbench.import_tree(data, path)]
    if isinstance(data.get("rubrics"), list):
        return [healthbench.import_healthbench(data, path)]
    if "score_rubric" in data or prometheus.looks_like_levels(data):
        return [prometheus.import_record(data, path)]
    specs = {k: v for k, v in data.items() if isinstance(v, dict) and "prompt" in v}
    if specs and len(specs) == len(data):  # an OpenAI Evals registry file: one rubric per spec
        return [evals.import_evals({name: spec}, path) for name, spec in specs.items()]
    if evals.looks_like_spec(data):  # one spec at the top level, named by its file (openai/evals' modelgraded/)
        return [evals.import_evals({path.stem: data}, path)]
    if promptfoo.looks_like_promptfoo(data):
        return [promptfoo.import_promptfoo(data, path)]
    if evaluator_yaml.looks_like_evaluator(data):
        return [evaluator_yaml.import_evaluator(data, path)]
    if skillset.looks_like_skillset(data):
        return [skillset.import_skillset(data, path)]
    if forge.looks_like_forge(data):
        return [forge.import_forge(data, path)]
    raise RubricImportError(
        path,
        "not a rubric in any known format: expected a native rubric (a `metadata` key), a Forge YAML rubric, "
        "evaluator YAML (`evaluation_criteria` / `rating_levels`), promptfoo assertions, a FLASK skill set, "
        "a PaperBench tree, a HealthBench example, OpenAI Evals model-graded specs or a Prometheus record; "
        f"found top-level keys {sorted(map(str, data))[:8]}",
    )
