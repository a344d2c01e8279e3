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
