"""Anthropic's Message Batches wire (tasks/judging/batch_anthropic.py) against the judge server's
stand-in (tasks/standins/message_batches_api.py), in process: which results come back as answers,
a batch body the API refuses, and the key never sent to a results_url on another host."""

import asyncio

import openai
import orjson
import pytest

from rubricflow.tasks.judging.batch import BatchState, Staged, wait
from rubricflow.tasks.judging.batch_anthropic import MessageBatches, _same_origin
from rubricflow.tasks.judging.providers import client_for
from rubricflow.tasks.standins.batch_api import BatchConfig
from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig

KEY = "sk-ant-batch-test-0123456789"
SHARED = {"type": "text", "text": "Judge the text.", "cache_control": {"type": "ephemeral"}}


def requests(n: int, custom_id: str = "cell-{}") -> bytes:
    line = lambda i: {  # noqa: E731
        "custom_id": custom_id.format(i),
        "params": {
            "model": "claude-x",
            "max_tokens": 64,
            "system": [SHARED],
            "messages": [{"role": "user", "content": f"text {i}"}],
        },
    }
    return orjson.dumps({"requests": [line(i) for i in range(n)]})


def run_batch(base_url: str, body: bytes) -> tuple[BatchState, list]:
    async def go():
        wire, client = MessageBatches(), client_for("anthropic", base_url, 10)
        async with client:
            batch = await wait(wire, client, await wire.buy(client, Staged("staged", body)), 0.05, 10)
            return batch, await wire.answers(client, batch)

    return asyncio.run(go())


def test_succeeded_results_are_answers_and_errored_ones_are_left_to_the_online_path(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with RunningServer(ServerConfig(api_key=KEY, batch=BatchConfig(fail_rate=0.4))) as server:
        batch, answers = run_batch(server.base_url, requests(10))
        store = server.app.message_batches
    counts = store.batches[batch.id]["request_counts"]
    assert (batch.status, batch.final, store.created) == ("ended", True, 1)
    assert 0 < counts["errored"] < 10 and len(answers) == counts["succeeded"] == 10 - counts["errored"]
    assert all(MessageBatches().read(message).choices[0].message for _, message in answers)
    assert set(store.shared_block_cached.values()) == {True}  # recorded per request


def test_an_expired_batch_has_no_answers(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with RunningServer(ServerConfig(api_key=KEY, batch=BatchConfig(expire=True))) as server:
        batch, answers = run_batch(server.base_url, requests(3))
        assert server.app.message_batches.batches[batch.id]["request_counts"]["expired"] == 3
    assert batch.final and answers == []


def test_a_batch_the_api_would_refuse_is_refused_with_its_reason(monkeypatch):
    with RunningServer(ServerConfig(api_key=KEY)) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        with pytest.raises(openai.BadRequestError, match=r"requests\.0\.custom_id: must match"):
            run_batch(server.base_url, requests(2, "cell:{}"))  # a colon: not in ^[a-zA-Z0-9_-]{1,64}$
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong")
        with pytest.raises(openai.AuthenticationError):
            run_batch(server.base_url, requests(1))
        assert server.app.message_batches.created == 0


def test_a_results_url_on_another_host_is_not_sent_the_key():
    client = client_for("anthropic", "http://127.0.0.1:9/v1", 5)
    own = BatchState("msgbatch_1", "ended", True, "http://127.0.0.1:9/v1/messages/batches/msgbatch_1/results")
    forged = BatchState("msgbatch_1", "ended", True, "https://collector.example/steal")
    assert _same_origin(client, own) == own.results
    assert _same_origin(client, forged) == "/messages/batches/msgbatch_1/results"
