"""A hung or dripping model server stops the run sending, within a bounded time, as garbage answers
and refusals do: every cell lands, failed with a reason that a later run plans again."""

import asyncio
import time

import pytest
from openai import AsyncOpenAI

from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.failures import FailureKind
from rubricflow.tasks.judging.judge import Judge, RetryBudget, judge_all
from rubricflow.tasks.judging.ratelimit import RateLimiter
from rubricflow.tasks.judging.stop_rule import StopRule
from rubricflow.tasks.standins.silent_server import SilentServer
from tests.tasks.judging.test_judge import BUNDLE, cells


def judge_against(mode: str, n: int, timeout_s: float):
    with SilentServer(mode) as server:
        config = JudgeConfig(base_url=server.base_url, timeout_s=timeout_s, max_in_flight=4)

        async def go():
            client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
            judge = Judge(BUNDLE, config, client, RateLimiter(max_in_flight=4), RetryBudget(100), "run-1", "c")
            try:
                return await judge_all(judge, cells(n))
            finally:
                await client.close()

        started = time.monotonic()
        outcomes = asyncio.run(go())
        return outcomes, time.monotonic() - started, server.connections


def test_a_server_that_never_answers_stops_the_run_within_four_deadlines():
    """It held each cell for its whole call deadline, one at a time: 20 cells ran past 600 s."""
    outcomes, wall_s, calls = judge_against("silent", n=20, timeout_s=0.3)
    # the bound docs/operations.md states: four whole-answer deadlines (timeout + 1 s) and a back-off wait
    assert wall_s < 4 * (0.3 + 1) + 2, wall_s
    assert len(outcomes) == 20  # every cell lands, failed, in a kind the next run plans again
    replanned = set(FailureKind.replanned())
    assert all(o.completion["status"] != "ok" and o.completion["error_kind"] in replanned for o in outcomes)
    reasons = [o.completion["error"] for o in outcomes if o.completion["error"].startswith("not sent")]
    assert len(reasons) >= 20 - 8 and "repeated calls in a row within" in reasons[0] and "\n" not in reasons[0]
    assert calls <= 2 + 8  # two delivery probes and the first calls in flight, no more


@pytest.mark.slow  # ~6 s: four whole-answer deadlines of a drip
def test_a_server_that_drips_bytes_stops_the_run_too():
    outcomes, wall_s, _ = judge_against("drip", n=12, timeout_s=0.3)
    assert wall_s < 4 * (0.3 + 1) + 2, wall_s
    assert len(outcomes) == 12 and all(o.completion["status"] != "ok" for o in outcomes)
    assert any("repeated calls in a row within" in o.completion["error"] for o in outcomes)


def test_a_timeout_among_answers_is_a_slow_call_not_silence():
    import openai

    rule = StopRule(timeout_s=0.05)
    timeout = openai.APITimeoutError(request=None)  # type: ignore[arg-type]
    for _ in range(10):
        rule.sent(timeout, repeat=False)  # first attempts sent together time out together: no evidence
    assert rule.why_not_send() is None
    rule.sent(timeout, repeat=True)
    rule.sent(None, repeat=False)  # the server answered one: the count starts again
    rule.sent(timeout, repeat=True)
    assert rule.why_not_send() is None
    rule.sent(timeout, repeat=True)
    assert rule.why_not_send() is not None  # two repeated calls in a row went unanswered


def test_a_server_that_stalls_every_call_once_then_answers_is_not_silent():
    """Calls sent together time out together: one round of timeouts must not stop the run."""
    from rubricflow.tasks.standins.judge_server import ServerConfig
    from tests.tasks.judging.test_judge import judge_cells

    stalls = ServerConfig(fault_rate=1.0, faults=("timeout",), fault_attempts=1, stall_s=0.8)
    outcomes, _, stats = judge_cells(stalls, n=8, timeout_s=0.3)
    assert [o.completion["status"] for o in outcomes] == ["ok"] * 8 and stats.faults["timeout"] == 8


def test_a_refused_connection_is_said_refused_not_unanswered_within_the_timeout():
    """A transport can report a refused connection as a timeout (the refusal its cause): the stop
    rule's line said "no answer within the 60 s timeout" for a server that was not there."""
    import openai

    rule = StopRule(timeout_s=60)
    rule.sent(None, repeat=False)  # the server answered earlier in the run, then went away
    refused = openai.APITimeoutError(request=None)  # type: ignore[arg-type]
    refused.__cause__ = ConnectionRefusedError(111, "Connection refused")
    for _ in range(2):
        rule.sent(refused, repeat=True)
    why = rule.why_not_send()
    assert why is not None and "refused the connection to 2 repeated calls" in why, why
    assert "timeout" not in why and "Connection refused" in why
    rule.sent(None, repeat=True)  # an answer: the count starts again
    assert rule.why_not_send() is None
