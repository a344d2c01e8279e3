"""Requests/min and tokens/min limits, accurate below one second, plus a cap on calls in flight.

A limiter with a 60 s period lets a whole minute's quota out at once and then stalls; these
buckets refill continuously and hold at most `burst_s` seconds of quota, so the rate is smooth.
Buckets start empty: a run never opens with a burst the server would answer with 429s.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path

from rubricflow.tasks.runtime.lease import LeasedBucket, PgQuota, SharedQuota, bucket_key


class TokenBucket:
    """`clock` and `sleep` are the real ones except in tests, which drive the bucket on a fake clock."""

    def __init__(
        self,
        per_minute: float,
        burst_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ):
        if per_minute <= 0:
            raise ValueError("a rate limit must be positive")
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst_s)
        self.level = 0.0
        self.clock, self.sleep = clock, sleep
        self.stamp = clock()
        self._lock = asyncio.Lock()

    async def take(self, amount: float = 1.0) -> None:
        """Wait until `amount` is available. An amount above capacity is allowed and paid off as debt."""
        async with self._lock:  # first come, first served
            now = self.clock()
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
            self.stamp = now
            self.level -= amount
            if self.level < 0:
                await self.sleep(-self.level / self.rate)


class QueueSignal:
    """Whether answers slow down with the number of calls in flight, the mark of a server that
    queues (a local model answering one request at a time), as opposed to a server that is simply
    slow or whose answers vary in length. It is the least-squares slope of latency on calls in
    flight over the last `WINDOW` answers, counted only when it is clearly above noise (two standard
    errors) and explains most of this call's latency. A fixed baseline (the fastest answer ever
    seen, used before) read any later rise of the server's own latency, a 200 ms judge after a fast
    warm-up or a provider at a busy hour, as queueing and cut the limit to 1 for good."""

    WINDOW = 64
    MIN_SAMPLES = 8

    def __init__(self) -> None:
        self.samples: deque[tuple[int, float]] = deque(maxlen=self.WINDOW)
        self.clear()

    def clear(self) -> None:
        """Forget every answer (the next verdict reads only answers added after)."""
        self.samples.clear()
        # Running sums over the window, so a fit is O(1), not five passes over 64 answers (~3% of
        # the reward server's CPU, #55): calls in flight are integers (their sums exact); latencies
        # are summed less `shift` (the window's mean at the last exact pass), so their squares and
        # products cancel no precision, and summed exactly again every WINDOW answers.
        self.shift, self.added = 0.0, 0
        self.sn = self.snn = 0
        self.sl = self.sll = self.snl = 0.0

    def add(self, in_flight: int, latency_s: float) -> None:
        if len(self.samples) == self.WINDOW:
            self._count(*self.samples[0], -1)
        self.samples.append((in_flight, latency_s))
        self.added += 1
        if self.added % self.WINDOW == 0:
            self._resum()
        else:
            self._count(in_flight, latency_s, 1)

    def _count(self, n: int, latency: float, sign: int) -> None:
        y = latency - self.shift
        self.sn += sign * n
        self.snn += sign * n * n
        self.sl += sign * y
        self.sll += sign * y * y
        self.snl += sign * n * y

    def _resum(self) -> None:
        """The sums again from the window itself, about its mean: no rounding carried over."""
        k = len(self.samples)
        self.shift = sum(latency for _, latency in self.samples) / k
        self.sn = self.snn = 0
        self.sl = self.sll = self.snl = 0.0
        for n, latency in self.samples:
            self._count(n, latency, 1)

    def queued(self, in_flight: int, latency_s: float) -> bool | None:
        """True when the slope puts at least 40% (and 50 ms) of this latency in the queue; None
        without evidence either way (too few answers, or calls in flight barely varied)."""
        fit = self._fit()
        if fit is None:
            return None
        slope, error = fit
        waited = slope * (in_flight - 1)
        return in_flight >= 2 and slope > 4 * error and waited >= max(0.4 * latency_s, 0.05)

    def _fit(self) -> tuple[float, float] | None:
        """(slope, its standard error), or None without enough spread in calls in flight to tell."""
        k = len(self.samples)
        if k < self.MIN_SAMPLES:
            return None
        sxx = (k * self.snn - self.sn * self.sn) / k  # exact: integers
        if sxx < k * 0.25:  # calls in flight barely varied: no evidence either way
            return None
        sxy = self.snl - self.sn * self.sl / k
        syy = self.sll - self.sl * self.sl / k
        slope = sxy / sxx
        residual = max(syy - slope * sxy, 0.0)  # the least-squares residual: rounding may dip it below 0
        return slope, (residual / (k - 2) / sxx) ** 0.5


class InSendOrder:
    """Answers handed on in the order their calls were sent, as TCP reads its acknowledgements: read
    as they came, a window after a pause held the last burst's slowest answers (sent deep) beside the
    next burst's fastest (sent shallow), a slope no queue made, and a judge whose answers vary in
    length was cut at every burst a training loop sent (#55)."""

    MAX_HELD = 4096  # a call never answered (a bug) holds no later answer for good

    def __init__(self) -> None:
        self.read = 0  # every call numbered up to this one has been answered
        self.held: dict[int, tuple[int, float] | None] = {}

    def answer(self, number: int, sample: tuple[int, float] | None) -> list[tuple[int, tuple[int, float]]]:
        """The (number, sample) pairs readable now, oldest first; `sample` None: answered, nothing
        to read (a failure); `number` 0: unnumbered, read at once."""
        if number == 0:
            return [(0, sample)] if sample else []
        if number <= self.read:  # skipped past (MAX_HELD)
            return []
        self.held[number] = sample
        if len(self.held) > self.MAX_HELD:
            self.read = min(self.held) - 1
        ready = []
        while self.read + 1 in self.held:
            self.read += 1
            got = self.held.pop(self.read)
            if got is not None:
                ready.append((self.read, got))
        return ready


class AdaptiveConcurrency:
    """Calls in flight, adjusted to what the server can take (AIMD, as TCP does): the limit starts
    small and doubles while answers come back fine (slow start), then grows by one per round; it is
    cut by half on a sign of overload (a timeout, 429, 503) and by 30% when the server's own latency
    (send to answer, never time queued in this client) grows with the number of calls in flight,
    which is how a server that queues (a local model answering one request at a time) looks (see
    `QueueSignal`, read in the order the calls were sent: `InSendOrder`).
    `ceiling` is --max-in-flight. As in TCP, one window of calls cuts the limit once: calls sent
    before the last cut cannot cut it again (one stall seen by every call in flight at once, a
    garbage collection or a long write in this process, used to cut it to 1).

    Waiters are served first in, first out, and a freed slot wakes exactly one of them: a shard
    parks thousands of cells here, and waking them all on every answer made each call's cost grow
    with the shard. One controller serves an endpoint for the life of the process (see
    `tasks/judging/shard.Worker`), so what it learned carries over from shard to shard and run to run."""

    def __init__(self, ceiling: int, start: int = 8):
        self.ceiling = ceiling
        self.limit = float(min(ceiling, start))
        self.threshold = float(ceiling)  # end of slow start
        self.active = 0
        self.peak = 0  # the most calls in flight at once
        self.queue = QueueSignal()
        self.sent = 0  # calls let through so far: a call's number says whether it was sent after a cut
        self.cut_after = 0  # the number of the last call sent before the last cut
        self.order = InSendOrder()
        self.verdict: bool | None = None  # the queue signal's last verdict
        self._waiters: deque[asyncio.Future] = deque()

    def set_ceiling(self, ceiling: int) -> None:
        """A later run of the same endpoint with its own --max-in-flight keeps what was learned below it."""
        self.ceiling = ceiling
        self.limit = min(self.limit, float(ceiling))
        self.threshold = min(self.threshold, float(ceiling))
        self._wake()

    async def acquire(self, first: bool = False) -> int:
        """Wait for a slot; returns how many calls were in flight with this one. `first`: served
        before the calls waiting (a retry of a call already begun goes before new cells: it says
        soonest whether a server that timed out is there at all, see stop_rule)."""
        return (await self.acquire_numbered(first))[0]

    async def acquire_numbered(self, first: bool = False) -> tuple[int, int]:
        """`acquire`, with the call's number (1, 2, ... in the order slots were given), for `release`."""
        if not self._waiters and self.active < max(1, int(self.limit)):
            return self._take()
        waiter = asyncio.get_running_loop().create_future()
        if first:
            self._waiters.appendleft(waiter)
        else:
            self._waiters.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # handed a slot, then cancelled: give it back
                self.active -= 1
                self.order.answer(waiter.result()[1], None)
                self._wake()
            else:
                self._waiters.remove(waiter)
            raise

    def _take(self) -> tuple[int, int]:
        self.active += 1
        self.sent += 1
        self.peak = max(self.peak, self.active)
        return self.active, self.sent

    def _wake(self) -> None:
        while self._waiters and self.active < max(1, int(self.limit)):
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(self._take())

    async def release(self, latency_s: float | None, in_flight: int, overloaded: bool, number: int = 0) -> None:
        """`number`: the call's from `acquire_numbered` (0: unnumbered, read at once and may always cut)."""
        self.active -= 1
        sample = (in_flight, latency_s) if latency_s is not None and not overloaded else None
        verdict = self._read(number, sample)
        if overloaded:
            if number == 0 or number > self.cut_after:
                self._cut(0.5)
        elif verdict:  # they wait in the server's queue
            self._cut(0.7, end_slow_start=False)
            self.queue.clear()  # the next verdict reads only answers sent after the cut
            self.verdict = None
        elif latency_s is not None:
            if self.verdict is False and self.limit < self.threshold:
                self.limit = min(self.ceiling, self.limit + 1)
            else:
                self.limit = min(self.ceiling, self.limit + 1 / self.limit)
        self._wake()

    def _read(self, number: int, sample: tuple[int, float] | None) -> bool | None:
        """The queue signal's verdict on the answers readable now in send order, those of calls sent
        after the last cut (one sent before it was deeper); None when none is new."""
        ready = [got for n, got in self.order.answer(number, sample) if n == 0 or n > self.cut_after]
        for n_in_flight, latency in ready:
            self.queue.add(n_in_flight, latency)
        if not ready:
            return None
        self.verdict = self.queue.queued(*ready[-1])
        return self.verdict

    def _cut(self, factor: float, end_slow_start: bool = True) -> None:
        """Overload ends slow start, as in TCP; a queue does not: if the queue was a latency step
        that the slope misread, the limit climbs back as fast as it first rose once fresh answers
        show no slope, and a server that does queue cuts it again at the same depth (without
        evidence either way it grows by one per window only)."""
        self.limit = max(1.0, self.limit * factor)
        if end_slow_start:
            self.threshold = self.limit
        self.cut_after = self.sent


class KeyLimits:
    """Where one provider key's rpm and tpm buckets live, so that every run, process and machine
    using the key shares them: a folder of this machine (the user's state folder), or a PostgreSQL
    database (`limits_url`) for workers on several machines."""

    def __init__(self, endpoint: str, api_key: str, folder: Path, limits_url: str | None = None):
        self.endpoint, self.api_key, self.folder, self.limits_url = endpoint, api_key, folder, limits_url

    BURST_S = 0.5  # under a provider's own bucket (often one second) when two leases' calls arrive together

    def bucket(self, limit: str, per_minute: float) -> LeasedBucket:
        key = bucket_key(self.endpoint, self.api_key, limit)
        if self.limits_url:
            return LeasedBucket(PgQuota(self.limits_url, key, per_minute, self.BURST_S))
        return LeasedBucket(SharedQuota(self.folder / f"{key}.json", per_minute, self.BURST_S))


class RateLimiter:
    """All three limits together; `None` means unlimited."""

    def __init__(
        self,
        rpm: float | None = None,
        tpm: float | None = None,
        max_in_flight: int = 64,
        shared: KeyLimits | None = None,
        concurrency: AdaptiveConcurrency | None = None,
    ):
        """With `shared`, rpm and tpm hold across every run and process that uses the key (without,
        within this limiter only); `concurrency` is the endpoint's controller when the process already has one."""

        def bucket(per_minute: float | None, name: str) -> TokenBucket | LeasedBucket | None:
            if not per_minute:
                return None
            return shared.bucket(name, per_minute) if shared else TokenBucket(per_minute)

        self.requests = bucket(rpm, "requests")
        self.tokens = bucket(tpm, "tokens")
        self.concurrency = concurrency or AdaptiveConcurrency(max_in_flight)
        if concurrency is not None:
            concurrency.set_ceiling(max_in_flight)

    def slot(self, first: bool = False) -> Slot:
        """`async with limiter.slot() as slot:` around one request; tell it how the call went.
        `first`: before the calls waiting (a retry)."""
        return Slot(self.concurrency, first)

    async def admit(self, estimated_tokens: int) -> None:
        """Call inside a slot before each request (each retry too)."""
        if self.requests:
            await self.requests.take(1)
        if self.tokens:
            await self.tokens.take(estimated_tokens)


class Slot:
    """One call's place in flight: records its latency, or that the server was overloaded."""

    def __init__(self, concurrency: AdaptiveConcurrency, first: bool = False):
        self.concurrency, self.first = concurrency, first
        self.latency_s: float | None = None
        self.overloaded = False
        self.in_flight = 0
        self.number = 0

    async def __aenter__(self) -> Slot:
        self.in_flight, self.number = await self.concurrency.acquire_numbered(self.first)
        return self

    async def __aexit__(self, *exc) -> None:
        await self.concurrency.release(self.latency_s, self.in_flight, self.overloaded, self.number)
