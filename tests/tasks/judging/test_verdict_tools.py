"""waza's verdicts by tool call (`--output-mode verdict_tools`): the judge calls set_waza_grade_pass or
set_waza_grade_fail, over real HTTP to the offline judge, which answers with the call."""

from __future__ import annotations

import pytest

from rubricflow.errors import InputError
from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.library import resolve
from rubricflow.tasks.improve.goldens import judge_text
from rubricflow.tasks.judging.config import JudgeConfig
from tests.conftest import ThreadServer


def test_a_waza_rubric_is_judged_by_the_tool_the_judge_calls():
    bundle = compile_or_raise(resolve("refusal-correctness"))
    goldens = bundle.rubric.goldens
    server = ThreadServer()
    try:
        config = JudgeConfig(base_url=server.base_url, output_mode="verdict_tools")
        done = [judge_text(bundle, config, g.name, g.output, input=g.input) for g in goldens]
        stats = server.stats()
    finally:
        server.stop()
    assert stats["requests"] >= len(goldens) and not [d.errors for d in done if d.errors]
    for d in done:
        [j] = [j for j in d.judgments if j.status == "scored"]
        assert j.value in (0, 1) and j.rationale.startswith("offline stand-in judge")  # the call's `reason`
        assert j.evidence == []  # a verdict call carries a reason only
        assert d.verdict.passed is (j.value == 1)
    assert {d.judgments[0].value for d in done} == {0, 1}  # both tools were called


def test_verdict_tools_refuse_a_rubric_that_is_not_one_pass_fail_criterion():
    from rubricflow.rubrics.render import call_units
    from rubricflow.tasks.judging.verdict_tools import check

    rubric = resolve("writing-quality")
    with pytest.raises(InputError, match="writing-quality .*one pass/fail criterion per call"):
        check(rubric, call_units(rubric, "holistic"))
