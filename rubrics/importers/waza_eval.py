"""waza's eval YAML (seed 004): a `type: prompt` grader names its rubric in `config.rubric`, a
built-in by name or a local file by path (read relative to the eval file, as waza loads it). Each
such grader is one rubric, read by that rubric's own format and library, so it keeps the content
hash it has when named directly; other grader types are waza's own checks, not rubrics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..documents import RubricImportError
from ..model import Rubric


def looks_like_waza_eval(data: dict) -> bool:
    graders = data.get("graders")
    return isinstance(graders, list) and any(_rubric_ref(g) is not None for g in graders)


def _rubric_ref(grader: Any) -> Any:
    if isinstance(grader, dict) and grader.get("type") == "prompt" and isinstance(grader.get("config"), dict):
        return grader["config"].get("rubric")
    return None


def import_waza_eval(data: dict, source: Path) -> list[Rubric]:
    """One rubric per prompt grader that names one; a name no library holds, or a path that is not
    there, is an error naming the grader's field."""
    from ..library import Library, LibraryError, resolve

    library = Library()
    found = []
    for i, grader in enumerate(data["graders"]):
        ref = _rubric_ref(grader)
        if ref is None:
            continue
        field = f"graders[{i}].config.rubric"
        if not isinstance(ref, str) or not ref.strip():
            raise RubricImportError(source, f"field {field}: a built-in rubric's name or a file's path is expected")
        by_path = "/" in ref or "\\" in ref or Path(ref).suffix.lower() in (".md", ".yaml", ".yml", ".json", ".xml")
        try:
            found.append(resolve(str((source.parent / ref).resolve()) if by_path else ref, library))
        except LibraryError:
            raise RubricImportError(source, f"field {field}: no built-in rubric named {ref!r}") from None
        except RubricImportError as exc:
            raise RubricImportError(source, f"field {field}: {ref!r}: {exc}") from None
    return found
