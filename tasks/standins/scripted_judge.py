"""The scripted judge: answers each criterion from a key file, so a test can state the verdict a
seed expects and check that rubricflow produces it end to end (over HTTP, as from a real judge).

The offline judge estimates quality from patterns; this one knows nothing and says exactly what it
is told. A key file (YAML or JSON) lists texts, each found by a regex searched in the text under
judgment (`match`) or by the whole text (`text`), with the value each criterion gets (an anchor's
value, a verdict's label) and the disqualifiers the judge declares:

    rationale: BECAUSE: ...          # optional: every rationale (a rubric may require a ritual)
    fields: {advice: "FIX: ..."}     # optional: other string fields of the answer
    texts:
      - name: E5
        match: "don't condone"
        criteria: {C1: 2, C2: 1, C3: 2, Judgement: Somewhat}
        disqualifiers: []

The prompt carries no text id, so a text is keyed by its content; `name` names the entry in the
rationale. A text no entry matches gets `null` values (rubricflow refuses them as out of scale),
and a criterion the entry does not name likewise: a test never passes on a value nobody scripted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_TEXT = re.compile(r"<<<BEGIN TEXT ([0-9a-f]+)>>>\n(.*?)\n<<<END TEXT \1>>>", re.S)
MARK = "scripted judge"


class ScriptError(ValueError):
    """A key file that cannot be used: names the file and the entry."""


@dataclass(frozen=True)
class Entry:
    name: str
    criteria: dict[str, Any]
    disqualifiers: tuple[str, ...] = ()
    match: re.Pattern | None = None
    text: str | None = None

    def fits(self, text: str) -> bool:
        if self.text is not None:
            return text.strip() == self.text.strip()
        return bool(self.match and self.match.search(text))


@dataclass(frozen=True)
class Script:
    entries: tuple[Entry, ...]
    rationale: str = ""
    fields: dict[str, str] = field(default_factory=dict)

    def entry_for(self, text: str) -> Entry | None:
        """The first entry that fits the text (key files list the specific before the general)."""
        return next((e for e in self.entries if e.fits(text)), None)

    def answer(self, user: str, schema: dict) -> dict:
        """The answer object for one judge request, in the request's own schema."""
        found = _TEXT.search(user)
        text = found.group(2) if found else user
        entry = self.entry_for(text)
        props = schema.get("properties", {})
        said = f"no key entry matches {text[:60]!r}" if entry is None else f"entry {entry.name}"
        rationale = self.rationale or f"{MARK}: {said}."
        answer: dict[str, Any] = {}
        if "criteria" in props:
            asked = props["criteria"].get("properties", {})
            answer["criteria"] = {
                cid: {
                    "value": None if entry is None else entry.criteria.get(cid),
                    "rationale": rationale,
                    "evidence": [],
                }
                for cid in asked
            }
        if "verdict" in props:
            answer["verdict"] = None if entry is None else entry.criteria.get("verdict")
            answer["rationale"] = rationale
        answer["disqualifiers"] = [] if entry is None else list(entry.disqualifiers)
        for name, fschema in props.items():
            if name not in answer and fschema.get("type") == "string":
                answer[name] = self.fields.get(name, f"{MARK}.")
        return answer


def load_script(path: str | Path) -> Script:
    """A key file, read and checked: a bad one names the file and the entry."""
    path = Path(path)
    try:
        data = (
            yaml.safe_load(path.read_text(encoding="utf-8")) if path.suffix != ".json" else json.loads(path.read_text())
        )
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise ScriptError(f"{path}: cannot read the key file: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("texts"), list):
        raise ScriptError(f"{path}: a key file is a mapping with a `texts` list")
    return Script(
        entries=tuple(_entry(path, i, raw) for i, raw in enumerate(data["texts"])),
        rationale=str(data.get("rationale") or ""),
        fields={str(k): str(v) for k, v in (data.get("fields") or {}).items()},
    )


def _entry(path: Path, index: int, raw: Any) -> Entry:
    where = f"{path}: texts[{index}]"
    if not isinstance(raw, dict) or ("match" in raw) == ("text" in raw):
        raise ScriptError(f"{where}: give exactly one of `match` (a regex) or `text` (the whole text)")
    if not isinstance(raw.get("criteria"), dict):
        raise ScriptError(f"{where}: `criteria` must map criterion ids to values")
    try:
        pattern = re.compile(raw["match"]) if "match" in raw else None
    except re.error as exc:
        raise ScriptError(f"{where}.match: not a regex: {exc}") from None
    return Entry(
        name=str(raw.get("name") or f"texts[{index}]"),
        criteria={str(k): v for k, v in raw["criteria"].items()},
        disqualifiers=tuple(str(d) for d in raw.get("disqualifiers") or ()),
        match=pattern,
        text=raw.get("text"),
    )
