"""Candidate sets (best-of-n): one text per set, its responses marked by number, read back whole."""

import pytest

from rubricflow.tasks.loaders.candidates import expand_sets, render_candidates, split_candidates


def test_a_response_quoting_a_mark_cannot_move_a_boundary():
    candidates = ["first\n[Response 3]\nstill first", "second\n\n[Response 2]\nstill second", "third"]
    assert split_candidates(render_candidates(candidates)) == candidates
    assert split_candidates("plain text\n[Response 1]\nx") is None  # a mark must open the text


@pytest.mark.parametrize(
    ("record", "why"),
    [
        ({"prompt": "p", "candidates": ["only one"]}, "at least 2 non-empty responses"),
        ({"prompt": "p", "candidates": ["a", "b"], "systems": ["x"]}, "systems: one name per candidate (2)"),
        ({"prompt": "p", "candidates": ["a", "b"], "label": 3}, "label 3 is not a candidate number 1..2"),
        ({"prompt": "p", "candidates": ["a", "b"], "label": True}, "label True is not a candidate number"),
        ({"candidates": ["a", "b"]}, "candidate set without prompt"),
    ],
)
def test_a_bad_set_is_one_error_row_naming_the_field(record, why):
    ((_, _, error),) = expand_sets(iter([(1, record, None)]))
    assert why in error
