"""The reward cache: one rollout judged under one rubric and judge is bought once. A key is the
rubric's content hash, the judge's settings hash, how the rollout was read (its view) and the
rollout's text, input and context; a rollout asked for again while its first call is in flight waits
on that call, never sends a second. Kept in memory, the least recently used dropped past `size`."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from typing import Any


def reward_key(rubric_hash: str, judge_hash: str, *parts: str | None) -> str:
    """The cache key of one rollout's reward."""
    return hashlib.sha256(json.dumps([rubric_hash, judge_hash, *parts]).encode()).hexdigest()


class RewardCache:
    def __init__(self, size: int = 200_000):
        self.size = size
        self.done: OrderedDict[str, Any] = OrderedDict()
        self.pending: dict[str, asyncio.Future] = {}
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> Any | None:
        """The reward stored under `key` (a hit is counted), else None."""
        if key in self.done:
            self.done.move_to_end(key)
            self.hits += 1
            return self.done[key]
        return None

    def waiting(self, key: str) -> asyncio.Future | None:
        """The future of `key`'s call now in flight, if one is (a hit: no second call)."""
        future = self.pending.get(key)
        if future is not None:
            self.hits += 1
        return future

    def claim(self, key: str) -> asyncio.Future:
        """Mark `key` as being bought: later askers wait on the returned future."""
        self.misses += 1
        future = asyncio.get_running_loop().create_future()
        self.pending[key] = future
        return future

    def settle(self, key: str, value: Any) -> None:
        """The call for `key` was answered: its waiters get `value`, and it is kept."""
        future = self.pending.pop(key, None)
        if future is not None and not future.done():
            future.set_result(value)
        self.done[key] = value
        while len(self.done) > self.size:
            self.done.popitem(last=False)

    def drop(self, key: str, value: Any) -> None:
        """The call for `key` was answered without a reward: its waiters get the same answer (its
        errors, as its first asker does: they heard a 502), and nothing is kept (asked again, it is bought)."""
        future = self.pending.pop(key, None)
        if future is not None and not future.done():
            future.set_result(value)

    def fail(self, key: str, exc: BaseException) -> None:
        """The call for `key` failed: its waiters hear why, and nothing is kept (asked again, it is bought)."""
        future = self.pending.pop(key, None)
        if future is not None and not future.done():
            future.set_exception(exc)
            future.add_done_callback(lambda f: f.exception())  # no waiter: nothing to report

    def stats(self) -> dict[str, int]:
        return {"size": len(self.done), "in_flight": len(self.pending), "hits": self.hits, "misses": self.misses}
