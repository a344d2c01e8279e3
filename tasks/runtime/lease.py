"""Rate limits that hold across processes: the quota lives in a small file, and each process
leases it in chunks (half a second of quota at most), so the file is touched a few times a second
per process instead of once per call. The file holds one token bucket (level, stamp) that refills
continuously and starts empty, like the in-process buckets of `ratelimit`.

Processes on one machine (a local Dask cluster) share the file through the run's folder; workers
on several machines need that folder on a shared filesystem that honours flock.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def update_locked(path: Path, default: dict, change: Callable[[dict], Any]) -> Any:
    """Read a small JSON state file under an exclusive flock, let `change` edit the state in place,
    write it back, and return what `change` returned. Every process of a run shares state this way."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        raw = os.read(fd, 4096)
        state = json.loads(raw) if raw else dict(default)
        result = change(state)
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(state).encode())
        return result
    finally:
        os.close(fd)  # closing releases the lock


class SharedQuota:
    """One token bucket in a file; `clock` is wall time (shared by processes) except in tests."""

    def __init__(
        self, path: str | Path, per_minute: float, burst_s: float = 1.0, clock: Callable[[], float] = time.time
    ):
        self.path = Path(path)
        self.clock = clock
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst_s)
        self.chunk = max(1.0, self.rate * 0.5)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def lease(self, wanted: float) -> float:
        """Take up to max(wanted, chunk) from the shared bucket now; returns what was granted."""

        def take(state: dict) -> float:
            now = self.clock()
            level = min(self.capacity, state["level"] + max(0.0, now - state["stamp"]) * self.rate)
            granted = max(0.0, min(level, max(wanted, self.chunk)))
            state.update(level=level - granted, stamp=now)
            return granted

        return update_locked(self.path, {"level": 0.0, "stamp": self.clock()}, take)


class LeasedBucket:
    """The in-process face of a SharedQuota: spends a local allowance, leases more when short."""

    def __init__(self, quota: SharedQuota):
        self.quota = quota
        self.allowance = 0.0
        self._lock = asyncio.Lock()

    async def take(self, amount: float = 1.0) -> None:
        async with self._lock:
            while self.allowance < amount:
                self.allowance += self.quota.lease(amount - self.allowance)
                if self.allowance < amount:
                    await asyncio.sleep(min(1.0, (amount - self.allowance) / self.quota.rate))
            self.allowance -= amount
