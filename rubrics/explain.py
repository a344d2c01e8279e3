"""What an importer made of a file (`rubricflow doctor`): which importer read it, which of the
file's fields it read and which it left alone, and the rubrics that came out.

Fields are tracked by handing the importer the parsed document wrapped in a mapping and a list
that note every key read (`get`, `[...]`, `items()`, `values()`, iteration over a list); a key
only tested for (`in`) or never touched is reported as ignored. Paths are dotted, list items as
`[]`: `tests[].assert[].value`. How each field is used, and why a field is left alone, is what the
importer declares in the registry (`importers/registry.py`); a field neither read nor declared left
is reported ignored. `<LLM_JUDGE_SPEC>` XML is accounted for by element (`xml_spec.READ`) and
Markdown by its frontmatter's keys, as the registry declares them. Other text formats (G-Eval and
Prometheus prompts, Prompty, JSONL) name their importer; their fields are not tracked. A native
rubric is read whole by rubricflow's own schema, where an unknown field is an error."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .documents import RubricImportError, parse_yaml
from .formats import read_rubric_text
from .importers import data_format, guarded, parse_data, text_format, xml_spec
from .importers.registry import Format
from .model import Rubric


@dataclass
class Explanation:
    path: Path
    importer: str
    rubrics: list[Rubric]
    tracked: bool  # False: a text format read whole, or the native schema (no field-by-field account)
    used: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    left: dict[str, str] = field(default_factory=dict)  # field -> why the importer leaves it alone
    how: dict[str, str] = field(default_factory=dict)  # used field -> how the importer uses it


def explain(path: Path) -> Explanation:
    """Import `path` as `rubric validate` does, noting which importer read it and what it read."""
    text = read_rubric_text(path)
    if not text.lstrip("\ufeff \t\r\n"):
        raise RubricImportError(path, "empty file")
    if fmt := text_format(text, path):
        rubrics = guarded((fmt.name, fmt.read), text, path)
        if fmt.name == xml_spec.FORMAT_NAME:  # the spec dialect declares the elements it reads
            used, ignored = xml_spec.account(text, path)
            return _accounted(path, fmt, rubrics, set(used), set(used) | set(ignored))
        if fmt.fields and (front := _frontmatter(text, path)) is not None:
            fields = _paths(front, "")
            return _accounted(path, fmt, rubrics, {p for p in fields if fmt.how(p)}, fields)
        return Explanation(path, fmt.name, rubrics, tracked=False)
    data = parse_data(text, path)
    fmt = data_format(data, path)
    if fmt.name == "native":
        return Explanation(path, fmt.name, guarded((fmt.name, fmt.read), data, path), tracked=False)
    reads: set[str] = set()
    rubrics = guarded((fmt.name, fmt.read), _track(data, "", reads), path)
    fields = _paths(data, "")
    return _accounted(path, fmt, rubrics, {p for p in fields if p in reads}, fields)


def _accounted(path: Path, fmt: Format, rubrics: list[Rubric], read: set[str], fields: set[str]) -> Explanation:
    """Each field of the file: used (and how, as the registry declares), left alone (and why), or
    ignored; a field under one left alone is not named again."""
    used = sorted(read)
    how = {p: fmt.how(p) or "read (how: not declared in the registry)" for p in used}
    unread = sorted(p for p in fields - read if _parent(p) in read | {""})
    left = {p: why for p in unread if (why := fmt.why_left(p))}
    ignored = [p for p in unread if p not in left]
    return Explanation(path, fmt.name, rubrics, tracked=True, used=used, ignored=ignored, left=left, how=how)


def _frontmatter(text: str, path: Path) -> dict | None:
    """A Markdown file's frontmatter as data (None: it has none)."""
    stripped = text.lstrip("\ufeff")
    if not stripped.startswith("---"):
        return None
    head = stripped[3:].split("\n---", 1)[0]
    found = parse_yaml(head, path)
    return found if isinstance(found, dict) else None


def _join(base: str, key: Any) -> str:
    return f"{base}.{key}" if base else str(key)


def _parent(path: str) -> str:
    """`a.b[].c` -> `a.b`, `a` -> '' (a list's items share their list's path)."""
    head = path.rsplit(".", 1)[0] if "." in path else ""
    return head.removesuffix("[]")


def _paths(data: Any, base: str) -> set[str]:
    """Every key path in the document (list items collapsed to `[]`)."""
    found: set[str] = set()
    if isinstance(data, dict):
        for key, value in data.items():
            path = _join(base, key)
            found |= {path} | _paths(value, path)
    elif isinstance(data, list):
        for item in data:
            found |= _paths(item, base + "[]")
    return found


def _track(value: Any, path: str, reads: set[str]) -> Any:
    if isinstance(value, dict) and not isinstance(value, _TrackedDict):
        return _TrackedDict(value, path, reads)
    if isinstance(value, list) and not isinstance(value, _TrackedList):
        return _TrackedList(value, path, reads)
    return value


class _TrackedDict(dict):
    """A mapping that notes the path of every key read from it."""

    def __init__(self, data: dict, path: str, reads: set[str]):
        super().__init__(data)
        self._path, self._reads = path, reads

    def __getitem__(self, key):
        path = _join(self._path, key)
        self._reads.add(path)
        return _track(super().__getitem__(key), path, self._reads)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def __iter__(self):  # its own iterator keeps `{**d}` and `dict(d)` reading through __getitem__
        return iter(list(super().keys()))

    def items(self):
        return [(key, self[key]) for key in self.keys()]

    def values(self):
        return [self[key] for key in self.keys()]


class _TrackedList(list):
    """A list whose items are tracked under the list's path (`key[]`)."""

    def __init__(self, data: list, path: str, reads: set[str]):
        super().__init__(data)
        self._path, self._reads = path, reads

    def __getitem__(self, index):
        return _track(super().__getitem__(index), self._path + "[]", self._reads)

    def __iter__(self):
        return (_track(item, self._path + "[]", self._reads) for item in super().__iter__())
