"""The rubric language: typed rubrics, the compiler, file formats and importers, the algebra and
the library. Importing this package gives the public API; the submodules say the rest.

    from rubricflow.rubrics import load_rubric, compile_rubric
    bundle, issues = compile_rubric(load_rubric("my-rubric.yaml"))
"""

from .compiler import Bundle, RubricCompileError, compile_or_raise, compile_rubric
from .formats import RubricImportError, dump, load_rubric, load_rubrics
from .library import Library, LibraryError, resolve
from .model import Criterion, Rubric

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
