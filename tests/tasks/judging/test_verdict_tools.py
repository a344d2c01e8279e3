"""waza's verdicts by tool call (`--output-mode verdict_tools`): the judge calls set_waza_grade_pass or
set_waza_grade_fail, over real HTTP to the offline judge, which answers with the call."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import replace

import pytest
from openai import AsyncOpenAI

from rubricflow.errors import InputError
from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.formats import load_rubric
from rubricflow.rubrics.library import resolve
from rubricflow.rubrics.render import call_units
from rubricflow.tasks.improve.goldens import judge_text
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.judge import Cell, Judge, RetryBudget, judge_all
from rubricflow.tasks.judging.ratelimit import RateLimiter
from rubricflow.tasks.judging.verdict_tools import output_modes
from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig
from tests.conftest import SHARED, SHARED_RUBRICS, ThreadServer


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


# --------------------------------------------------------------------------- auto picks the tools (seed 004)

SEED = (SHARED.parent / "seeds" / "004_08759ebe89262564.txt").read_text(encoding="utf-8")
JSON_RULE = "Answer with one JSON object only"


def judge_one(bundle, server_config, create=None, **config):
    """One cell of `bundle`'s first golden judged by a fresh Judge against the stand-in server;
    `create` wraps the judge's request (a server of another kind). Returns (outcome, judge, bodies)."""
    golden = bundle.rubric.goldens[0]
    cell = Cell("k0", "t0", hashlib.sha256(golden.output.encode()).hexdigest(), "verdict", 0, golden.output)
    with RunningServer(replace(server_config, record=True)) as server:

        async def go():
            client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
            judge = Judge(
                bundle,
                JudgeConfig(base_url=server.base_url, strategy="per_criterion", **config),
                client,
                RateLimiter(max_in_flight=1),
                RetryBudget(10),
                "run-1",
                "corpus",
            )
            if create is not None:
                judge._create = create(judge._create)
            try:
                return (await judge_all(judge, [cell]))[0], judge
            finally:
                await client.close()

        outcome, judge = asyncio.run(go())
        return outcome, judge, server.app.bodies


def test_auto_judges_a_waza_rubric_by_the_two_tools_with_no_json_rule_beside_them():
    """Seed 004: the judge receives the rendered prompt plus the two tools. Before, `auto` sent a
    waza rubric as json_schema, and verdict_tools mode kept "Answer with one JSON object only"
    beside the tool rule."""
    assert "The judge LLM receives the rendered prompt plus the\nset_waza_grade_passandset_waza_grade_failtools" in SEED
    bundle = compile_or_raise(load_rubric(SHARED_RUBRICS / "waza/groundedness.md"))
    outcome, judge, bodies = judge_one(bundle, ServerConfig())
    assert judge.modes[0] == "verdict_tools" and outcome.completion["output_mode"] == "verdict_tools"
    [body] = bodies
    assert [t["function"]["name"] for t in body["tools"]] == ["set_waza_grade_pass", "set_waza_grade_fail"]
    system = body["messages"][0]["content"]
    assert JSON_RULE not in system and "JSON Schema" not in system and "response_format" not in body
    assert "## Output\nGive your verdict by calling a tool: `set_waza_grade_pass`" in system
    [j] = outcome.judgments
    assert j.status == "scored" and j.value in (0, 1)


def test_rubric_render_prints_the_tool_mode_prompt_the_judge_is_sent():
    """`rubric render` of a waza rubric printed the JSON-mode prompt while `auto` sends the
    tool-mode one: it now prints what the judge receives first (the system prompt as sent, and the
    two tools), and the JSON-mode one when asked for it."""
    import json

    from tests.cli.test_rubric_commands import run

    path = SHARED_RUBRICS / "waza/groundedness.md"
    bundle = compile_or_raise(load_rubric(path))
    _, _, [body] = judge_one(bundle, ServerConfig())

    def render(*options: str) -> str:
        done = run("rubric", "render", str(path), *options, columns=400)
        assert done.returncode == 0, done.stderr
        return done.stdout

    shown = render()
    assert "output mode verdict_tools" in shown and body["messages"][0]["content"] in shown
    tools = json.loads(shown.split("tools (the one the judge calls is its verdict)", 1)[1].split("\n", 1)[1])
    assert tools == body["tools"]
    as_json = render("--output-mode", "json_object")
    assert "output mode json_object" in as_json and "JSON" in as_json and body["messages"][0]["content"] not in as_json
    # a call decided in one token (no rationale asked) goes out bare whatever mode was asked: no tools, no schema
    decided = render("--surface", "rationale=false", "--output-mode", "json_object")
    assert "output mode decision" in decided and "JSON Schema" not in decided
    assert "Give your verdict by calling a tool" not in decided and "tools (the one" not in decided


def test_auto_keeps_the_apis_modes_for_other_rubrics_and_apis_without_tools():
    from rubricflow.tasks.judging import providers

    waza = compile_or_raise(load_rubric(SHARED_RUBRICS / "waza/groundedness.md")).rubric
    units = call_units(waza, "per_criterion")
    openai_modes = providers.provider("openai").capabilities.output_modes
    assert output_modes(waza, units, openai_modes) == ("verdict_tools", *openai_modes)
    gemini = providers.provider("gemini").capabilities.output_modes  # no tool calls: JSON as before
    assert output_modes(waza, units, gemini) == gemini
    slop = resolve("llm-slop")  # not waza: the API's own modes
    assert output_modes(slop, call_units(slop, "per_criterion"), openai_modes) == openai_modes


def test_an_endpoint_refusing_tools_moves_a_waza_run_along_the_apis_modes():
    bundle = compile_or_raise(load_rubric(SHARED_RUBRICS / "waza/groundedness.md"))
    outcome, judge, bodies = judge_one(bundle, ServerConfig(supports="text"))
    assert judge.modes[0] == "verdict_tools" and outcome.completion["output_mode"] == "text"
    # refused in turn: verdict_tools, json_schema, json_object, tools; answered in text
    assert outcome.completion["attempts"] == 5 and len(bodies) == 1
    assert outcome.completion["status"] == "ok" and outcome.judgments[0].status == "scored"
    assert JSON_RULE in bodies[0]["messages"][0]["content"]  # the JSON modes keep their rule


def test_an_endpoint_answering_text_to_the_tools_falls_back_and_the_cell_is_scored():
    """llama.cpp's Python server takes `tools` but ignores `tool_choice: required` (it answers in
    text): under auto that is a refusal of the mode; the call goes again in the next one."""
    from openai.types.chat import ChatCompletion

    def text_to_tools(create):
        async def answer(body, timeout_s=None, repeat=True):
            if "tools" not in body:
                return await create(body, timeout_s, repeat)
            message = {"role": "assistant", "content": "The response is grounded."}
            choice = {"index": 0, "finish_reason": "stop", "message": message}
            return ChatCompletion.model_validate(
                {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice]}
            )

        return answer

    bundle = compile_or_raise(load_rubric(SHARED_RUBRICS / "waza/groundedness.md"))
    outcome, judge, bodies = judge_one(bundle, ServerConfig(), create=text_to_tools)
    assert judge.mode == "json_schema" and outcome.completion["output_mode"] == "json_schema"
    assert outcome.completion["status"] == "ok" and outcome.judgments[0].status == "scored"
    assert [b["response_format"]["type"] for b in bodies] == ["json_schema"]  # the server saw the JSON call
    forced, _, _ = judge_one(bundle, ServerConfig(), create=text_to_tools, output_mode="verdict_tools")
    assert forced.completion["output_mode"] == "verdict_tools"  # a mode given is kept: no fallback
    assert forced.judgments[0].status == "unscored"


def test_a_batch_line_of_a_waza_rubric_says_what_the_online_call_says():
    """A batch request is the online request in another envelope (tasks/judging/batch.request_body):
    it built the user message itself, so a waza rubric's lines lacked seed 004's `## Candidate output`."""
    from rubricflow.tasks.judging.batch import request_body
    from rubricflow.tasks.judging.providers import client_for

    bundle = compile_or_raise(load_rubric(SHARED_RUBRICS / "waza/groundedness.md"))
    config = JudgeConfig(base_url="http://127.0.0.1:9/v1", strategy="per_criterion")
    judge = Judge(bundle, config, client_for("openai", config.base_url, 30), RateLimiter(), RetryBudget(1), "r", "c")
    [unit] = call_units(bundle.rubric, "per_criterion")
    cell = Cell("k", "t1", hashlib.sha256(b"x").hexdigest(), unit.id, 0, "Paris is in France.", None, None, None)
    rendered = judge.rendering.unit(unit.id, None)
    [user] = [m["content"] for m in request_body(judge, cell)["messages"] if m["role"] == "user"]
    assert user == rendered.user("Paris is in France.") and user.startswith("## Candidate output")
