"""Markdown with YAML frontmatter (waza style): the frontmatter names the rubric and carries goldens;
the body is the judge prompt, kept whole as the rubric's instructions. The fields seed 004 marks
required (name, version, scale, description) are required: a missing one is an error naming it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import frontmatter

from ..documents import RubricImportError, parse_yaml, rubric_from_data
from ..model import Rubric
from .common import kebab, semver

PASS_FAIL = {"pass-fail", "pass/fail", "binary", "passfail"}
REQUIRED = ("name", "version", "scale", "description")  # seed 004's frontmatter table: "Required: yes"
GRADED = re.compile(r"(\d+)\s*-\s*(\d+)")  # `scale: 1-5`, the graded scale waza reserves
PASS_AT = 0.5  # a golden's `expected: pass` means the judge said pass (pass-fail) or the upper half (1-5)


class _YamlHandler(frontmatter.YAMLHandler):
    """Frontmatter read by the same loader as every rubric file (YAML 1.2 booleans, `version: 2.10`
    kept as written, no tags, no alias bombs)."""

    def __init__(self, source: Path):
        super().__init__()
        self.source = source

    def load(self, fm: str, **kwargs: Any) -> Any:
        return parse_yaml(fm, self.source)


def import_markdown(text: str, source: Path) -> Rubric:
    if not text.lstrip("\ufeff").startswith("---"):
        raise RubricImportError(
            source,
            "not a rubric: Markdown without YAML frontmatter (no name, scale or criteria). "
            "A prompt that only dictates an answer format is not a scoring rubric.",
        )
    try:
        post = frontmatter.loads(text, handler=_YamlHandler(source))
    except Exception as exc:  # the library raises YAML errors of several kinds
        raise RubricImportError(source, f"invalid frontmatter: {exc}") from None
    meta: dict[str, Any] = dict(post.metadata)
    absent = [field for field in REQUIRED if meta.get(field) is None or str(meta[field]).strip() == ""]
    if absent:
        raise RubricImportError(
            source,
            f"field {absent[0]}: waza's frontmatter requires {', '.join(REQUIRED)} (missing: {', '.join(absent)})",
        )
    name = str(meta.get("name") or source.stem)
    scale = _scale(str(meta.get("scale", "pass-fail")).lower().strip(), source)
    description = str(meta.get("description", ""))
    goldens = []
    for i, g in enumerate(meta.get("goldens") or []):
        if not isinstance(g, dict) or "output" not in g:
            raise RubricImportError(source, f"field goldens[{i}]: a golden needs an `output`")
        goldens.append(
            {
                "name": str(g.get("name") or f"golden-{i + 1}"),
                "input": str(g.get("input", "")),
                "output": str(g["output"]),
                "context": str(g.get("context", "")),
                "expected": str(g["expected"]).lower() if g.get("expected") is not None else None,
            }
        )
    body = post.content.strip()
    data = {
        "metadata": {
            "id": kebab(name),
            "version": semver(meta.get("version")),
            "title": name,
            "description": description,
            "provenance": {"format": "markdown-frontmatter", "source": source.name},
        },
        "goal": description,
        "criteria": [
            {
                "id": "verdict",
                "title": name,
                "description": description,
                "scale": scale,
            }
        ],
        "instructions": [body] if body else [],
        "goldens": goldens,
        "scoring": {"pass_threshold": PASS_AT},
    }
    return rubric_from_data(data, source)


def _scale(scale: str, source: Path) -> dict[str, Any]:
    """`pass-fail` (binary), or a graded `1-5` (ordinal, its ends anchored)."""
    if scale in PASS_FAIL:
        return {"kind": "binary", "labels": ["fail", "pass"]}
    graded = GRADED.fullmatch(scale)
    if graded and int(graded.group(1)) < int(graded.group(2)):
        low, high = int(graded.group(1)), int(graded.group(2))
        return {
            "kind": "ordinal",
            "anchors": [
                {"value": low, "label": "worst", "description": "Fails the rubric entirely."},
                {"value": high, "label": "best", "description": "Meets the rubric fully."},
            ],
        }
    raise RubricImportError(source, f"field scale: unsupported scale {scale!r} (expected pass-fail or 1-5)")
