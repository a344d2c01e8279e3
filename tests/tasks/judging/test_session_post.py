"""The judge client's hot path (tasks/judging/session_post) sends through its aiohttp session, not the
SDK's request layer: every answer shape and failure of the stand-in must come back exactly as the
SDK's own path gives it (the same value, or the same error: type, status, text, body, Retry-After,
kind, reachability), the same headers must be sent, and the answer cap must hold."""

import asyncio
import threading
from http.server import ThreadingHTTPServer

import pytest
from openai import DefaultAioHttpClient

from rubricflow.tasks.judging import session_post
from rubricflow.tasks.judging.answer_cap import AnswerTooLarge
from rubricflow.tasks.judging.failures import error_kind, is_unreachable
from rubricflow.tasks.judging.providers import client_for, provider
from rubricflow.tasks.judging.transport import retry_after_s
from rubricflow.tasks.standins.judge_server import FAULTS, RunningServer, ServerConfig
from tests.tasks.judging.test_answer_cap import HugeAnswers

BODY = {
    "model": "m",
    "messages": [{"role": "system", "content": "Score it."}, {"role": "user", "content": "The council met."}],
    "temperature": 0,
}
PATH = "/chat/completions"
SHAPES = [f for f in FAULTS if f not in ("drip", "slow_drip", "timeout")]  # the drips: test_judge's deadline tests


@pytest.fixture(scope="module")
def server():
    with RunningServer(ServerConfig(fault_rate=1.0, fault_attempts=99, stall_s=0.6)) as running:
        yield running


def seen(answer):
    """What a caller can tell of an answer or a failure (an answer's id and time differ per call)."""
    if isinstance(answer, BaseException):
        return (
            type(answer).__name__,
            getattr(answer, "status_code", None),
            str(answer),
            getattr(answer, "body", None),
            retry_after_s(answer),
            error_kind(answer),
            is_unreachable(answer),
        )
    return {k: v for k, v in answer.items() if k not in ("id", "created")} if isinstance(answer, dict) else answer


async def both_ways(url: str, timeout_s: float = 5.0) -> tuple:
    """The same request through the session path and the SDK's path of one judge client."""
    client = client_for(None, url, timeout_s, DefaultAioHttpClient(timeout=timeout_s))  # the judge's (shard.Worker)
    wire, answers = provider(None), []
    try:
        way = session_post.route(client, ("openai", PATH), PATH, {}, timeout_s)
        assert way is not None, "the judge's client must take the session path"
        for send in (
            lambda: session_post.post(client, way, wire.encoded(BODY), timeout_s),
            lambda: client.post(PATH, content=wire.encoded(BODY), cast_to=object, options={"timeout": timeout_s}),
        ):
            try:
                answers.append(seen(await send()))
            except Exception as exc:
                answers.append(seen(exc))
    finally:
        await client.close()
    return tuple(answers)


@pytest.mark.parametrize("fault", [None, *SHAPES])
def test_every_answer_and_failure_reads_as_the_sdk_reads_it(server, fault):
    server.app.config.faults = (fault,) if fault else ()
    server.app.config.fault_rate = 1.0 if fault else 0.0
    direct, sdk = asyncio.run(both_ways(server.base_url))
    assert direct == sdk  # echo_headers: the same headers sent, Authorization included


def test_a_timeout_and_a_refused_connection_fail_as_the_sdk_fails_them(server):
    server.app.config.faults, server.app.config.fault_rate = ("timeout",), 1.0
    direct, sdk = asyncio.run(both_ways(server.base_url, timeout_s=0.3))
    assert direct == sdk and direct[0] == "APITimeoutError"
    direct, sdk = asyncio.run(both_ways("http://127.0.0.1:9/v1", timeout_s=2.0))
    assert direct == sdk and direct[-1] is True  # unreachable, by the cause both keep


@pytest.mark.parametrize("chunked", [False, True])
def test_an_answer_past_the_cap_is_not_read(chunked):
    handler = type("Huge", (HugeAnswers,), {"chunked": chunked, "calls": 0})
    huge = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=huge.serve_forever, daemon=True).start()

    async def go():
        url = f"http://127.0.0.1:{huge.server_address[1]}/v1"
        client = client_for(None, url, 10, DefaultAioHttpClient(timeout=10))
        try:
            way = session_post.route(client, ("openai", PATH), PATH, {}, 10)
            with pytest.raises(AnswerTooLarge, match="declared" if not chunked else "more than"):
                await session_post.post(client, way, provider(None).encoded(BODY), 10)
        finally:
            await client.close()

    try:
        asyncio.run(go())
    finally:
        huge.shutdown()


def test_a_client_the_session_path_cannot_speak_for_keeps_the_sdks_path_and_no_client_is_kept():
    import gc
    import weakref

    async def go():
        plain = client_for(None, "http://127.0.0.1:9/v1", 5)  # httpx2's own transport (the chat path's)
        judge = client_for(None, "http://127.0.0.1:9/v1", 5, DefaultAioHttpClient(timeout=5))
        try:
            assert session_post.route(plain, ("openai", PATH), PATH, {}, 5) is None
            assert session_post.route(judge, ("openai", PATH), PATH, {}, 5) is not None
        finally:
            await plain.close()
            await judge.close()
        return weakref.ref(judge)

    gone = asyncio.run(go())
    gc.collect()
    assert gone() is None  # its route does not keep a closed client alive
