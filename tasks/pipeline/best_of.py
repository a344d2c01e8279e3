"""Best-of-n before a run (`rubricflow best-of`, `Warehouse.best_of`): how many candidates the
corpus' sets hold, and the rubric's best-of form for that n, compiled and kept as a file beside the
warehouse, which the scoring flow then runs like any rubric (rubrics/best_of.py)."""

from __future__ import annotations

from pathlib import Path

from rubricflow.errors import InputError
from rubricflow.rubrics.best_of import best_of_rubric
from rubricflow.rubrics.compiler import Bundle, compile_or_raise
from rubricflow.rubrics.formats import dump
from rubricflow.rubrics.model import Rubric
from rubricflow.warehouse import db


def set_size(warehouse: Path, corpus: str) -> int:
    """The one number of candidates the corpus' sets hold (a best-of-n form asks for exactly n)."""
    with db.reader(warehouse) as con:
        sizes = [r["n"] for r in db.fetch(con, "candidate_set_sizes.sql", corpus=corpus)]
    if not sizes or None in sizes:
        raise InputError(f"corpus {corpus}: not a candidate-set corpus (every row needs a list of `candidates`)")
    if len(sizes) > 1:
        raise InputError(f"corpus {corpus}: its sets hold {sizes} candidates; best-of-n needs one n per corpus")
    return sizes[0]


def best_of_form(rubric: Rubric, source: str, warehouse: Path, n: int) -> tuple[Path, Bundle]:
    """The rubric's best-of-n form, compiled and kept under `rubrics/` beside the warehouse (runs name it)."""
    form = best_of_rubric(rubric, n)
    bundle = compile_or_raise(form, source=source)
    target = warehouse.parent / "rubrics" / f"{form.metadata.id}@{form.metadata.version}.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(dump(form, "yaml"), encoding="utf-8")
    return target, bundle
