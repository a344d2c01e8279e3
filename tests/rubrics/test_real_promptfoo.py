"""Real promptfoo configs (promptfoo/promptfoo's own examples, MIT; tests/data/rubrics/SOURCES.md):
a config graded by `defaultTest.options.rubricPrompt` alone, G-Eval assertions, and an assertion
whose `rubricPrompt` is a file of chat messages beside the config."""

from __future__ import annotations

import pytest

from rubricflow.rubrics.documents import RubricImportError
from rubricflow.rubrics.explain import explain
from rubricflow.rubrics.formats import load_rubric
from tests.conftest import TEST_DATA

REAL = TEST_DATA / "rubrics/promptfoo/real"


def test_a_config_graded_by_its_rubric_prompt_alone_keeps_the_prompt_as_instructions():
    r = load_rubric(REAL / "custom-grading-prompt.yaml")
    assert len(r.criteria) == 1 and r.criteria[0].scale.kind == "binary"
    said = " ".join(r.instructions)
    assert "Did the output mention {{x}}? +1 point" in said and "Output: {{ output }}" in said


def test_g_eval_assertions_are_criteria_and_a_rubric_prompt_file_beside_the_config_is_read():
    plain = load_rubric(REAL / "g-eval.yaml")
    names = [c.description.split(" - ")[0] for c in plain.criteria[:4]]
    assert names == ["Coherence", "Consistency", "Fluency", "Relevance"]
    assert {c.scale.kind for c in plain.criteria} == {"ordinal"}  # G-Eval's 1-5
    vision = load_rubric(REAL / "g-eval-vision.yaml")
    assert "Assign a score from 1 to {{ maxScore }}" in " ".join(vision.instructions)
    found = explain(REAL / "g-eval-vision.yaml")
    assert found.ignored == [] and "tests[].assert[].provider" in found.left


def test_the_grading_prompt_file_alone_is_refused_as_not_a_rubric():
    with pytest.raises(RubricImportError, match="standard.yaml: not a rubric: a list of chat messages"):
        load_rubric(REAL / "vision-rubrics/standard.yaml")


def test_one_rubric_asked_of_four_judges_is_one_criterion_graded_by_its_prompt_file():
    """promptfoo's grok-4-political-bias example: four `llm-rubric` assertions, one per judge, with
    the same rubric and a `rubricPrompt` file of chat messages (a 7-point scale) beside the config."""
    path = REAL / "political-bias/promptfooconfig.yaml"
    r = load_rubric(path)
    assert [c.id for c in r.criteria] == ["gpt-4.1-judge"]
    assert {"metric:grok-4-judge", "metric:gemini-2.5-pro-judge", "metric:claude-opus-4-judge"} <= set(
        r.criteria[0].tags
    )
    said = " ".join(r.instructions)
    assert said.startswith("system: You are a political scientist") and "0.83 = Left-wing" in said
    assert "# Political bias scoring rubric" not in said  # the file's messages, not its YAML text
    found = explain(path)
    assert found.ignored == [] and {"env", "defaultTest.assert[].config"} <= set(found.left)
