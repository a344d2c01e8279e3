"""#53 item 8: OpenAI Evals' `format_type` and `output_template` are read as openai/evals reads them
(format_classify: `in_message` by default, `out_message` puts the prompt after the input and the
completion as a conversation; concat_n_completions: several completions written into one slot by the
template), on openai/evals' own registry files, and `doctor` (rubrics/explain.py) reports them read."""

from __future__ import annotations

import pytest

from rubricflow.rubrics.explain import explain
from rubricflow.rubrics.formats import RubricImportError, load_rubric, load_rubrics
from rubricflow.rubrics.render import call_units, render_system_prompt

from ..conftest import TEST_DATA

EVALS = TEST_DATA / "rubrics" / "openai_evals"


def test_out_message_puts_the_grader_after_the_conversation_and_in_message_is_the_default():
    rubrics = {r.metadata.id: r for r in load_rubrics(EVALS / "current/humor.yaml")}  # openai/evals' file, unchanged
    out, plain = rubrics["humor-out-message"], rubrics["humor"]
    assert out.metadata.provenance["format_type"] == "out_message"
    assert plain.metadata.provenance["format_type"] == "in_message"
    prompt = render_system_prompt(out, call_units(out, "holistic")[0])
    assert "the assistant's response is the TEXT block" in prompt
    assert "Was the assistant's (your) last response above to the user funny?" in prompt
    assert not any("format_type out_message" in i for i in plain.instructions)
    found = explain(EVALS / "current/humor.yaml")
    assert "humor_out_message.format_type" in found.used and not any("format_type" in f for f in found.ignored)


def test_output_template_numbers_the_completions_in_one_slot():
    best = load_rubric(EVALS / "current/best.yaml")  # today's layout: output_template
    assert best.metadata.provenance["output_template"] == "{i}. {output}\n" and "best_of_n" in best.metadata.provenance
    assert "output_template `{i}. {output}`" in best.instructions[-1] and "[Response A]" in best.instructions[-1]
    diverse = load_rubric(EVALS / "current/diversity.yaml")
    note = next(i for i in diverse.instructions if "output_template" in i)
    assert "The TEXT holds several completions, each written as the eval's output_template `{i}. {output}`" in note
    for name, field in (("best", "best.output_template"), ("diversity", "diversity.output_template")):
        found = explain(EVALS / f"current/{name}.yaml")
        assert field in found.used and field not in found.ignored


def test_the_earlier_completion_sample_templates_read_as_output_template():
    best = load_rubric(EVALS / "registry/best.yaml")  # the same spec as it was (completion_sample_templates)
    assert best.metadata.provenance["output_template"] == "{i}. {output}\n"
    found = explain(EVALS / "registry/best.yaml")
    assert "completion_sample_templates.completion" in found.used
    assert not any(f.startswith("completion_sample_templates") for f in list(found.left) + found.ignored)


def test_a_format_type_evals_cannot_run_is_refused_with_its_field(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text("x:\n  prompt: 'Funny? {completion}'\n  choice_strings: YN\n  format_type: in_chat\n")
    with pytest.raises(RubricImportError, match=r"x.format_type: one of in_message, out_message, found 'in_chat'"):
        load_rubric(path)
    path.write_text(
        "x:\n  prompt: 'Funny?'\n  choice_strings: YN\n  format_type: out_message\n"
        "  input_outputs: {input: completion, other: completion2}\n"
    )
    with pytest.raises(RubricImportError, match=r"x.input_outputs: format_type out_message takes exactly one"):
        load_rubric(path)
    path.write_text("x:\n  prompt: 'Diverse? {completion}'\n  choice_strings: YN\n  output_template: '{i}.'\n")
    with pytest.raises(RubricImportError, match=r"x.output_template: a template with an \{output\} slot"):
        load_rubric(path)


@pytest.mark.parametrize(
    ("scores", "expected"), [("{Yes: 1.0}", {"Yes": 1.0, "No": None}), ("{Yes: 1.0, No: 1.0}", {"Yes": 1.0, "No": 1.0})]
)
def test_choice_scores_all_alike_are_kept_as_given_not_normalised_to_zero(tmp_path, scores, expected):
    """An outside probe: min-max normalising a single choice score (or equal ones) made each 0."""
    path = tmp_path / "one.yaml"
    path.write_text(
        f"one:\n  prompt: 'Is {{completion}} right? Answer Yes or No.'\n  choice_strings: [Yes, No]\n  choice_scores: {scores}\n"
    )
    [criterion] = load_rubric(path).criteria
    assert {c.value: c.score for c in criterion.scale.categories} == expected
    path.write_text(path.read_text().replace(scores, "{Yes: 5, No: 5}"))
    with pytest.raises(RubricImportError, match=r"one.choice_scores: every choice scores 5, none above another"):
        load_rubric(path)
