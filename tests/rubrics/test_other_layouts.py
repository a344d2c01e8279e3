"""Issue 36: real layouts refused before: OpenAI Evals best-of-n (`choice_strings: from_n`, one
`{completion}` slot), promptfoo `llm-rubric` graded by `rubricPrompt` alone, and the OpenAI Evals
API's grader exports (`testing_criteria`)."""

from __future__ import annotations

import json

import pytest

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.formats import RubricImportError, load_rubric, load_rubrics
from rubricflow.rubrics.model import BinaryScale, NominalScale, NumericScale
from rubricflow.rubrics.render import call_units, render_system_prompt
from rubricflow.rubrics.scoring import verdict

from ..conftest import TEST_DATA

OURS = TEST_DATA / "rubrics"
GRADERS = OURS / "openai_graders"


def test_evals_best_of_n_is_a_comparison():
    r = load_rubric(OURS / "openai_evals/registry/best.yaml")  # openai/evals' own file, unchanged
    scale = r.criteria[0].scale
    assert isinstance(scale, NominalScale) and [(c.value, c.score) for c in scale.categories] == [
        ("1", 1.0),
        ("2", 0.0),
    ]
    assert "best_of_n" in r.metadata.provenance and "[Response A]" in r.instructions[-1]
    compile_or_raise(r)


def test_from_n_without_numbered_slots_or_sample_template_is_still_refused(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text("x:\n  prompt: 'Which of {completion} is best?'\n  choice_strings: from_n\n")
    with pytest.raises(RubricImportError, match=r"x.choice_strings: 'from_n' means one choice per completion"):
        load_rubric(path)


def test_promptfoo_llm_rubric_without_value_is_graded_by_rubric_prompt(tmp_path):
    path = OURS / "promptfoo/rubric-prompt-no-value-layout.yaml"
    r = load_rubric(path)
    assert len(r.criteria) == 1 and "rubricPrompt" in r.criteria[0].description
    prompt = render_system_prompt(r, call_units(r, "holistic")[0])
    assert "A note passes when it says what changed, who is affected" in prompt
    bare = tmp_path / "bare.yaml"
    bare.write_text(path.read_text().split("defaultTest:")[0] + "tests:\n  - assert:\n      - type: llm-rubric\n")
    with pytest.raises(RubricImportError, match=r"no `value` \(the rubric text\) and no `rubricPrompt`"):
        load_rubric(bare)


def test_label_model_grader_export():
    (r,) = load_rubrics(GRADERS / "label-grader-layout.json")
    c = r.criteria[0]
    assert isinstance(c.scale, NominalScale) and [(x.value, x.score) for x in c.scale.categories] == [
        ("warm", 1.0),
        ("neutral", 1.0),
        ("curt", 0.0),
    ]
    assert "Label the tone of the support reply" in r.instructions[0]
    assert verdict(r, {c.id: "neutral"}).passed is True and verdict(r, {c.id: "curt"}).passed is False


def test_mixed_grader_export_keeps_every_grader_and_its_threshold():
    (r,) = load_rubrics(GRADERS / "mixed-graders-layout.json")
    check, similar, scored = r.criteria
    assert isinstance(check.scale, BinaryScale) and "contains {{item.order_id}}" in check.mechanical_rules[0]
    assert isinstance(similar.scale, NumericScale) and similar.pass_threshold == 0.8
    assert "fuzzy_match" in similar.mechanical_rules[0]
    assert (scored.scale.min, scored.scale.max) == (1, 7) and scored.pass_threshold == pytest.approx(4 / 6)
    assert r.metadata.provenance["eval_id"] == "eval_0123456789abcdef" and "model:o3-mini" in scored.tags
    values = {check.id: 1, similar.id: 0.9, scored.id: 6}
    assert verdict(r, values).passed is True
    assert verdict(r, {**values, scored.id: 4}).passed is False  # one grader under its threshold fails the sample
    compile_or_raise(r)


def test_a_list_export_is_one_rubric_per_eval():
    rubrics = load_rubrics(GRADERS / "list-export-layout.json")
    assert [r.metadata.id for r in rubrics] == ["exact-category", "summary-faithful"]
    assert "Is every statement of the summary supported" in rubrics[1].instructions[0]


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda g: g.update(type="python"), "testing_criteria[0].type: 'python' is not read"),
        (lambda g: g.update(passing_labels=["great"]), "testing_criteria[0].passing_labels"),
        (lambda g: g.update(labels=["only"]), "testing_criteria[0].labels"),
    ],
)
def test_bad_graders_are_named(tmp_path, change, field):
    data = json.loads((GRADERS / "label-grader-layout.json").read_text())
    change(data["testing_criteria"][0])
    path = tmp_path / "export.json"
    path.write_text(json.dumps(data))
    with pytest.raises(RubricImportError) as err:
        load_rubric(path)
    assert str(path) in str(err.value) and field in str(err.value)
