"""waza's eval YAML (seed 004): a `type: prompt` grader names its rubric in `config.rubric`, a
built-in by name or a local file by path (read relative to the eval file, as waza loads it). A name
is looked up by exact file name, first in waza's own namespace (`rubrics/waza/NAME.*`: waza's
built-ins whose names rubricflow's library also uses, e.g. `groundedness`, pass-fail there and
graded here), then in rubricflow's built-in library folder (`rubrics/library/NAME.*`). Each such
grader is one rubric, read by that file's own format; it also records the grader's `name` and
`model` in its provenance (`grader`, `grader_model`), so a verdict can be attributed to the grader
that asked for it (seed 004: `name: is_grounded ... model: "gpt-4o-mini"`): the rubric read through
an eval differs from the file named directly by those keys alone, and the file's own hash is
unchanged. Other grader types are waza's own checks, not rubrics. Names are looked up in
these folders, not through `Library` (which reads folders through these importers: an eval file in
a library folder would otherwise read the library again)."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..documents import RubricImportError
from ..model import Rubric
from . import dispatcher

BUILTIN = Path(__file__).resolve().parent.parent / "library"  # rubrics/library, as library.BUILTIN
WAZA = Path(__file__).resolve().parent.parent / "waza"  # waza's built-ins, outside the library's folder
PATH_SUFFIXES = (".md", ".yaml", ".yml", ".json", ".xml")
GLOB = set("*?[]")  # a name is a name: `rubric: "*"` loaded whichever file sorted first


def looks_like_waza_eval(data: dict) -> bool:
    graders = data.get("graders")
    return isinstance(graders, list) and any(_rubric_ref(g) is not None for g in graders)


def _rubric_ref(grader: Any) -> Any:
    if isinstance(grader, dict) and grader.get("type") == "prompt" and isinstance(grader.get("config"), dict):
        return grader["config"].get("rubric")
    return None


def import_waza_eval(data: dict, source: Path) -> list[Rubric]:
    """One rubric per prompt grader that names one; a built-in name that is not there, or a path
    that is not a file, is an error naming the grader's field."""
    found: list[Rubric] = []
    for i, grader in enumerate(data["graders"]):
        ref = _rubric_ref(grader)
        if ref is None:
            continue
        field = f"graders[{i}].config.rubric"
        if not isinstance(ref, str) or not ref.strip():
            raise RubricImportError(source, f"field {field}: a built-in rubric's name or a file's path is expected")
        found.extend(_attributed(r, grader) for r in _read(_locate(ref, field, source), field, source))
    return found


def _attributed(rubric: Rubric, grader: dict) -> Rubric:
    """The rubric with its grader's `name` and `config.model` in provenance (those the grader gives)."""
    given = {"grader": grader.get("name"), "grader_model": grader["config"].get("model")}
    added = {key: str(value) for key, value in given.items() if value is not None}
    if not added:
        return rubric
    provenance = MappingProxyType({**rubric.metadata.provenance, **added})
    return rubric.model_copy(update={"metadata": rubric.metadata.model_copy(update={"provenance": provenance})})


def _locate(ref: str, field: str, source: Path) -> Path:
    if "/" in ref or "\\" in ref or ref.lower().endswith(PATH_SUFFIXES):
        path = (source.parent / ref).resolve()
        if not path.is_file():
            raise RubricImportError(source, f"field {field}: {ref!r}: no such file")
        return path
    return _builtin(ref, field, source)


def _builtin(ref: str, field: str, source: Path) -> Path:
    """The built-in file named exactly `ref` (waza's namespace first); a pattern or a name of no
    file, or of two files in one folder, is an error naming the reference."""
    if GLOB & set(ref) or ref.strip() != ref or ref.startswith("."):
        raise RubricImportError(source, f"field {field}: {ref!r} is not a built-in rubric's name (names are exact)")
    for folder in (WAZA, BUILTIN):
        named = [folder / f"{ref}{suffix}" for suffix in PATH_SUFFIXES if (folder / f"{ref}{suffix}").is_file()]
        if len(named) > 1:
            raise RubricImportError(
                source, f"field {field}: built-in name {ref!r} is ambiguous ({', '.join(p.name for p in named)})"
            )
        if named:
            return named[0]
    raise RubricImportError(source, f"field {field}: no built-in rubric named {ref!r}")


def _read(path: Path, field: str, source: Path) -> list[Rubric]:
    try:
        return dispatcher.detect_and_import(path.read_text(encoding="utf-8"), path)  # by its own format
    except (OSError, UnicodeDecodeError) as exc:
        raise RubricImportError(source, f"field {field}: {path} cannot be read ({exc})") from None
