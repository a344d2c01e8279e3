"""A third wire API is one provider module (tasks/judging/providers/gemini_generate.py): a scoring
run through the real flow, the drafting path and the key handling through Google's Gemini API, against
a stand-in written from that API's reference (tasks/standins/generate_content_api.py) over real HTTP
on 127.0.0.1, every call through the one hardened client."""

from __future__ import annotations

import json
import os
import subprocess

import httpx
import openai
import pytest

from rubricflow.tasks.judging.chat import ModelCallFailed, ask
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.failures import FailureKind
from rubricflow.tasks.judging.providers import client_for, provider
from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig
from tests.conftest import EXE, rows, write_corpus

KEY = "AIza-canary-7c2e9b4d1f6a8e3c0b5d"


@pytest.fixture(scope="module")
def server():
    with RunningServer(ServerConfig(api_key=KEY)) as running:  # wants x-goog-api-key, refuses unknown fields
        yield running


def gemini_url(server) -> str:
    return server.base_url.removesuffix("/v1") + "/v1beta"


def test_a_scoring_run_through_the_gemini_api_judges_every_cell_and_keeps_the_key_out(tmp_path, server):
    write_corpus(tmp_path / "c.jsonl", 8)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "GOOGLE_API_KEY")}
    env |= {"GEMINI_API_KEY": KEY}
    before = server.app.stats.requests
    outputs = []
    for args in (
        ["ingest", "c.jsonl", "-c", "c"],
        ["score", "-c", "c", "-r", "llm-slop", "--base-url", gemini_url(server), "--provider", "gemini"],
    ):
        result = subprocess.run(
            [EXE, *args, "-w", "w.duckdb"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert result.returncode == 0, result.stderr[-2000:]
        outputs += [result.stdout, result.stderr]
    warehouse = tmp_path / "w.duckdb"
    # 8 cells, one request each: the chat route would refuse them (no x-goog-api-key there), and the
    # system instruction is a field of its own, so no delivery probe is sent
    assert server.app.stats.requests - before == 8
    assert rows(warehouse, "SELECT count(*), count(*) FILTER (WHERE status = 'ok') FROM completions") == [(8, 8)]
    assert rows(warehouse, "SELECT DISTINCT output_mode FROM completions") == [("json_schema",)]
    assert rows(warehouse, "SELECT min(coverage) FROM text_scores") == [(1.0,)]
    assert rows(warehouse, "SELECT min(prompt_tokens) > 0 FROM completions") == [(True,)]  # usageMetadata read
    [(parameters,)] = rows(warehouse, "SELECT parameters FROM runs")
    assert json.loads(parameters)["provider"] == "gemini"
    assert not any(KEY in text for text in outputs)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_a_wrong_key_is_a_setup_failure_planned_again_and_said_in_one_scrubbed_line(monkeypatch, server):
    config = JudgeConfig(provider="gemini", base_url=gemini_url(server))
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    answer = ask(config, [{"role": "system", "content": "Answer in JSON."}, {"role": "user", "content": "Hi"}])
    assert isinstance(json.loads(answer), dict)
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-wrong-key-000000")
    with pytest.raises(ModelCallFailed, match="400.*API key not valid") as failed:
        ask(config, [{"role": "user", "content": "Hi"}])
    assert "AIza-wrong-key-000000" not in str(failed.value)
    # Google answers a bad key with a 400, which chat completions would call final; this API says setup
    refused = openai.BadRequestError(
        "API key not valid",
        response=httpx.Response(400, request=httpx.Request("POST", gemini_url(server))),
        body={"code": 400, "status": "INVALID_ARGUMENT", "details": [{"reason": "API_KEY_INVALID"}]},
    )
    assert provider("gemini").classify(refused) is FailureKind.SETUP and FailureKind.SETUP.policy.replanned
    assert provider("openai").classify(refused) is FailureKind.DETERMINISTIC


def test_its_endpoint_key_and_capabilities_are_its_own(monkeypatch):
    for variable in ("GEMINI_BASE_URL", "OPENAI_BASE_URL", "GEMINI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "AIza-google-variable-1234")
    client = client_for("gemini", JudgeConfig(provider="gemini").resolved_base_url(), 5)
    assert str(client.base_url) == "https://generativelanguage.googleapis.com/v1beta/"
    assert client.default_headers["x-goog-api-key"] == "AIza-google-variable-1234"
    assert not JudgeConfig(provider="gemini").wants_logprobs()
    with pytest.raises(ValueError, match="--batch needs the OpenAI Batch API"):
        JudgeConfig(provider="gemini", batch=True)


def test_a_request_is_contents_parts_and_a_response_schema_and_the_answer_reads_back():
    wire = provider("gemini")
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"score": {"type": "integer", "enum": [1, 2]}, "why": {"type": ["string", "null"]}},
        "required": ["score"],
    }
    body = {
        "model": "models/gemini-2.5-flash",
        "temperature": 0,
        "max_tokens": 300,
        "seed": 7,
        "response_format": {"type": "json_schema", "json_schema": {"name": "j", "schema": schema, "strict": True}},
        "messages": [{"role": "system", "content": "RUBRIC"}, {"role": "user", "content": "TEXT"}],
    }
    assert wire.url_path(body) == "/models/gemini-2.5-flash:generateContent"
    sent = wire.request(body)
    assert sent["systemInstruction"] == {"parts": [{"text": "RUBRIC"}]}
    assert sent["contents"] == [{"role": "user", "parts": [{"text": "TEXT"}]}]
    config = sent["generationConfig"]
    assert (config["maxOutputTokens"], config["temperature"], config["seed"]) == (300, 0, 7)
    assert config["responseMimeType"] == "application/json"
    assert config["responseSchema"] == {
        "type": "OBJECT",
        "properties": {"score": {"type": "INTEGER", "enum": [1, 2]}, "why": {"type": "STRING", "nullable": True}},
        "required": ["score"],
    }
    usage = {"promptTokenCount": 40, "candidatesTokenCount": 9, "thoughtsTokenCount": 30, "cachedContentTokenCount": 8}
    thought = {"text": "let me think", "thought": True}
    read = wire.response(
        {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [thought, {"text": '{"score": 2'}]},
                    "finishReason": "MAX_TOKENS",
                }
            ],
            "usageMetadata": usage,
            "modelVersion": "gemini-2.5-flash",
        }
    )
    choice = read.choices[0]
    assert choice.message.content == '{"score": 2' and choice.finish_reason == "length"
    assert (read.usage.prompt_tokens, read.usage.completion_tokens) == (40, 39)
    assert read.usage.completion_tokens_details.reasoning_tokens == 30  # RequestForm leaves room for thinking
    assert read.usage.prompt_tokens_details.cached_tokens == 8
    filtered = wire.response({"candidates": [{"content": {"parts": []}, "finishReason": "SAFETY"}]})
    assert filtered.choices[0].finish_reason == "content_filter"
    blocked = wire.response({"promptFeedback": {"blockReason": "SAFETY"}})
    assert blocked.choices[0].finish_reason == "content_filter"
    page = {"error": "bad gateway"}  # not an answer: handed back as is, and the caller retries it as a gateway's
    assert wire.response(page) is page
