"""The offline judge server's test routes: a test slows it down only while it needs a slow judge."""

import json
import time
import urllib.request

from openai import OpenAI

from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig


def test_the_latency_set_by_post_applies_from_the_next_request():
    with RunningServer(ServerConfig(latency_ms=600)) as server:
        client = OpenAI(base_url=server.base_url, api_key="x", max_retries=0)

        def seconds() -> float:
            started = time.perf_counter()
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
            return time.perf_counter() - started

        assert seconds() >= 0.6
        control = server.base_url.removesuffix("/v1") + "/latency"
        with urllib.request.urlopen(urllib.request.Request(control, data=b'{"ms": 0}', method="POST")) as answer:
            assert json.load(answer) == {"latency_ms": 0.0}
        assert seconds() < 0.6 and server.app.stats.answered == 2


def test_a_malformed_latency_body_is_a_clear_400_and_leaves_the_latency_alone():
    import urllib.error

    with RunningServer(ServerConfig(latency_ms=5)) as server:
        control = server.base_url.removesuffix("/v1") + "/latency"
        for body in (b"not json", b"[]", b'{"milliseconds": 3}', b'{"ms": "fast"}', b'{"ms": -1}', b'{"ms": NaN}'):
            try:
                urllib.request.urlopen(urllib.request.Request(control, data=body, method="POST"))
                raise AssertionError(f"{body!r} was accepted")
            except urllib.error.HTTPError as refused:
                assert refused.code == 400, body
                assert json.load(refused) == {"error": {"message": 'expected a JSON body {"ms": N}, N >= 0'}}
        assert server.app.config.latency_ms == 5
