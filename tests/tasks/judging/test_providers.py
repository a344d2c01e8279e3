"""A second wire API is one provider module: a scoring run, the reflection/drafting path and the
key handling through Anthropic's Messages API, against a stand-in written from that API's
reference (tasks/standins/messages_api.py) over real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess

import httpx
import openai
import pytest
from pydantic import ValidationError

from rubricflow.tasks.judging.chat import ModelCallFailed, ask
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.judge import Judge, RetryBudget
from rubricflow.tasks.judging.params import RequestForm
from rubricflow.tasks.judging.providers import client_for, provider, providers
from rubricflow.tasks.judging.providers.anthropic_messages import ANSWER_TOOL
from rubricflow.tasks.judging.ratelimit import RateLimiter
from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig
from tests.conftest import EXE, rows, write_corpus
from tests.tasks.judging.test_judge import BUNDLE

KEY = "sk-ant-canary-4b1d9e7f2a6c8e0d"


def test_a_scoring_run_through_the_messages_api_judges_every_cell_and_keeps_the_key_out(tmp_path):
    write_corpus(tmp_path / "c.jsonl", 12)
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"} | {"ANTHROPIC_API_KEY": KEY}
    outputs = []
    with RunningServer(ServerConfig(api_key=KEY)) as server:  # wants x-api-key, refuses unknown fields
        for args in (
            ["ingest", "c.jsonl", "-c", "c"],
            ["score", "-c", "c", "-r", "llm-slop", "--base-url", server.base_url, "--provider", "anthropic"],
        ):
            result = subprocess.run(
                [EXE, *args, "-w", "w.duckdb"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
            )
            assert result.returncode == 0, result.stderr[-2000:]
            outputs += [result.stdout, result.stderr]
        stats = server.app.stats
    warehouse = tmp_path / "w.duckdb"
    # every request answered: the chat route would refuse all (it wants `Authorization: Bearer`); 12 cells
    # and no delivery probe (the Messages API's `system` is a field of its own: capability system_role)
    assert stats.requests == stats.answered == 12
    assert rows(warehouse, "SELECT count(*), count(*) FILTER (WHERE status = 'ok') FROM completions") == [(12, 12)]
    assert rows(warehouse, "SELECT min(coverage) FROM text_scores") == [(1.0,)]
    [(parameters,)] = rows(warehouse, "SELECT parameters FROM runs")
    assert json.loads(parameters)["provider"] == "anthropic"
    assert not any(KEY in text for text in outputs)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_the_reflection_path_speaks_it_too_and_a_wrong_key_is_one_scrubbed_line(monkeypatch):
    with RunningServer(ServerConfig(api_key=KEY)) as server:
        config = JudgeConfig(provider="anthropic", base_url=server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        answer = ask(config, [{"role": "system", "content": "Answer in JSON."}, {"role": "user", "content": "Hi"}])
        assert isinstance(json.loads(answer), dict)  # the forced tool's input, read back as the answer's text
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong-key-0000")
        with pytest.raises(ModelCallFailed, match="401.*invalid x-api-key") as failed:
            ask(config, [{"role": "user", "content": "Hi"}])
    assert "sk-ant-wrong-key-0000" not in str(failed.value)


def test_a_structured_answer_is_asked_as_a_forced_tool_and_read_back_as_text():
    wire = provider("anthropic")
    body = {
        "model": "claude-x",
        "temperature": 0,
        "max_tokens": 300,
        "seed": 7,
        "logprobs": True,
        "top_logprobs": 5,
        "response_format": {"type": "json_schema", "json_schema": {"name": "j", "schema": {"type": "object"}}},
        "messages": [{"role": "system", "content": "RUBRIC"}, {"role": "user", "content": "TEXT"}],
    }
    sent = wire.request(body)
    # the rubric is the shared prefix: a cache breakpoint after it
    assert sent["system"] == [{"type": "text", "text": "RUBRIC", "cache_control": {"type": "ephemeral"}}]
    assert sent["messages"] == [{"role": "user", "content": "TEXT"}]
    assert sent["tool_choice"] == {"type": "tool", "name": ANSWER_TOOL}
    assert sent["tools"][0]["input_schema"] == {"type": "object"}
    assert not {"seed", "logprobs", "top_logprobs", "response_format"} & set(sent)
    usage = {"input_tokens": 40, "output_tokens": 9, "cache_read_input_tokens": 60}
    read = wire.response(
        {
            "id": "msg_1",
            "model": "claude-x",
            "stop_reason": "max_tokens",
            "content": [{"type": "tool_use", "id": "t1", "name": ANSWER_TOOL, "input": {"criteria": {}}}],
            "usage": usage,
        }
    )
    choice = read.choices[0]
    assert json.loads(choice.message.content) == {"criteria": {}} and choice.finish_reason == "length"
    assert (read.usage.prompt_tokens, read.usage.prompt_tokens_details.cached_tokens) == (100, 60)
    refused = wire.response({"content": [{"type": "text", "text": "No."}], "stop_reason": "refusal"})
    assert refused.choices[0].message.refusal == "No."
    page = {"error": "bad gateway"}  # not a message: handed back as is, and the caller retries it as a gateway's
    assert wire.response(page) is page


def test_an_unknown_provider_or_a_batch_it_cannot_do_is_refused_by_name():
    with pytest.raises(
        ValidationError,
        match="unknown provider 'cohere': use one of anthropic, azure, bedrock, gemini, llamacpp, openai, vertex",
    ):
        JudgeConfig(provider="cohere")
    with pytest.raises(ValidationError, match="--batch needs the OpenAI Batch API or Anthropic's Message Batches"):
        JudgeConfig(provider="bedrock", model="anthropic.claude-x", batch=True)  # Bedrock has no Message Batches
    with pytest.raises(ValidationError, match="--batch needs the OpenAI Batch API or Anthropic's Message Batches"):
        JudgeConfig(provider="llamacpp", batch=True)  # llama.cpp's servers have no Batch API
    assert JudgeConfig(provider="anthropic", batch=True).batch  # Message Batches (tasks/judging/batch_anthropic.py)
    assert set(providers()) == {"openai", "anthropic", "gemini", "azure", "bedrock", "vertex", "llamacpp"}
    default, other = JudgeConfig(), JudgeConfig(provider="anthropic")
    assert default.judge_hash() == JudgeConfig(provider="openai").judge_hash() != other.judge_hash()
    assert not other.wants_logprobs()  # the Messages API has none to give


def test_a_provider_without_a_base_url_posts_to_its_own_api_never_openais(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # the user's OpenAI-compatible server
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    config = JudgeConfig(provider="anthropic", model="claude-x")
    assert config.resolved_base_url() is None  # OPENAI_BASE_URL is not this provider's
    assert str(client_for(config.provider, config.resolved_base_url(), 5).base_url) == "https://api.anthropic.com/v1/"
    assert str(client_for("openai", JudgeConfig().resolved_base_url(), 5).base_url) == "http://127.0.0.1:9/v1/"
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert str(client_for("openai", None, 5).base_url) == "https://api.openai.com/v1/"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:8/v1")
    assert config.resolved_base_url() == "http://127.0.0.1:8/v1" and config.on_this_machine()


def test_a_judge_reads_its_providers_capabilities_once():
    def judge(provider_name: str) -> Judge:
        config = JudgeConfig(provider=provider_name, base_url="http://127.0.0.1:9/v1")
        return Judge(BUNDLE, config, None, RateLimiter(max_in_flight=1), RetryBudget(0), "r", "c")  # type: ignore[arg-type]

    messages, chat = judge("anthropic"), judge("openai")
    assert messages.modes == ("json_schema", "tools", "text") and chat.modes[1] == "json_object"
    assert messages._fall_back("json_schema") and messages.mode == "tools"  # json_object is the same tool there
    assert messages._delivery_checked and not chat._delivery_checked  # a system field needs no delivery probe
    refusal = openai.BadRequestError(
        "max_tokens is not supported with this model",
        response=httpx.Response(400, request=httpx.Request("POST", "http://127.0.0.1:9/v1")),
        body={"error": {"message": "Unsupported parameter: 'max_tokens'", "param": "max_tokens"}},
    )
    sent = {"model": "m", "max_tokens": 20}
    assert RequestForm(0).learn(refusal, sent) and not messages.form.learn(refusal, sent)
