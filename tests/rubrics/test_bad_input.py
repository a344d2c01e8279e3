"""Issue 36's bad input in a real file with one thing wrong: a clear error naming the file and the
field, never a silent drop (here a JSON output template that is not JSON; a wrong verdict in a
mapping example is in test_seed_000, the Forge and PaperBench vocabularies in test_seed_002/003)."""

from __future__ import annotations

import pytest

from rubricflow.rubrics.compiler import RubricCompileError, compile_or_raise
from rubricflow.rubrics.formats import load_rubric

from ..conftest import SHARED_RUBRICS


def _broken(tmp_path, original, old: str, new: str):
    text = original.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / original.name
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def test_a_json_output_template_that_is_not_json_is_an_error_not_a_misalignment(tmp_path):
    original = SHARED_RUBRICS / "secemp9/anti_slop_rubric.xml"  # seed 000's anti-slop rubric, real
    compile_or_raise(load_rubric(original), source=str(original))  # as published: its template is JSON
    path = _broken(tmp_path, original, '"advice":""}', '"advice":""')
    with pytest.raises(RubricCompileError) as err:
        compile_or_raise(load_rubric(path), source=str(path))
    said = str(err.value)
    assert said.startswith(str(path)) and "E_TEMPLATE at output.template" in said and "not valid JSON" in said
