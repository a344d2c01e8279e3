"""Importers for the rubric formats other tools use. Each turns one parsed file into typed rubrics;
`detect_and_import` picks the importer from the file's suffix and shape."""

from __future__ import annotations

import json
from collections.abc import Callable
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
    openai_graders,
    paperbench,
    phoenix,
    prometheus,
    prompt_text,
    promptfoo,
    prompty,
    skillset,
    xml_spec,
)
from .common import TEXT_SUFFIXES

Importer = Callable[[Any, Path], list[Rubric]]


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


def text_importer(text: str, path: Path) -> tuple[str, Importer] | None:
    """The importer of a text format, by suffix and content (None: the file is YAML or JSON data)."""
    suffix = path.suffix.lower()
    stripped = text.lstrip("\ufeff \t\r\n")
    if prompty.looks_like_prompty(text, path):
        return "Prompty", lambda t, p: [prompty.import_prompty(t, p)]
    if suffix == ".xml" or stripped.startswith("<LLM_JUDGE_SPEC"):
        return xml_spec.FORMAT_NAME, lambda t, p: [xml_spec.import_xml(t, p)]
    if suffix in TEXT_SUFFIXES and not stripped.startswith("---"):
        if prompt_text.looks_like_prometheus_block(text):
            return "Prometheus grading prompt", lambda t, p: [prompt_text.import_prometheus_block(t, p)]
        if prompt_text.looks_like_geval(text):
            return "G-Eval criteria prompt", lambda t, p: [prompt_text.import_geval(t, p)]
        if prompt_text.looks_like_flask_prompt(text):
            return "FLASK evaluation prompt", lambda t, p: [prompt_text.import_flask_prompt(t, p)]
        if prompt_text.looks_like_scored_prompt(text):
            return "judge prompt with a scoring scale", lambda t, p: [prompt_text.import_scored_prompt(t, p)]
    if prompty.looks_like_chat_template(text, path):
        return "chat template (a Prompty body)", lambda t, p: [prompty.import_chat_template(t, p)]
    if suffix in TEXT_SUFFIXES:
        return "Markdown with YAML frontmatter", lambda t, p: [markdown.import_markdown(t, p)]
    if suffix == ".jsonl":
        return "JSON Lines (a rubric a line)", import_jsonl
    return None


def import_jsonl(text: str, path: Path) -> list[Rubric]:
    """One record a line, each read by the importer its shape belongs to: a Prometheus dataset,
    or HealthBench as it is released (one example a line). An error names the line."""
    rubrics: list[Rubric] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
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
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise RubricImportError(path, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    return parse_yaml(text, path)


def import_data(data: Any, path: Path) -> list[Rubric]:
    """Route parsed YAML/JSON data to the importer its shape belongs to (a file may hold several rubrics)."""
    return importer_for(data, path)[1](data, path)


def importer_for(data: Any, path: Path) -> tuple[str, Importer]:
    """The importer (its format's name and the function) that parsed data's shape belongs to."""
    if isinstance(data, list):
        if promptfoo.looks_like_promptfoo(data):
            return "promptfoo", lambda d, p: [promptfoo.import_promptfoo(d, p)]
        if skillset.looks_like_skillset(data):
            return "FLASK-style skill set", lambda d, p: [skillset.import_skillset(d, p)]
        raise RubricImportError(path, "a list at the top level that is neither promptfoo assertions nor a skill set")
    if not isinstance(data, dict):
        raise RubricImportError(path, f"expected a mapping at the top level, found {type(data).__name__}")
    for name, looks_like, read in SHAPES:
        if looks_like(data):
            return name, read
    raise RubricImportError(
        path,
        "not a rubric in any known format: expected a native rubric (a `metadata` key), a Forge YAML rubric, "
        "evaluator YAML (`evaluation_criteria` / `rating_levels`), a Phoenix evaluator config (`messages` and "
        "`choices`), promptfoo assertions, a FLASK skill set, "
        "a PaperBench tree, a HealthBench example, an OpenAI Evals grader export (`testing_criteria`), OpenAI Evals model-graded specs or a Prometheus record; "
        f"found top-level keys {sorted(map(str, data))[:8]}",
    )


def _registry(data: dict) -> bool:
    specs = [v for v in data.values() if isinstance(v, dict) and "prompt" in v]
    return bool(specs) and len(specs) == len(data)


# In order: the first shape a mapping has names its importer.
SHAPES: list[tuple[str, Callable[[dict], bool], Importer]] = [
    # an eval object has a `metadata` map too: its `testing_criteria` decide first
    ("OpenAI Evals grader export", openai_graders.looks_like_export, openai_graders.import_export),
    ("native", lambda d: "metadata" in d, lambda d, p: [rubric_from_data(d, p)]),
    ("PaperBench envelope", lambda d: "rubric_sha256" in d, lambda d, p: [paperbench.import_envelope(d, p)]),
    (
        "PaperBench tree",
        lambda d: "sub_tasks" in d and "requirements" in d,
        lambda d, p: [paperbench.import_tree(d, p)],
    ),
    ("HealthBench", lambda d: isinstance(d.get("rubrics"), list), lambda d, p: [healthbench.import_healthbench(d, p)]),
    (
        "Prometheus record",
        lambda d: any(k in d for k in prometheus.RUBRIC_KEYS) or prometheus.looks_like_levels(d),
        lambda d, p: [prometheus.import_record(d, p)],
    ),
    (  # prometheus-eval's {name: {instruction, rubric_data}}: one rubric per name
        "Prometheus records by name",
        prometheus.looks_like_named_records,
        lambda d, p: [prometheus.import_record(r, p, name=str(n)) for n, r in d.items()],
    ),
    (  # a registry file: one rubric per spec
        "OpenAI Evals registry",
        _registry,
        lambda d, p: [evals.import_evals({n: s}, p) for n, s in d.items()],
    ),
    (  # one spec at the top level, named by its file (openai/evals' modelgraded/)
        "OpenAI Evals model-graded spec",
        evals.looks_like_spec,
        lambda d, p: [evals.import_evals({p.stem: d}, p)],
    ),
    ("Phoenix classification evaluator", phoenix.looks_like_phoenix, lambda d, p: [phoenix.import_phoenix(d, p)]),
    ("promptfoo", promptfoo.looks_like_promptfoo, lambda d, p: [promptfoo.import_promptfoo(d, p)]),
    ("evaluator YAML", evaluator_yaml.looks_like_evaluator, lambda d, p: [evaluator_yaml.import_evaluator(d, p)]),
    ("FLASK-style skill set", skillset.looks_like_skillset, lambda d, p: [skillset.import_skillset(d, p)]),
    ("Forge YAML", forge.looks_like_forge, lambda d, p: [forge.import_forge(d, p)]),
]
