"""Score levels as other tools write them, read into ordinal anchors: a mapping `{1: "...", 5:
"..."}` or `{"Score 1": ...}`, a list of `{score|value|rating|level: n, label|name, description}`,
`score1_description`..., or "Score 1: ..." lines of prose."""

from __future__ import annotations

import re
from typing import Any

LEVEL_KEY = re.compile(
    r"^\s*(?:score|level|rating|point)?[\s_-]*(-?\d+)(?:[\s_-]*(?:description|desc|points?))?\s*$", re.I
)
_LEVEL_LINE = re.compile(
    r"^\s*[-*]?\s*\**\s*(?:score|level|rating)?\s*(-?\d+)\s*\**\s*(?:→|->|=>|[:.)=-]|\*\*)\s*(.+)$", re.I
)  # "Score 1: ...", "- **2**: ...", "5 → Fully grounded. ..."
NUMBER_KEYS = ("score", "value", "rating", "level", "points", "grade")
LABEL_KEYS = ("label", "name", "title")
TEXT_KEYS = ("description", "definition", "criteria", "text", "meaning", "anchor")


def anchors_from(levels: Any) -> list[dict]:
    """Ordinal anchors (value, label, description), sorted by value; [] when `levels` holds none."""
    anchors: dict[int, dict] = {}
    if isinstance(levels, dict):
        for key, text in levels.items():
            match = LEVEL_KEY.match(str(key))
            if match:
                anchors[int(match.group(1))] = _anchor(int(match.group(1)), text)
    elif isinstance(levels, list):
        for item in levels:
            if isinstance(item, dict):
                number = next((item[k] for k in NUMBER_KEYS if _is_int(item.get(k))), None)
                if number is not None:
                    anchors[int(number)] = _anchor(int(number), item)
            elif isinstance(item, str):
                anchors.update({a["value"]: a for a in anchors_from_text(item)})
    elif isinstance(levels, str):
        return anchors_from_text(levels)
    return [anchors[k] for k in sorted(anchors)]


def anchors_from_text(text: str) -> list[dict]:
    """ "Score 1: ..." / "1 - ..." / "- **2**: ..." lines; a line that does not start a level
    continues the one before."""
    anchors: dict[int, dict] = {}
    current = None
    for line in text.splitlines():
        match = _LEVEL_LINE.match(line)
        if match:
            current = int(match.group(1))
            anchors[current] = {"value": current, "description": match.group(2).strip().strip("*").strip()}
        elif current is not None and line.strip() and not line.lstrip().startswith(("#", "[")):
            anchors[current]["description"] += " " + line.strip()
        elif current is not None and not line.strip() and len(anchors) > 1:
            current = None  # a blank line after two levels ends the list
    return [anchors[k] for k in sorted(anchors)]


def section_scores_span(text: str) -> tuple[int, int] | None:
    """A scale written as "(1-5)", "1 to 5", "on a scale of 1-3" in prose."""
    match = re.search(r"(?:\(|scale of |from |range )\s*(-?\d+)\s*(?:-|–|to)\s*(-?\d+)\s*\)?", text, re.I)
    if match and int(match.group(1)) < int(match.group(2)):
        return int(match.group(1)), int(match.group(2))
    return None


def _anchor(value: int, item: Any) -> dict:
    if isinstance(item, dict):
        label = next((str(item[k]) for k in LABEL_KEYS if isinstance(item.get(k), str)), "")
        text = next((str(item[k]) for k in TEXT_KEYS if isinstance(item.get(k), str)), "")
        return {"value": value, "label": label[:200], "description": text, "examples": _examples(item.get("examples"))}
    return {"value": value, "description": "" if item is None else str(item).strip()}


def _examples(found: Any) -> list[str]:
    """A level's examples as text: strings, or mappings such as `{input, output}` written as one line."""
    if isinstance(found, (str, dict)):
        found = [found]
    if not isinstance(found, list):
        return []
    return [
        "; ".join(f"{k}: {v}" for k, v in e.items()) if isinstance(e, dict) else str(e).strip()
        for e in found
        if e is not None and str(e).strip()
    ]


def _is_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    if isinstance(value, float) and value.is_integer():
        return True
    return isinstance(value, str) and bool(re.fullmatch(r"-?\d+", value.strip()))
