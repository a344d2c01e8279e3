"""`rf.load_rubric`: a rubric named the way a user would name it, compiled into a bundle.

The Python API's one way in to a rubric: a library id (`llm-slop`), `id@version`, a file path or
the YAML text itself, each compiled as `rubricflow score` compiles it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rubricflow.errors import InputError
from rubricflow.rubrics.compiler import Bundle, compile_for_scoring

RubricLike = str | Path | Bundle  # what every API call that takes a rubric accepts


@dataclass(frozen=True, repr=False)
class CompiledRubric(Bundle):
    """A compiled bundle that remembers how it was named (`source`), so the scoring flow can be
    given the same name; one made from YAML text has no name and is written to a file when scored."""

    source: str = ""

    def __repr__(self) -> str:
        criteria = ", ".join(c.id for c in self.rubric.criteria)
        return f"<rubric {self.id}@{self.version} ({self.short_hash}): {criteria}>"

    @property
    def criteria(self) -> list[str]:
        return [c.id for c in self.rubric.criteria]

    def to_yaml(self) -> str:
        """The rubric as YAML text, to edit into another version and load again."""
        from rubricflow.rubrics.formats import dump_yaml

        return dump_yaml(self.rubric)


def load_rubric(rubric: Any) -> CompiledRubric:
    """A library id, `id@version`, a path, rubric YAML/JSON text or a Rubric object, compiled for scoring; an unknown
    name or a rubric that does not compile raises an InputError naming it."""
    if isinstance(rubric, CompiledRubric):
        return rubric
    if isinstance(rubric, Bundle):
        return _named(rubric, "")
    from rubricflow.rubrics.model import Rubric

    if isinstance(rubric, Rubric):  # a rubric built in Python (rubricflow.rubrify's Rubric(...) is one)
        return _named(compile_for_scoring(rubric, source="<rubric object>"), "")
    if not isinstance(rubric, str | Path):
        raise InputError(f"load_rubric takes an id, a path or rubric text, not {type(rubric).__name__}")
    text = str(rubric)
    if isinstance(rubric, str) and "\n" in text.strip():
        return _named(compile_for_scoring(_from_text(text), source="<rubric text>"), "")
    from rubricflow.rubrics.library import resolve

    source = str(Path(text).resolve()) if Path(text).is_file() else text
    return _named(compile_for_scoring(resolve(text), source=text), source)


def guidance(rubric: Any) -> str:
    """A constraint-profile rubric's guidance block (seed 000: in-context guidance, never scored), to place
    in a model's context; `rubric` named as load_rubric names it. Another profile's rubric is refused:
    it scores (load_rubric)."""
    from rubricflow.rubrics.compiler import compile_or_raise
    from rubricflow.rubrics.guidance import is_guidance, render_guidance
    from rubricflow.rubrics.model import Rubric

    if isinstance(rubric, Bundle):
        found = rubric.rubric
    elif isinstance(rubric, Rubric):
        found = rubric
    elif isinstance(rubric, str) and "\n" in rubric.strip():
        found = _from_text(rubric)
    elif isinstance(rubric, str | Path):
        from rubricflow.rubrics.library import resolve

        found = resolve(str(rubric))
    else:
        raise InputError(f"guidance takes an id, a path, rubric text or a Rubric, not {type(rubric).__name__}")
    bundle = compile_or_raise(found, str(rubric) if isinstance(rubric, str | Path) else "<rubric>")
    if not is_guidance(found):
        raise InputError(
            f"rubric {bundle.id} is a {bundle.profile}-profile rubric with {len(found.criteria)} criteria: it scores "
            "(rf.load_rubric); guidance is for a constraint-profile rubric (a mission and examples, no criteria)"
        )
    return render_guidance(found)


def load_calibration_cases(path: str | Path) -> CompiledRubric:
    """A red-team calibration-cases JSON file (`rubric`, `source`, `allowed_judgements`, `cases`):
    its rubric, with each case as a golden expecting its judgement; run them with `judge.test(...)`."""
    from rubricflow.tasks.improve.calibration_cases import load_cases

    return _named(compile_for_scoring(load_cases(path), source=str(path)), "")


def _from_text(text: str):
    from rubricflow.rubrics.formats import loads_rubrics

    found = loads_rubrics(text, "rubric.yaml")
    if len(found) != 1:
        raise InputError(f"the rubric text holds {len(found)} rubrics; pass one")
    return found[0]


def _named(bundle: Bundle, source: str) -> CompiledRubric:
    return CompiledRubric(
        rubric=bundle.rubric,
        hash=bundle.hash,
        profile=bundle.profile,
        lattice=bundle.lattice,
        warnings=bundle.warnings,
        source=source,
    )


def flow_reference(rubric: str | Path | Bundle, folder: Path) -> str:
    """What the scoring flow is given for a rubric: its name or path as the user gave it, or, for
    one made from text, a JSON file under `folder` named by its hash (the same rubric, same hash)."""
    if isinstance(rubric, str | Path) and not (isinstance(rubric, str) and "\n" in rubric.strip()):
        return str(rubric)
    bundle = load_rubric(rubric)
    if bundle.source:
        return bundle.source
    from rubricflow.rubrics.formats import dump_json

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{bundle.id}-{bundle.short_hash}.json"
    if not path.exists():
        path.write_text(dump_json(bundle.rubric), encoding="utf-8")
    return str(path)
