"""Prompty files (`.prompty`), the format of Azure AI Evaluation's built-in evaluators and of Prompt
flow: YAML frontmatter (`name`, `description`, `model`, `inputs`, `sample`) over a chat template
whose turns start with `system:` / `user:` / `assistant:` lines and whose slots are `{{input}}`.

The rubric is the template's rating scale, in the layouts the evaluators use: `# Definition` then
`# Ratings` with `## [Trait: N] (Label)` headings, each with `**Definition:**` and `**Examples:**`;
"One star: ..." to "Five stars: ..." lines; or, as Prompt flow's own evaluator examples write it, in
prose: "This correctness value should always be an integer between 1 and 5" (one criterion per
such sentence) or a 0/1 answer "{"apology": 0} or {"apology": 1}". Turns may be written as
Markdown headings (`# system:`). `model` (the judge's settings) is rubricflow's own business and is
named as ignored in the rubric's provenance.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..documents import RubricImportError, parse_yaml, rubric_from_data
from ..model import Rubric
from .common import TEXT_SUFFIXES, kebab, safe_id

_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*\r?\n?(.*)\Z", re.S)
_ROLE = re.compile(r"^(?:#+[ \t]*)?(system|user|assistant)\s*:\s*$", re.M | re.I)
_LEVEL_HEADING = re.compile(r"^##\s*\[\s*([^:\]]+?)\s*:\s*(-?\d+)\s*\]\s*(?:\(([^)]*)\))?\s*$", re.M)
_STARS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_STAR_LINE = re.compile(r"^\s*(one|two|three|four|five)\s+stars?\s*:\s*(.+)$", re.I | re.M)
_SLOT = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")
_PROSE_SCALE = re.compile(
    r"\b(?:the|this)\s+([A-Za-z_][\w ]{0,40}?)\s+(?:value\s+)?(?:should|must|will)\s+(?:always\s+)?be\s+"
    r"an?\s+integer\s+(?:between|from)\s+(-?\d+)\s+(?:and|to)\s+(-?\d+)",
    re.I,
)
_SCORE_FROM = re.compile(  # "give the answer a score from 1 to 5 for perceived intelligence, where 1 means poor"
    r"\bscore (?:from|between) (-?\d+) (?:to|and) (-?\d+) for ([A-Za-z][\w ]{0,40}?)(?:,\s*where ([^\n]*?))?(?:\.|$)",
    re.I | re.M,
)
_BINARY_ANSWER = re.compile(r'\{\s*"(\w+)"\s*:\s*0\s*\}\s*or\s*\{\s*"\1"\s*:\s*1\s*\}')
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
    return _from_template(meta, match.group(2), source, "prompty")


def looks_like_chat_template(text: str, path: Path) -> bool:
    """A Prompty body without its frontmatter, as Prompt flow keeps its built-in evaluation prompts
    (`gpt_coherence_prompt.jinja2`): `system:` / `user:` turns and a rating scale in them."""
    if path.suffix.lower() not in TEXT_SUFFIXES or _FRONTMATTER.match(text.lstrip()):
        return False
    scale = _STAR_LINE, _LEVEL_HEADING, _PROSE_SCALE, _SCORE_FROM, _BINARY_ANSWER
    return bool(_ROLE.search(text)) and any(pattern.search(text) for pattern in scale)


def import_chat_template(text: str, source: Path) -> Rubric:
    return _from_template({}, text, source, "chat-template")


def _from_template(meta: dict, template: str, source: Path, kind: str) -> Rubric:
    """The rubric of a chat template's turns (`meta`: a Prompty file's frontmatter, or none)."""
    inputs = meta.get("inputs") or {}
    if not isinstance(inputs, dict):
        raise RubricImportError(source, "Prompty field inputs: expected a mapping of input names")
    turns = _turns(template)
    body = "\n".join(turns.values())
    name = meta.get("name") or source.stem
    criteria = _criteria(body, name, source)
    ignored = sorted(k for k in meta if k not in KNOWN) + (
        ["model (judge settings: rubricflow's own)"] if "model" in meta else []
    )
    doc: dict[str, Any] = {
        "metadata": {
            "id": kebab(source.stem if source.suffix.lower() == ".prompty" else name),
            "title": name,
            "description": meta.get("description", ""),
            "provenance": {
                "format": kind,
                "source": source.name,
                "inputs": ", ".join(str(k) for k in inputs),
                "slots": ", ".join(dict.fromkeys(_SLOT.findall(body))),
                "ignored": "; ".join(ignored),
            },
        },
        "goal": _definition(body) or meta.get("description") or f"Rate the response on {name}.",
        "criteria": criteria,
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


def _criteria(body: str, name: str, source: Path) -> list[dict]:
    anchors, trait = _heading_levels(body)
    if not anchors:
        anchors = [
            {"value": _STARS[m.group(1).lower()], "description": m.group(2).strip()} for m in _STAR_LINE.finditer(body)
        ]
    if len(anchors) < 2:
        found = _prose_scales(body, name) or _score_from(body) or _binary_answers(body, name)
        if found:
            return found
        raise RubricImportError(
            source,
            "Prompty file: no rating scale in the template (expected `## [Trait: 1] (Label)` headings under "
            "`# Ratings`, `One star: ...` to `Five stars: ...` lines, a sentence such as `This score value "
            'should always be an integer between 1 and 5`, or a 0/1 answer such as `{"apology": 0} or {"apology": 1}`)',
        )
    anchors.sort(key=lambda a: a["value"])
    trait = trait or name
    return [
        {
            "id": safe_id(kebab(trait), "score"),
            "title": trait,
            "description": _definition(body) or f"{trait}, rated on the levels below.",
            "scale": {"kind": "ordinal", "anchors": anchors},
        }
    ]


def _prose_scales(body: str, name: str) -> list[dict]:
    """ "This correctness value should always be an integer between 1 and 5": a criterion per
    sentence, its levels the two ends (the prompt says no more); "score" is the evaluator's name."""
    criteria: dict[str, dict] = {}
    for m in _PROSE_SCALE.finditer(body):
        trait = name if m.group(1).strip().lower() == "score" else m.group(1).strip()
        if int(m.group(2)) < int(m.group(3)):
            criteria.setdefault(kebab(trait), _stated_scale(trait, int(m.group(2)), int(m.group(3)), {}))
    return list(criteria.values())


def _score_from(body: str) -> list[dict]:
    """ "a score from 1 to 5 for perceived intelligence, where 1 means poor, 3 means normal, and 5
    means excellent": one criterion, its levels the ends and the values the sentence names."""
    m = _SCORE_FROM.search(body)
    if not m or int(m.group(1)) >= int(m.group(2)):
        return []
    named = {int(v): t.strip() for v, t in re.findall(r"(-?\d+) means ([^,;]+?)(?=,|;|$| and )", m.group(4) or "")}
    return [_stated_scale(m.group(3).strip(), int(m.group(1)), int(m.group(2)), named)]


def _stated_scale(trait: str, low: int, high: int, named: dict[int, str]) -> dict:
    """A criterion whose scale the prompt states in prose: its two ends, and the values it names."""
    levels = {low: f"the least {trait.lower()}", high: f"the most {trait.lower()}"}
    levels |= {v: t for v, t in named.items() if low <= v <= high}
    return {
        "id": safe_id(kebab(trait), "score"),
        "title": trait,
        "description": f"{trait}, a score from {low} to {high} as the prompt asks.",
        "scale": {
            "kind": "ordinal",
            "min": low,
            "max": high,
            "anchors": [{"value": v, "description": levels[v]} for v in sorted(levels)],
        },
    }


def _binary_answers(body: str, name: str) -> list[dict]:
    """A 0/1 answer (`{"apology": 0} or {"apology": 1}`): a yes/no criterion, described by the
    sentence that says when to give 1 (if there is one)."""
    criteria = []
    for key in dict.fromkeys(m.group(1) for m in _BINARY_ANSWER.finditer(body)):
        when = re.search(rf"^.*\b{re.escape(key)}\b[^\n]*\bof 1\b.*$", body, re.M | re.I)
        criteria.append(
            {
                "id": safe_id(kebab(key), "score"),
                "title": key,
                "description": when.group(0).strip() if when else f"{key} (1) or not (0), as {name} asks.",
                "scale": {"kind": "binary", "labels": [f"no {key}", key]},
            }
        )
    return criteria


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
