"""Reasoning models (o-series, GPT-5) against the offline judge's reasoning mode over real HTTP:
max_tokens and temperature are refused with OpenAI's 400s, learned once per run and sent in the
supported form; hidden reasoning spends the completion budget, so the run leaves room for it."""

import asyncio

import openai
import pytest
from openai import AsyncOpenAI

from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.judge import Judge, Prompt, RetryBudget, judge_all
from rubricflow.tasks.judging.params import RequestForm
from rubricflow.tasks.judging.ratelimit import RateLimiter
from rubricflow.tasks.judging.transport import post_chat
from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig
from tests.tasks.judging.test_judge import BUNDLE, cells

REASONING = 1500  # hidden tokens per answer: more than the 1,024 answer budget


def judge_reasoning(n: int, **config):
    with RunningServer(ServerConfig(reasoning_tokens=REASONING)) as server:

        async def go():
            client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
            judge = Judge(
                BUNDLE,
                JudgeConfig(base_url=server.base_url, **config),
                client,
                RateLimiter(max_in_flight=1),
                RetryBudget(100),
                "run-1",
                "corpus",
            )
            try:
                return await judge_all(judge, cells(n)), judge
            finally:
                await client.close()

        outcomes, judge = asyncio.run(go())
        return outcomes, judge, server.app.stats


def test_the_reasoning_server_answers_as_openai_does():
    """The stand-in's refusals have OpenAI's shape, and a budget reasoning fills gives an empty answer."""
    body = {"model": "o4-mini", "messages": [{"role": "user", "content": "Say OK."}]}
    with RunningServer(ServerConfig(reasoning_tokens=REASONING)) as server:

        async def send(extra):
            client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
            try:
                return await client.chat.completions.create(**body, **extra)
            finally:
                await client.close()

        with pytest.raises(openai.BadRequestError) as refused:
            asyncio.run(send({"max_tokens": 1024}))
        assert refused.value.body["param"] == "max_tokens" and refused.value.body["code"] == "unsupported_parameter"
        with pytest.raises(openai.BadRequestError) as refused:
            asyncio.run(send({"max_completion_tokens": 1024, "temperature": 0}))
        assert refused.value.body["param"] == "temperature" and "Only the default (1)" in refused.value.body["message"]
        cut = asyncio.run(send({"max_completion_tokens": 1024}))
    assert cut.choices[0].finish_reason == "length" and cut.choices[0].message.content == ""
    assert cut.usage.completion_tokens == 1024
    assert cut.usage.completion_tokens_details.reasoning_tokens == 1024


def test_one_refusal_per_parameter_then_the_supported_form_for_the_whole_run():
    outcomes, judge, stats = judge_reasoning(4, max_tokens=1024, logprobs=False)
    assert [o.completion["status"] for o in outcomes] == ["ok"] * 4
    assert all(o.completion["finish_reason"] == "stop" for o in outcomes)
    # the delivery check's first probe: max_tokens refused, then temperature refused; cells: answered at once
    assert stats.requests == 4 and stats.probes == 2 + 2
    assert judge.form.limit_param == "max_completion_tokens" and not judge.form.temperature
    # the reasoning spent is billed as completion tokens (OpenAI counts it there)
    assert all(o.completion["completion_tokens"] > REASONING for o in outcomes)


def test_without_reasoning_room_every_answer_is_cut_off_empty():
    """The budget matters: with no room for reasoning, 1,024 tokens end empty at the limit."""
    outcomes, judge, _ = judge_reasoning(2, max_tokens=1024, logprobs=False, reasoning_tokens=0, answer_retries=0)
    assert [o.completion["error_kind"] for o in outcomes] == ["truncated"] * 2
    assert all(o.completion["finish_reason"] == "length" for o in outcomes)


def test_an_answer_reasoning_left_empty_is_asked_once_more_with_twice_the_room():
    """#41 cut-off answers: an empty answer at the limit (the reasoning took it all) cannot be
    shortened; its one re-ask gets twice max_tokens and is answered. An answer with text that was
    cut off keeps max_tokens (the shorter-answer note), and one cut off again stays `truncated`."""
    outcomes, judge, stats = judge_reasoning(2, max_tokens=1024, logprobs=False, reasoning_tokens=0, answer_retries=1)
    assert [o.completion["status"] for o in outcomes] == ["ok"] * 2
    assert all(o.completion["attempts"] >= 2 for o in outcomes) and stats.repeats_after_an_answer == 0
    assert stats.requests == 2 + 2  # two asks a cell (the refusals were learned by the delivery check)
    prompt = judge.reasked(judge.reasked(Prompt("s", {}, "u", 1, 1), "truncated", "cut", 2, True), "parse", "x", 3)
    assert prompt.max_tokens == 2048  # once, not again
    assert judge.reasked(Prompt("s", {}, "u", 1, 1), "truncated", "cut off", 2, False).max_tokens is None
    body = judge.request_body("s", {}, "u", "json_schema", 0, prompt.feedback, prompt.max_tokens)
    assert body["max_tokens"] == 2048


def test_a_classic_server_keeps_max_tokens_and_temperature():
    async def go(server):
        client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        form = RequestForm(4096)
        try:
            body = {"model": "m", "messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 64}
            await post_chat(client, body | {"temperature": 0}, 30, form=form)
            return form
        finally:
            await client.close()

    with RunningServer(ServerConfig()) as server:
        form = asyncio.run(go(server))
    assert (form.limit_param, form.temperature, form.reasoning) == ("max_tokens", True, False)
    assert form.apply({"max_tokens": 64, "temperature": 0}) == {"max_tokens": 64, "temperature": 0}


def test_a_400_about_something_else_is_not_retried():
    """A max_tokens that is too large is no unsupported parameter: one request, the error raised."""
    error = {"message": "max_tokens is too large: 100000.", "type": "invalid_request_error", "param": "max_tokens"}
    exc = openai.BadRequestError("bad", response=_response(400), body=error | {"code": "invalid_value"})
    assert RequestForm().learn(exc, {"max_tokens": 100000}) is False


@pytest.mark.parametrize(
    "error",
    [
        {
            "message": "This model does not accept this parameter.",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        },
        {"message": "max_tokens is not permitted for this model; use max_completion_tokens.", "param": None},
        {"message": "Parameter 'max_tokens' cannot be used with reasoning models.", "type": "invalid_request_error"},
    ],
)
def test_a_refused_max_tokens_is_known_by_the_parameter_not_by_openais_sentence(error):
    """Azure, vLLM, LiteLLM and gateways word the refusal otherwise: the parameter is what is matched."""
    exc = openai.BadRequestError("bad", response=_response(400), body=error)
    form = RequestForm(4096)
    assert form.learn(exc, {"max_tokens": 64}) is True and form.apply({"max_tokens": 64}) == {
        "max_completion_tokens": 64 + 4096
    }


def _response(status: int):
    import httpx

    return httpx.Response(status, request=httpx.Request("POST", "http://127.0.0.1/v1/chat/completions"))
