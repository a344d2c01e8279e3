"""Prompty files (`.prompty`), the format of Azure AI Evaluation's built-in evaluators and of Prompt
flow: YAML frontmatter (`name`, `description`, `model`, `inputs`, `sample`) over a chat template
whose turns start with `system:` / `user:` / `assistant:` lines and whose slots are `{{input}}`.

The rubric is the template's rating scale, in either of the two layouts the evaluators use:
`# Definition` then `# Ratings` with `## [Trait: N] (Label)` headings, each with `**Definition:**`
and `**Examples:**`; or "One star: ..." to "Five stars: ..." lines. `model` (the judge's settings)
is rubricflow's own business and is named as ignored in the rubric's provenance.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..documents import RubricImportError, parse_yaml, rubric_from_data
from ..model import Rubric
from .common import kebab, safe_id

_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*\r?\n?(.*)\Z", re.S)
_ROLE = re.compile(r"^(system|user|assistant)\s*:\s*$", re.M | re.I)
_LEVEL_HEADING = re.compile(r"^##\s*\[\s*([^:\]]+?)\s*:\s*(-?\d+)\s*\]\s*(?:\(([^)]*)\))?\s*$", re.M)
_STARS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_STAR_LINE = re.compile(r"^\s*(one|two|three|four|five)\s+stars?\s*:\s*(.+)$", re.I | re.M)
_SLOT = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")
KNOWN = {"name", "description", "model", "inputs", "outputs", "sample", "authors", "version", "tags", "template"}


def looks_like_prompty(text: str, path: Path) -> bool:
    if path.suffix.lower() == ".prompty":
        return True
    match = _FRONTMATTER.match(text.lstrip(" \t\r\n"))
    return bool(match and _ROLE.search(match.group(2)) and re.search(r"^inputs\s*:", match.group(1), re.M))


def import_prompty(text: str, source: Path) -> Rubric:
    match = _FRONTMATTER.match(text.lstrip(" \t\r\n"))
    if not match:
        raise RubricImportError(
            source, "Prompty file: expected YAML frontmatter between `---` lines, then the template"
        )
    meta = parse_yaml(match.group(1), source) or {}
    if not isinstance(meta, dict):
        raise RubricImportError(source, "Prompty frontmatter: expected a mapping (name, description, model, inputs)")
    for field in ("name", "description"):
        if field in meta and not isinstance(meta[field], str):
            raise RubricImportError(source, f"Prompty field {field}: expected text, got {type(meta[field]).__name__}")
    inputs = meta.get("inputs") or {}
    if not isinstance(inputs, dict):
        raise RubricImportError(source, "Prompty field inputs: expected a mapping of input names")
    turns = _turns(match.group(2))
    body = "\n".join(turns.values())
    name = meta.get("name") or source.stem
    criterion = _criterion(body, name, source)
    ignored = sorted(k for k in meta if k not in KNOWN) + (
        ["model (judge settings: rubricflow's own)"] if "model" in meta else []
    )
    doc: dict[str, Any] = {
        "metadata": {
            "id": kebab(source.stem if source.suffix.lower() == ".prompty" else name),
            "title": name,
            "description": meta.get("description", ""),
            "provenance": {
                "format": "prompty",
                "source": source.name,
                "inputs": ", ".join(str(k) for k in inputs),
                "slots": ", ".join(dict.fromkeys(_SLOT.findall(body))),
                "ignored": "; ".join(ignored),
            },
        },
        "goal": _definition(body) or meta.get("description") or f"Rate the response on {name}.",
        "criteria": [criterion],
    }
    if turns.get("system"):
        doc["role"] = {"persona": " ".join(turns["system"].split())[:2000]}
    return rubric_from_data(doc, source)


def _turns(template: str) -> dict[str, str]:
    """The template's turns by role (a template with no role lines is one user turn)."""
    parts = _ROLE.split(template)
    if len(parts) == 1:
        return {"user": template}
    turns: dict[str, str] = {}
    for i in range(1, len(parts) - 1, 2):
        role = parts[i].lower()
        turns[role] = (turns.get(role, "") + "\n" + parts[i + 1]).strip()
    return turns


def _criterion(body: str, name: str, source: Path) -> dict:
    anchors, trait = _heading_levels(body)
    if not anchors:
        anchors = [
            {"value": _STARS[m.group(1).lower()], "description": m.group(2).strip()} for m in _STAR_LINE.finditer(body)
        ]
    if len(anchors) < 2:
        raise RubricImportError(
            source,
            "Prompty file: no rating scale in the template (expected `## [Trait: 1] (Label)` headings under "
            "`# Ratings`, or `One star: ...` to `Five stars: ...` lines)",
        )
    anchors.sort(key=lambda a: a["value"])
    trait = trait or name
    return {
        "id": safe_id(kebab(trait), "score"),
        "title": trait,
        "description": _definition(body) or f"{trait}, rated on the levels below.",
        "scale": {"kind": "ordinal", "anchors": anchors},
    }


def _heading_levels(body: str) -> tuple[list[dict], str | None]:
    """`## [Trait: N] (Label)` headings: the level's text is its `**Definition:**` paragraph (the
    examples stay out of the anchor; they are long and belong to the prompt)."""
    found = list(_LEVEL_HEADING.finditer(body))
    anchors = []
    for i, m in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(body)
        section = re.split(r"^#\s", body[m.end() : end], maxsplit=1, flags=re.M)[0]
        text = re.split(r"\*\*Examples?:?\*\*", section, maxsplit=1)[0]
        text = re.sub(r"\*\*Definition:?\*\*\s*", "", text)
        anchors.append(
            {"value": int(m.group(2)), "label": (m.group(3) or "").strip()[:200], "description": " ".join(text.split())}
        )
    return anchors, (found[0].group(1).strip() if found else None)


def _definition(body: str) -> str:
    """The `# Definition` section's text, without its notes' markup."""
    match = re.search(r"^#\s*Definition\s*$(.*?)(?=^#\s)", body, re.M | re.S)
    return " ".join(match.group(1).replace("**", "").split())[:4000] if match else ""
