"""A 429 storm is the endpoint's quota, a window of a minute: a cell's retries must outlast it. The
waits of any transient error (0.25 s doubling) gave each cell up after ~8 s, so a storm ended the
run in ~15 s, before the quota came back (and the line blamed the key: test_unanswered_advice)."""

import random

import httpx
import openai
from tenacity import AsyncRetrying, Future, RetryCallState

from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.transport import RATE_LIMIT_WAIT_S, Wait

REQUEST = httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions")


def status_error(status: int, headers: dict | None = None) -> openai.APIStatusError:
    response = httpx.Response(status, headers=headers or {}, request=REQUEST, json={"error": {"message": "x"}})
    cls = openai.RateLimitError if status == 429 else openai.InternalServerError
    return cls("x", response=response, body=None)


def waits(exc: BaseException, attempts: int) -> list[float]:
    """The waits before each retry of a call whose every attempt failed with `exc`."""
    wait, found = Wait(), []
    for number in range(1, attempts):
        state = RetryCallState(AsyncRetrying(), None, (), {})
        state.attempt_number = number
        failed = Future(number)
        failed.set_exception(exc)
        state.outcome = failed
        found.append(wait(state))
    return found


def test_a_429_storm_without_retry_after_is_waited_out_for_a_quota_minute():
    attempts = JudgeConfig().max_attempts
    storm = waits(status_error(429), attempts)
    assert sum(storm) >= 60 and RATE_LIMIT_WAIT_S >= 60, storm  # a quota window, whatever the jitter
    assert storm[0] <= 2.5  # the first retry still comes soon (a burst, not a storm)
    assert sum(storm) <= RATE_LIMIT_WAIT_S + attempts * 0.5
    outage = waits(status_error(503), attempts)  # a server error keeps its short waits
    assert sum(outage) < 15, outage


def test_the_servers_retry_after_is_taken_as_given():
    assert waits(status_error(429, {"retry-after": "7"}), 3) == [7.0, 7.0]
    assert waits(status_error(429, {"retry-after-ms": "1500"}), 2) == [1.5]


def test_the_retry_waits_leave_the_users_random_sequence_alone():
    """The jitter is drawn from rubricflow's own generator: a seeded sequence of the user's (drawn
    while judge threads retry) is the same with and without the retries (tenacity's wait_random
    moved it: each retry drew from the global generator)."""
    random.seed(7)
    expected = [random.random() for _ in range(3)]
    random.seed(7)
    jitters = waits(status_error(503), 6)
    assert [random.random() for _ in range(3)] == expected
    assert len(set(jitters)) == len(jitters)  # jittered still: no two waits alike
