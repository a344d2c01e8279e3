"""The offline judge server's test routes: a test slows it down only while it needs a slow judge."""

import time

from openai import OpenAI

from tests.conftest import ServerProcess


def test_the_latency_set_by_post_applies_from_the_next_request():
    server = ServerProcess("--latency-ms", "600")
    try:
        client = OpenAI(base_url=server.base_url, api_key="x", max_retries=0)

        def seconds() -> float:
            started = time.perf_counter()
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
            return time.perf_counter() - started

        assert seconds() >= 0.6
        server.set_latency(0)
        assert seconds() < 0.6 and server.stats()["answered"] == 2
    finally:
        server.stop()
