"""Markdown with YAML frontmatter (waza style): the frontmatter names the rubric and carries goldens;
the body is the judge prompt, kept whole as the rubric's instructions. The fields seed 004 marks
required (name, version, scale, description) are required: a missing one is an error naming it, as is
one not of the form the seed gives it (a kebab-case `name`, a semver `version`, a `scale` of
`pass-fail` or `1-5`): nothing is rewritten into another name, version or scale. A golden is a
worked example "with expected: pass or expected: fail" (seed 004): one without is an error naming
it (a golden that expects nothing can never fail, so it keeps no prompt honest)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import frontmatter
import semver

from ..documents import RubricImportError, parse_yaml, rubric_from_data
from ..model import Rubric
from ..render import WAZA_FORMAT

REQUIRED = ("name", "version", "scale", "description")  # seed 004's frontmatter table: "Required: yes"
SCALES = ("pass-fail", "1-5")  # seed 004: "pass-fail (today) or 1-5 (reserved for future graded rubrics)"
KEBAB = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")  # seed 004: name "Stable identifier ... Kebab-case."
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
    name = _name(meta["name"], source)
    version = _version(meta["version"], source)
    scale = _scale(meta["scale"], source)
    description = str(meta.get("description", ""))
    goldens = [_golden(i, g, source) for i, g in enumerate(meta.get("goldens") or [])]
    body = post.content.strip()
    data = {
        "metadata": {
            "id": name,
            "version": version,
            "title": name,
            "description": description,
            "provenance": {"format": WAZA_FORMAT, "source": source.name},
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


def _golden(i: int, g: Any, source: Path) -> dict[str, Any]:
    """One golden: an `output` and the verdict it expects, `pass` or `fail` (seed 004)."""
    if not isinstance(g, dict) or "output" not in g:
        raise RubricImportError(source, f"field goldens[{i}]: a golden needs an `output`")
    name = str(g.get("name") or f"golden-{i + 1}")
    expected = str(g.get("expected", "")).lower()
    if expected not in ("pass", "fail"):
        raise RubricImportError(
            source,
            f"field goldens[{i}].expected: golden {name!r} needs `expected: pass` or `expected: fail` "
            f"(got {g.get('expected')!r})",
        )
    fields = {"input": str(g.get("input", "")), "output": str(g["output"]), "context": str(g.get("context", ""))}
    return {"name": name, **fields, "expected": expected}


def _name(value: Any, source: Path) -> str:
    """waza's `name` is the stable id an eval names: kebab-case as written (`House_Style` was
    silently rewritten to `house-style`, an id no eval names)."""
    if not isinstance(value, str) or not KEBAB.fullmatch(value):
        raise RubricImportError(source, f"field name: {value!r} is not kebab-case (e.g. house-style)")
    return value


def _version(value: Any, source: Path) -> str:
    """A semver string as written (`1.0` was padded to 1.0.0, `v2` became 2.0.0: two files waza
    refuses would compare equal to a real version)."""
    text = str(getattr(value, "yaml_text", None) or value)  # `version: 1.10` as written, not 1.1
    if text != text.strip() or not semver.Version.is_valid(text):
        raise RubricImportError(
            source, f"field version: {text!r} is not a semver string (MAJOR.MINOR.PATCH, e.g. 1.0.0)"
        )
    return text


def _scale(value: Any, source: Path) -> dict[str, Any]:
    """`pass-fail` (binary), or the graded `1-5` (ordinal, its ends anchored); the seed names no other."""
    if value == "pass-fail":
        return {"kind": "binary", "labels": ["fail", "pass"]}
    if value == "1-5":
        return {
            "kind": "ordinal",
            "anchors": [
                {"value": 1, "label": "worst", "description": "Fails the rubric entirely."},
                {"value": 5, "label": "best", "description": "Meets the rubric fully."},
            ],
        }
    raise RubricImportError(source, f"field scale: unsupported scale {value!r} (expected {' or '.join(SCALES)})")
