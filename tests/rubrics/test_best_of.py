"""The best-of-n form of a rubric (#36): n candidates in one call, a judgment each plus the winner."""

import pytest

from rubricflow.errors import InputError
from rubricflow.rubrics.best_of import WINNER, best_of_rubric
from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.formats import load_rubric
from rubricflow.rubrics.render import call_units, render_system_prompt

from ..conftest import TEST_DATA


def test_evals_best_of_n_asks_all_candidates_in_one_call_with_its_grader_prompt():
    form = best_of_rubric(load_rubric(TEST_DATA / "rubrics/openai_evals/registry/best.yaml"), 4)
    assert [c.id for c in form.criteria] == ["response-1", "response-2", "response-3", "response-4", WINNER]
    assert [c.value for c in form.criterion(WINNER).scale.categories] == ["1", "2", "3", "4"]
    assert form.criterion(WINNER).weight == 0  # it names the best; the candidates' scores make the score
    (unit,) = call_units(form, "holistic")
    prompt = render_system_prompt(form, unit)
    assert "Which of the following {n} texts is best" in prompt and "({n} is 4" in prompt
    assert "[Response A]" not in prompt  # the pair reading's note is replaced, not contradicted
    assert compile_or_raise(form).id == "best-best-of-4"


def test_fewer_than_two_candidates_is_no_comparison():
    with pytest.raises(InputError, match="at least 2 candidates"):
        best_of_rubric(load_rubric(TEST_DATA / "rubrics/openai_evals/registry/best.yaml"), 1)


def test_the_form_keeps_the_rubrics_advice_so_a_judge_knows_which_patterns_count_against():
    from rubricflow.rubrics.library import Library

    rubric = Library().bundle("llm-slop").rubric
    form = best_of_rubric(rubric, 3)
    assert form.advice == rubric.advice and form.advice
    prompt = render_system_prompt(form, call_units(form, "holistic")[0])
    assert "## Advice rules" in prompt and all(a.advice in prompt for a in rubric.advice)


def test_the_rubrics_criteria_are_stated_once_not_once_per_candidate():
    """Each candidate's criterion points at the criteria; they are written out once (a real judge
    pays for each repeat in tokens: llm-slop's best of 8 went from 8.6k to 6.9k characters)."""
    from rubricflow.rubrics.library import Library

    rubric = Library().bundle("llm-slop").rubric
    form = best_of_rubric(rubric, 8)
    prompt = render_system_prompt(form, call_units(form, "holistic")[0])
    assert all(prompt.count(c.description) == 1 for c in rubric.criteria)
    assert all("listed in the instructions" in form.criterion(f"response-{i}").description for i in range(1, 9))


def test_an_inverted_rubrics_forms_ask_for_less_of_what_its_criteria_measure():
    """An outside probe: a risk rubric (scoring.invert, each scale's top the most risk) was asked as
    "which meets it better", with its top anchor as "at its best", in both group forms: a judge
    reading them prefers the riskier response, and the reward server ranked groups backwards."""
    from rubricflow.rubrics.library import Library
    from rubricflow.rubrics.pairwise import RISK_NOTE, pairwise_rubric

    rubric = Library().bundle("llm-slop").rubric
    risk = rubric.model_copy(update={"scoring": rubric.scoring.model_copy(update={"invert": True})})
    for r, invert in ((rubric, False), (risk, True)):
        pairs = pairwise_rubric(r)
        for c, asked in zip(r.criteria, pairs.criteria, strict=True):
            if not getattr(c.scale, "anchors", None):
                continue
            anchors = sorted(c.scale.anchors, key=lambda a: a.value)
            best = anchors[0 if invert else -1]
            assert asked.description.endswith(best.description), asked.description
            assert ("shows less" in asked.description) is invert
        assert (RISK_NOTE in pairs.instructions) is invert
        form = best_of_rubric(r, 3)
        top = max(form.criterion("response-1").scale.anchors, key=lambda a: a.value)
        assert (top.description == "shows none of it") is invert
        assert ("measure risk" in render_system_prompt(form, call_units(form, "holistic")[0])) is invert
