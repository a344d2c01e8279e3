"""Rubrics that live inside a grading prompt, as plain text: a G-Eval criteria prompt ("Evaluation
Criteria:" with "Name (1-5) - definition", "Evaluation Steps:", `{{Document}}`-style slots), a
Prometheus `###Score Rubrics:` block ("[criteria question]" then "Score 1: ..." to "Score 5:"), and
a FLASK evaluation prompt (a "[Skill 1. Name]" block per skill: its question, then "Score 1:" ...),
and a judge prompt with a scoring-scale section (Azure AI Foundry's prompt-based evaluators:
"You are a Groundedness Evaluator." ... "### Scoring Scale (1-5):" then "5 → Fully grounded. ...")."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..documents import RubricImportError, rubric_from_data
from ..model import Rubric
from .common import kebab, safe_id
from .levels import anchors_from_text, section_scores_span

PROMETHEUS_MARK = "###Score Rubrics:"
_SKILL = re.compile(r"^[ \t]*\[Skill\s*(?:\d+\s*[.:)]?)?\s*:?\s*([^\]\n]+?)\s*\][ \t]*$", re.I | re.M)
_BRACKET_HEADING = re.compile(r"^[ \t]*\[[^\]\n]+\][ \t]*$", re.M)
_SLOTS = re.compile(r"\{\{\s*[A-Za-z_][\w ]*?\s*\}\}|(?<!\{)\{[A-Za-z_]\w*\}(?!\})")  # {{Document}}, {summary}
_HEADING = re.compile(
    r"^\s*(Evaluation Criteria|Evaluation Steps|Evaluation Form[^:\n]*|Example|Source Text|"
    r"Summary|Document|Response|Instruction)s?\s*:\s*$",
    re.I | re.M,
)


_GEVAL_SCALE = re.compile(r"^\s*([A-Za-z][\w /-]*?)\s*\(\s*(-?\d+)\s*-\s*(-?\d+)\s*\)\s*(?:[-:–]\s*(.*))?$")
_INLINE_HEADING = re.compile(r"^([ \t]*Evaluation (?:Criteria|Steps)[ \t]*:)[ \t]*(\S.*)$", re.I | re.M)


def _own_lines(text: str) -> str:
    """`Evaluation Criteria: Coherence (1-3)` on one line (a layout G-Eval's users write) as a
    heading on its own line and the criterion under it."""
    return _INLINE_HEADING.sub(r"\1\n\2", text)


def looks_like_geval(text: str) -> bool:
    """`Evaluation Criteria:` with `Evaluation Steps:`, or with a scale written as G-Eval writes
    it (`Fluency (1-3): ...`: the SummEval fluency prompt has its levels inline and no steps)."""
    text = _own_lines(text)
    criteria = re.search(
        r"^\s*Evaluation Criteria\s*:\s*$(.*?)(?=^\s*[A-Z][\w ()-]*:\s*$|\Z)", text, re.I | re.M | re.S
    )
    if not criteria:
        return False
    steps = re.search(r"^\s*Evaluation Steps\s*:", text, re.I | re.M)
    return bool(steps) or any(_GEVAL_SCALE.match(line) for line in criteria.group(1).splitlines())


def import_geval(text: str, source: Path) -> Rubric:
    text = _own_lines(re.sub(r"[ \t]*\\\r?\n", " ", text))  # a line ending in `\` (pasted from a Python string) goes on
    sections = _sections(text)
    criteria_text = sections.get("evaluation criteria", "").strip()
    if not criteria_text:
        raise RubricImportError(source, "G-Eval prompt: the `Evaluation Criteria:` section is empty")
    first = criteria_text.splitlines()[0]
    match = _GEVAL_SCALE.match(first)
    if match:
        name, low, high, definition = match.group(1), int(match.group(2)), int(match.group(3)), match.group(4) or ""
        definition = " ".join([definition] + criteria_text.splitlines()[1:]).strip().lstrip("-– ")
    else:
        span = section_scores_span(criteria_text) or section_scores_span(text)
        if span is None:
            raise RubricImportError(
                source, "G-Eval prompt: no scale such as `Coherence (1-5) - ...` in Evaluation Criteria"
            )
        name, (low, high), definition = source.stem, span, criteria_text
    if low >= high:
        raise RubricImportError(source, f"G-Eval prompt: scale {low}-{high} runs the wrong way")
    steps = [
        re.sub(r"^\s*\d+[.)]\s*", "", line).strip()
        for line in sections.get("evaluation steps", "").splitlines()
        if line.strip()
    ]
    written = _slots(text)
    anchors = anchors_from_text(criteria_text) or [
        {"value": low, "label": "lowest", "description": f"the text shows none of: {name.lower()}"},
        {"value": high, "label": "highest", "description": f"the text fully shows: {name.lower()}"},
    ]
    doc: dict[str, Any] = {
        "metadata": {
            "id": kebab(f"{source.stem}"),
            "title": name.strip(),
            "provenance": {"format": "g-eval", "source": source.name, "slots": ", ".join(_names(written))},
        },
        "goal": _intro(text) or f"Rate the text on {name.strip()}.",
        "criteria": [
            {
                "id": safe_id(kebab(name), "score"),
                "title": name.strip(),
                "description": definition,
                "scale": {"kind": "ordinal", "anchors": anchors, "min": low, "max": high},
            }
        ],
        "instructions": ["Evaluation steps (G-Eval): " + " ".join(f"({i}) {s}" for i, s in enumerate(steps, 1))]
        if steps
        else [],
    }
    doc["instructions"] += _slot_note(written)
    return rubric_from_data(doc, source)


def looks_like_prometheus_block(text: str) -> bool:
    return PROMETHEUS_MARK.lower() in text.lower()


def import_prometheus_block(text: str, source: Path) -> Rubric:
    start = text.lower().index(PROMETHEUS_MARK.lower()) + len(PROMETHEUS_MARK)
    block = re.split(r"\n\s*###", text[start:], maxsplit=1)[0]
    question = re.search(r"\[(.+?)\]", block, re.S)
    anchors = anchors_from_text(block)
    if question is None or len(anchors) < 2:
        raise RubricImportError(source, f"{PROMETHEUS_MARK} block: expected `[criteria]` then `Score 1: ...` lines")
    criteria = " ".join(question.group(1).split())
    doc = {
        "metadata": {
            "id": kebab(source.stem),
            "title": criteria[:120],
            "provenance": {"format": "prometheus-prompt", "source": source.name},
        },
        "goal": criteria,
        "criteria": [
            {
                "id": "score",
                "title": "Score rubric",
                "description": criteria,
                "scale": {"kind": "ordinal", "anchors": anchors},
            }
        ],
    }
    return rubric_from_data(doc, source)


_SCALE_HEADING = re.compile(
    r"^[ \t]*#{0,4}[ \t]*(?:scoring|score|rating|grading)[ \t]+(?:scale|rubric|levels?)\b[^\n]*$", re.I | re.M
)
_EVALUATOR_NAME = re.compile(r"\bYou are an? ([A-Z][\w-]*(?: [A-Z][\w-]*)*) (?:Evaluator|Judge|Grader)\b")


def _scale_section(text: str) -> tuple[re.Match, str] | None:
    """The scoring-scale heading and its section (up to the next heading or `---` rule), when the
    section holds at least two levels."""
    for heading in _SCALE_HEADING.finditer(text):
        end = re.search(r"^[ \t]*(?:#{1,4}[ \t]|-{3,}[ \t]*$)", text[heading.end() :], re.M)
        section = text[heading.end() : heading.end() + end.start() if end else len(text)]
        if len(anchors_from_text(section)) >= 2:
            return heading, section
    return None


def looks_like_scored_prompt(text: str) -> bool:
    return _scale_section(text) is not None


def import_scored_prompt(text: str, source: Path) -> Rubric:
    """One criterion: the levels of the scoring-scale section, named by the evaluator the prompt
    says it is ("You are a Groundedness Evaluator") or by the file; the text before the first
    heading or rule is the goal."""
    found = _scale_section(text)
    if found is None:
        raise RubricImportError(source, "judge prompt: no scoring-scale section with levels")
    heading, section = found
    named = _EVALUATOR_NAME.search(text)
    name = named.group(1) if named else source.stem
    intro = " ".join(re.split(r"^[ \t]*(?:#{1,4}[ \t]|-{3,}[ \t]*$)", text, maxsplit=1, flags=re.M)[0].split())
    written = _slots(text)
    doc: dict[str, Any] = {
        "metadata": {
            "id": kebab(source.stem),
            "title": name,
            "provenance": {"format": "judge-prompt", "source": source.name, "slots": ", ".join(_names(written))},
        },
        "goal": intro[:1000] or f"Rate the response on {name}.",
        "instructions": _slot_note(written),
        "criteria": [
            {
                "id": safe_id(kebab(name), "score"),
                "title": name,
                "description": intro[:2000] or heading.group(0).strip("# \t"),
                "scale": {"kind": "ordinal", "anchors": anchors_from_text(section)},
            }
        ],
    }
    return rubric_from_data(doc, source)


def looks_like_flask_prompt(text: str) -> bool:
    return bool(_SKILL.search(text))


def import_flask_prompt(text: str, source: Path) -> Rubric:
    """One criterion per `[Skill N. Name]` block: the lines before its first level are the
    question, `Score 1:` .. `Score 5:` the levels; the text before the first skill is the goal.
    A block ends at the next bracketed heading (`[Instruction]`, the next skill)."""
    skills = list(_SKILL.finditer(text))
    criteria = []
    for i, match in enumerate(skills):
        name = match.group(1).strip()
        after = _BRACKET_HEADING.search(text, match.end())
        block = text[match.end() : after.start() if after else len(text)]
        anchors = anchors_from_text(block)
        if len(anchors) < 2:
            raise RubricImportError(source, f"FLASK prompt: skill {name!r} has no `Score 1:` .. `Score 5:` levels")
        question = " ".join(re.split(r"^\s*Score\s*\d", block, maxsplit=1, flags=re.I | re.M)[0].split())
        criteria.append(
            {
                "id": safe_id(kebab(name, f"skill-{i + 1}"), f"skill-{i + 1}"),
                "title": name,
                "description": question,
                "scale": {"kind": "ordinal", "anchors": anchors},
            }
        )
    doc: dict[str, Any] = {
        "metadata": {
            "id": kebab(source.stem),
            "title": source.stem,
            "provenance": {"format": "flask-prompt", "source": source.name, "slots": ", ".join(_names(_slots(text)))},
        },
        "goal": " ".join(text[: skills[0].start()].split())[:1000] or "Score the response on each skill.",
        "criteria": criteria,
    }
    return rubric_from_data(doc, source)


def _slots(text: str) -> list[str]:
    """The prompt's slots as it writes them (`{{Document}}`, `{summary}`), each once, in order."""
    return list(dict.fromkeys(_SLOTS.findall(text)))


def _names(written: list[str]) -> list[str]:
    return [w.strip("{} ") for w in written]


def _slot_note(written: list[str]) -> list[str]:
    """The instruction that maps a prompt's slots onto rubricflow's blocks (none without slots)."""
    return (
        [f"The prompt's slots {', '.join(written)} are the INPUT, CONTEXT and TEXT blocks of the data."]
        if written
        else []
    )


def _sections(text: str) -> dict[str, str]:
    parts = _HEADING.split(text)
    return {parts[i].strip().lower(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _intro(text: str) -> str:
    head = _HEADING.split(text)[0]
    return " ".join(head.split())[:1000]
