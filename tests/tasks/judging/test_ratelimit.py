"""The rate limiter's buckets on a fake clock: they start empty, refill continuously, cap bursts at
one second of quota, and let an oversized request through as debt; the in-flight cap holds."""

import asyncio

import pytest

from rubricflow.tasks.judging.ratelimit import AdaptiveConcurrency, RateLimiter, TokenBucket


class FakeClock:
    """Time that moves only when the bucket sleeps (or the test says so)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def bucket(per_minute: float, clock: FakeClock) -> TokenBucket:
    return TokenBucket(per_minute, clock=clock, sleep=clock.sleep)


async def take_many(b: TokenBucket, n: int, amount: float = 1.0) -> None:
    for _ in range(n):
        await b.take(amount)


def test_starts_empty_and_admits_at_the_configured_rate():
    clock = FakeClock()
    b = bucket(600, clock)  # 10 per second
    asyncio.run(take_many(b, 50))
    assert clock.now - 1000.0 == pytest.approx(5.0)  # 50 requests at 10/s, no opening burst
    assert all(s == pytest.approx(0.1) for s in clock.slept)


def test_idle_time_saves_at_most_one_second_of_quota():
    clock = FakeClock()
    b = bucket(600, clock)
    clock.now += 3600  # an hour idle
    asyncio.run(take_many(b, 10))  # one second's quota: no wait
    assert clock.slept == []
    asyncio.run(take_many(b, 1))
    assert clock.slept == [pytest.approx(0.1)]


def test_a_request_above_capacity_is_paid_off_as_debt():
    clock = FakeClock()
    b = bucket(60_000, clock)  # 1000 tokens per second, capacity 1000
    asyncio.run(take_many(b, 1, amount=5000))
    assert clock.now - 1000.0 == pytest.approx(5.0)
    asyncio.run(take_many(b, 1, amount=1000))  # the debt is paid: one more second
    assert clock.now - 1000.0 == pytest.approx(6.0)


def test_a_rate_must_be_positive():
    with pytest.raises(ValueError):
        TokenBucket(0)


def test_calls_in_flight_never_exceed_the_cap():
    async def scenario() -> int:
        limiter = RateLimiter(max_in_flight=3)
        active = peak = 0

        async def call() -> None:
            nonlocal active, peak
            async with limiter.slot():
                await limiter.admit(10)
                active += 1
                peak = max(peak, active)
                await asyncio.sleep(0.001)
                active -= 1

        await asyncio.gather(*(call() for _ in range(40)))
        return peak

    assert asyncio.run(scenario()) == 3


def test_unset_limits_do_not_wait():
    limiter = RateLimiter(rpm=None, tpm=None)
    assert limiter.requests is None and limiter.tokens is None


def test_slots_go_first_in_first_out_and_a_release_wakes_one_waiter():
    """Thousands of a shard's cells wait here; waking them all on every answer made each call's
    cost grow with the shard (issue 22). A freed slot goes to the longest waiter, and only to it."""

    async def scenario() -> tuple[list[int], int]:
        concurrency = AdaptiveConcurrency(ceiling=1, start=1)
        order, woken = [], 0

        async def call(i: int) -> None:
            nonlocal woken
            await concurrency.acquire()
            woken += 1
            order.append(i)
            await asyncio.sleep(0)
            await concurrency.release(0.001, 1, False)

        await asyncio.gather(*(call(i) for i in range(500)))
        return order, woken

    order, woken = asyncio.run(scenario())
    assert order == list(range(500)) and woken == 500


def test_a_cancelled_waiter_gives_its_slot_to_the_next():
    async def scenario() -> int:
        concurrency = AdaptiveConcurrency(ceiling=1, start=1)
        await concurrency.acquire()
        first = asyncio.ensure_future(concurrency.acquire())
        second = asyncio.ensure_future(concurrency.acquire())
        await asyncio.sleep(0)
        first.cancel()
        await concurrency.release(0.001, 1, False)
        await asyncio.wait_for(second, 1)
        return concurrency.active

    assert asyncio.run(scenario()) == 1


def test_a_later_run_keeps_what_the_controller_learned_below_its_own_ceiling():
    concurrency = AdaptiveConcurrency(ceiling=64)
    concurrency.limit, concurrency.threshold = 40.0, 40.0
    RateLimiter(max_in_flight=16, concurrency=concurrency)
    assert (concurrency.ceiling, concurrency.limit) == (16, 16.0)
    RateLimiter(max_in_flight=64, concurrency=concurrency)
    assert concurrency.ceiling == 64 and concurrency.limit == 16.0  # learned, not reset to a slow start


def test_one_stall_seen_by_every_call_in_flight_cuts_the_limit_once():
    """A pause in this process (a garbage collection, a long write) makes every call in flight look
    slow at once; cutting once per answer took the limit from 64 to 1 (issue 22). As in TCP, calls
    sent before a cut cannot cut again; a call sent after it can."""
    from rubricflow.tasks.judging.ratelimit import Slot

    async def scenario() -> tuple[float, float]:
        concurrency = AdaptiveConcurrency(ceiling=64, start=64)
        concurrency.fastest = 0.001
        slots = [Slot(concurrency) for _ in range(40)]
        for slot in slots:
            await slot.__aenter__()
        for slot in slots:  # all 40 answers arrive after a 0.5 s stall
            slot.latency_s = 0.5
            await slot.__aexit__(None, None, None)
        after_stall = concurrency.limit
        later, other = Slot(concurrency), Slot(concurrency)  # two in flight, sent after the cut
        await later.__aenter__()
        await asyncio.wait_for(other.__aenter__(), 5)  # a limit cut to 1 would keep it waiting
        other.latency_s = 0.5  # it went out with another in flight
        await other.__aexit__(None, None, None)
        return after_stall, concurrency.limit

    after_stall, after_later = asyncio.run(scenario())
    assert after_stall == pytest.approx(64 * 0.7)
    assert after_later == pytest.approx(64 * 0.7 * 0.7)
