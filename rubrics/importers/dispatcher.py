"""The dispatcher (importers/__init__.py: detect the format, read the file) as the importers that read
more rubric text see it: a waza eval's referenced files, a JSONL file's lines. The package's face
registers its two functions here when it is imported (always before any importer module runs), so no
importer imports the face back: the registry and the dispatcher would be an import cycle."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

_DISPATCHER: dict[str, Callable[[str, Path], Any]] = {}


def register(detect_and_import: Callable[[str, Path], Any], import_jsonl: Callable[[str, Path], Any]) -> None:
    """The face's dispatching functions (called once, by importers/__init__.py)."""
    _DISPATCHER.update(file=detect_and_import, jsonl=import_jsonl)


def detect_and_import(text: str, path: Path) -> Any:
    """A file's rubrics, read by whichever format it is."""
    return _DISPATCHER["file"](text, path)


def import_jsonl(text: str, path: Path) -> Any:
    """A JSONL file's rubrics, each line read by the format its shape belongs to."""
    return _DISPATCHER["jsonl"](text, path)
