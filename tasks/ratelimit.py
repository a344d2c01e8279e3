"""Requests/min and tokens/min limits, accurate below one second, plus a cap on calls in flight.

A limiter with a 60 s period lets a whole minute's quota out at once and then stalls; these
buckets refill continuously and hold at most `burst_s` seconds of quota, so the rate is smooth.
Buckets start empty: a run never opens with a burst the server would answer with 429s.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Awaitable, Callable

from .lease import LeasedBucket, SharedQuota


class TokenBucket:
    """`clock` and `sleep` are the real ones except in tests, which drive the bucket on a fake clock."""

    def __init__(self, per_minute: float, burst_s: float = 1.0, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
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


class RateLimiter:
    """All three limits together; `None` means unlimited."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None, max_in_flight: int = 64,
                 shared: Path | None = None):
        """With `shared` (a folder), rpm and tpm hold across every process that uses the folder."""
        def bucket(per_minute: float | None, name: str):
            if not per_minute:
                return None
            return LeasedBucket(SharedQuota(shared / f"{name}.json", per_minute)) if shared else TokenBucket(per_minute)
        self.requests = bucket(rpm, "requests")
        self.tokens = bucket(tpm, "tokens")
        self.in_flight = asyncio.Semaphore(max_in_flight)

    async def __aenter__(self) -> "RateLimiter":
        await self.in_flight.acquire()
        return self

    async def __aexit__(self, *exc) -> None:
        self.in_flight.release()

    async def admit(self, estimated_tokens: int) -> None:
        """Call inside `async with limiter:` before each request (each retry too)."""
        if self.requests:
            await self.requests.take(1)
        if self.tokens:
            await self.tokens.take(estimated_tokens)
