"""Rubric files: native YAML/JSON, detection of other tools' formats, and export.

`load_rubrics(path)` reads any supported file and returns typed rubrics; a file that is not a
rubric is refused with a reason, never read as an empty rubric.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import yaml

from rubricflow.errors import InputError
from rubricflow.surrogates import lone_surrogate

# RubricImportError, parse_yaml and rubric_from_data are re-exported: callers read files through here.
from .documents import (  # noqa: F401
    SAFE_DUMPER,
    RubricImportError,
    parse_yaml,
    rubric_from_data,
    rubric_to_data,
)
from .importers import detect_and_import
from .importers.xml_spec import dump_xml
from .model import Rubric


def dump_yaml(rubric: Rubric) -> str:
    return yaml.dump(rubric_to_data(rubric), Dumper=SAFE_DUMPER, sort_keys=False, allow_unicode=True, width=100)


def dump_json(rubric: Rubric) -> str:
    return json.dumps(rubric_to_data(rubric), ensure_ascii=False, indent=2)


def dump(rubric: Rubric, fmt: str) -> str:
    writers: dict[str, Callable[[Rubric], str]] = {"yaml": dump_yaml, "json": dump_json, "xml": dump_xml}
    if fmt not in writers:
        raise InputError(f"unknown format {fmt!r}; choose one of {', '.join(writers)}")
    return writers[fmt](rubric)


# --------------------------------------------------------------------------- import


def load_rubric(path: str | Path) -> Rubric:
    rubrics = load_rubrics(path)
    if len(rubrics) != 1:
        raise RubricImportError(path, f"holds {len(rubrics)} rubrics; name one (e.g. with `rubric convert`)")
    return rubrics[0]


def load_rubrics(path: str | Path) -> list[Rubric]:
    path = Path(path)
    return loads_rubrics(read_rubric_text(path), path)


def read_rubric_text(path: Path) -> str:
    """A rubric file's text; a missing file or one that is not UTF-8 is an error naming it."""
    if not path.is_file():
        raise RubricImportError(path, "no such file")
    try:  # a leading byte-order mark is no part of the text (in a .json it was refused, in a .txt kept in the goal)
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RubricImportError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


RUBRIC_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl", ".xml", ".md", ".txt", ".prompt", ".prompty", ".jinja2", ".j2")


# A folder's own documents, never read as rubrics: README, licence, where its files come from.
FOLDER_DOCUMENTS = ("README", "LICENSE", "LICENCE", "SOURCES", "NOTICE", "CHANGELOG")


def expand_folders(refs: list[str]) -> list[str]:
    """Folders stand for the rubric-like files under them (a folder's own documents left out)."""
    expanded = []
    for ref in refs:
        folder = Path(ref)
        if folder.is_dir():
            expanded += sorted(
                str(p)
                for p in folder.rglob("*")
                if p.is_file()
                and p.suffix.lower() in RUBRIC_SUFFIXES
                and not p.name.upper().startswith(FOLDER_DOCUMENTS)
            )
        else:
            expanded.append(ref)
    return expanded


# JSON's `\ud800` and YAML's `\U0000d800` (any case): the only way a lone surrogate gets into a rubric
ESCAPED_SURROGATE = re.compile(r"\\(u|U0000)[dD][89a-fA-F]")


def loads_rubrics(text: str, source: str | Path) -> list[Rubric]:
    """Detect the format of `text` and import it. A text holding a lone surrogate (a \\ud800 escape,
    which no UTF-8 encodes: the rubric's content hash failed with a traceback) is refused naming the field."""
    rubrics = detect_and_import(text.removeprefix("\ufeff"), Path(str(source)))
    if not ESCAPED_SURROGATE.search(text):  # decoded UTF-8 holds none: only an escape writes one
        return rubrics
    for number, rubric in enumerate(rubrics):
        if where := lone_surrogate(
            rubric.model_dump(mode="python"), "rubric" if len(rubrics) == 1 else f"rubric {number + 1}"
        ):
            raise RubricImportError(source, f"{where}: a lone surrogate (a \\ud800-\\udfff escape no UTF-8 encodes)")
    return rubrics
