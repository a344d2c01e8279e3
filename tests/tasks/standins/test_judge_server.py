"""The offline judge server's test routes: a test slows it down only while it needs a slow judge."""

import json
import time
import urllib.request

from openai import OpenAI

from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig


def _call_timer(server):
    """A function making one judge call to `server` and returning the seconds it took."""
    client = OpenAI(base_url=server.base_url, api_key="x", max_retries=0)

    def seconds() -> float:
        started = time.perf_counter()
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        return time.perf_counter() - started

    return seconds


def test_the_latency_set_by_post_applies_from_the_next_request():
    with RunningServer(ServerConfig(latency_ms=600)) as server:
        seconds = _call_timer(server)
        assert seconds() >= 0.6
        control = server.base_url.removesuffix("/v1") + "/latency"
        with urllib.request.urlopen(urllib.request.Request(control, data=b'{"ms": 0}', method="POST")) as answer:
            assert json.load(answer) == {"latency_ms": 0.0}
        assert seconds() < 0.6 and server.app.stats.answered == 2


def test_a_latency_set_from_a_later_request_applies_at_that_request_without_anyone_watching():
    """POST /latency with from_request K: calls before the K-th keep the old latency, the K-th and
    later take the new one (a loaded test's watcher may come late; the server switches on time)."""
    with RunningServer(ServerConfig(latency_ms=0)) as server:
        seconds = _call_timer(server)
        control = server.base_url.removesuffix("/v1") + "/latency"
        switch = b'{"ms": 500, "from_request": 3}'
        with urllib.request.urlopen(urllib.request.Request(control, data=switch, method="POST")) as answer:
            assert json.load(answer) == {"latency_ms": 0.0, "then": {"ms": 500.0, "from_request": 3}}
        assert seconds() < 0.5 and seconds() < 0.5  # calls 1 and 2
        assert seconds() >= 0.5 and seconds() >= 0.5  # call 3 switches; call 4 keeps it
        assert server.app.latency_from is None and server.app.config.latency_ms == 500


def test_a_jitter_spreads_the_answers_over_the_range_the_same_for_the_same_request():
    """#55: a fixed latency kept a closed loop's requests in lockstep waves; `jitter_ms` adds a share
    of it drawn from a hash of the request: within [ms, ms + jitter], spread, and the same again
    for the same request."""
    with RunningServer(ServerConfig()) as server:
        control = server.base_url.removesuffix("/v1") + "/latency"
        switch = b'{"ms": 100, "jitter_ms": 400}'
        with urllib.request.urlopen(urllib.request.Request(control, data=switch, method="POST")) as answer:
            assert json.load(answer) == {"latency_ms": 100.0, "jitter_ms": 400.0}
        client = OpenAI(base_url=server.base_url, api_key="x", max_retries=0)

        def seconds(text: str) -> float:
            started = time.perf_counter()
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
            return time.perf_counter() - started

        took = [seconds(f"text {i}") for i in range(8)]
        assert all(0.1 <= t < 0.6 for t in took) and max(took) - min(took) > 0.1, took
        assert abs(seconds("text 3") - took[3]) < 0.05  # the same request, the same share


def test_a_malformed_latency_body_is_a_clear_400_and_leaves_the_latency_alone():
    import urllib.error

    with RunningServer(ServerConfig(latency_ms=5)) as server:
        control = server.base_url.removesuffix("/v1") + "/latency"
        bad_switches = (
            b'{"ms": 3, "from_request": -1}',
            b'{"ms": 3, "from_request": 1.5}',
            b'{"ms": 3, "from_request": true}',
            b'{"ms": 3, "jitter_ms": -1}',
            b'{"ms": 3, "jitter_ms": "a bit"}',
        )
        for body in (
            b"not json",
            b"[]",
            b'{"milliseconds": 3}',
            b'{"ms": "fast"}',
            b'{"ms": -1}',
            b'{"ms": NaN}',
            *bad_switches,
        ):
            try:
                urllib.request.urlopen(urllib.request.Request(control, data=body, method="POST"))
                raise AssertionError(f"{body!r} was accepted")
            except urllib.error.HTTPError as refused:
                assert refused.code == 400, body
                expected = 'expected a JSON body {"ms": N} or {"ms": N, "from_request": K}, N >= 0, K a whole number'
                assert json.load(refused) == {"error": {"message": expected}}
        assert server.app.config.latency_ms == 5


def test_the_simulated_prefix_cache_reports_cached_tokens_as_openai_does():
    """An LRU of prompt-prefix blocks: a second call sharing a long system prompt is served the
    prefix from the cache (usage.prompt_tokens_details.cached_tokens), another prefix is not, and
    GET /stats totals both; under OpenAI's 1,024-token minimum a short shared prefix earns nothing."""
    rubric = "Score the text for clarity. " * 200  # ~1,400 tokens
    ask = [{"role": "system", "content": rubric}, {"role": "user", "content": "the text"}]
    other = [{"role": "system", "content": "Another rubric. " * 200}, {"role": "user", "content": "the text"}]
    with RunningServer(ServerConfig()) as server:
        client = OpenAI(base_url=server.base_url, api_key="x", max_retries=0)

        def cached(messages: list[dict]) -> int:
            usage = client.chat.completions.create(model="m", messages=messages).usage
            return usage.prompt_tokens_details.cached_tokens

        assert [cached(ask), cached(ask), cached(other)] == [0, 1392, 0]  # whole 16-token blocks of the rubric
        with urllib.request.urlopen(server.base_url.removesuffix("/v1") + "/stats") as answer:
            stats = json.load(answer)
        assert stats["cached_tokens"] == 1392 and stats["prompt_tokens"] > 3500
    from rubricflow.tasks.standins.prefix_cache import CacheRules, PrefixCache

    openai_like = PrefixCache(CacheRules(minimum_tokens=1024))
    short = "A rubric of 750 tokens. " * 125
    assert [openai_like.serve(short + text, 900) for text in ("one", "two")] == [0, 0]
    tiny = PrefixCache(CacheRules(capacity_tokens=64))  # four blocks: an older prefix is evicted
    tiny.serve("a" * 256, 64), tiny.serve("b" * 256, 64)
    assert tiny.serve("a" * 256, 64) == 0
