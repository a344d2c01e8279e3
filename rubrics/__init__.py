"""The rubric language: typed rubrics, the compiler, file formats and importers, the algebra and
the library. Importing this package gives the public API; the submodules say the rest.

    from rubricflow.rubrics import load_rubric, compile_rubric
    bundle, issues = compile_rubric(load_rubric("my-rubric.yaml"))

The names are imported on first use (PEP 562): a module that needs only `rubrics.model` (every
`rubricflow` command's options do) no longer pays for the compiler and the importers, ~45% of the
CLI's start-up.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .compiler import Bundle, RubricCompileError, compile_or_raise, compile_rubric
    from .formats import RubricImportError, dump, load_rubric, load_rubrics
    from .library import Library, LibraryError, resolve
    from .model import Criterion, Rubric

_HOME = {
    "Bundle": "compiler",
    "RubricCompileError": "compiler",
    "compile_or_raise": "compiler",
    "compile_rubric": "compiler",
    "RubricImportError": "formats",
    "dump": "formats",
    "load_rubric": "formats",
    "load_rubrics": "formats",
    "Library": "library",
    "LibraryError": "library",
    "resolve": "library",
    "Criterion": "model",
    "Rubric": "model",
}
__all__ = [
    "Bundle",
    "Criterion",
    "Library",
    "LibraryError",
    "Rubric",
    "RubricCompileError",
    "RubricImportError",
    "compile_or_raise",
    "compile_rubric",
    "dump",
    "load_rubric",
    "load_rubrics",
    "resolve",
]


def __getattr__(name: str) -> object:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value
