"""Rate limits that hold across runs, processes and machines: one token bucket per provider key
and limit (level, stamp; it refills continuously and starts empty, like the in-process buckets of
`ratelimit`), which each process leases in chunks (half a second of quota at most), so the bucket
is touched a few times a second per process instead of once per call.

Where the bucket lives: on one machine, a small file in the user's state folder (`SharedQuota`,
flock), so two runs on one key share it; across machines, a row in PostgreSQL (`PgQuota`, one
`UPDATE ... RETURNING` per lease, on the database's clock).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import threading
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
        state = _read_state(path, os.read(fd, 4096), default)
        result = change(state)
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(state).encode())
        return result
    finally:
        os.close(fd)  # closing releases the lock


def _read_state(path: Path, raw: bytes, default: dict) -> dict:
    """The file's state; a file that is not one (a crash mid-write, an editor, another tool) is
    named once on stderr and started afresh from `default` (written back by the caller)."""
    if not raw:
        return dict(default)
    try:
        state = json.loads(raw)
        if isinstance(state, dict) and all(isinstance(state.get(k), int | float) for k in default):
            return state
    except ValueError:
        pass
    logging.getLogger("rubricflow").warning("%s held no valid state; started it afresh", path)
    return dict(default)


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


STATEMENT_MS = 5000


class PgQuota:
    """One token bucket in a PostgreSQL row (table `rubricflow_quota`, made on first use). The
    password comes from libpq's own PGPASSWORD or ~/.pgpass, never from the URL (it is stored)."""

    def __init__(self, url: str, key: str, per_minute: float, burst_s: float = 1.0):
        import psycopg  # only where a limits database is used

        from rubricflow.warehouse.sqlfiles import sql

        self.key = key
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst_s)
        self.chunk = max(1.0, self.rate * 0.5)
        self._lease_sql = sql("limits_lease.sql")
        self.where = url.split("@")[-1].split("?")[0]
        try:
            # a stalled server fails a statement in 5 s and a dead connection in ~10 s, never hangs the run
            self.con = psycopg.connect(
                url,
                autocommit=True,
                connect_timeout=10,
                options=f"-c statement_timeout={STATEMENT_MS}",
                keepalives=1,
                keepalives_idle=5,
                keepalives_interval=2,
                keepalives_count=3,
            )
            try:
                self.con.execute(sql("limits_table.sql"))
            except psycopg.errors.UniqueViolation:  # another process made the table at the same moment
                pass
            self.con.execute(sql("limits_key.sql"), {"key": key})
        except psycopg.OperationalError as exc:
            from rubricflow.errors import InputError

            raise InputError(f"the rate-limit database {self.where} cannot be used: {str(exc).strip()[:300]}") from None

    def lease(self, wanted: float) -> float:
        """Take up to max(wanted, chunk) from the shared bucket now; returns what was granted."""
        import psycopg

        from rubricflow.errors import TransientError

        params = {"key": self.key, "rate": self.rate, "capacity": self.capacity, "wanted": wanted, "chunk": self.chunk}
        try:
            row = self.con.execute(self._lease_sql, params).fetchone()
        except psycopg.Error as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            raise TransientError(f"the rate-limit database {self.where} stopped answering: {first}") from None
        return float(row[0]) if row else 0.0


def bucket_key(endpoint: str, api_key: str, limit: str) -> str:
    """Names one provider key's bucket for one limit: endpoint (normalised) and a hash of the key, never the key."""
    key_hash = hashlib.sha256(api_key.encode()).hexdigest()
    return hashlib.sha256(f"{same_endpoint(endpoint)}\0{key_hash}\0{limit}".encode()).hexdigest()[:32]


DEFAULT_PORTS = {"http": 80, "https": 443}


def same_endpoint(endpoint: str) -> str:
    """One spelling per endpoint, so one server's limit is one bucket: scheme and host in lower
    case, `localhost` as 127.0.0.1, no default port, no trailing slash (`HTTPS://API.x.com:443/v1/`
    and `https://api.x.com/v1` are one endpoint)."""
    from urllib.parse import urlsplit

    parts = urlsplit(endpoint.strip())
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    host = "127.0.0.1" if host == "localhost" else host
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != DEFAULT_PORTS.get(scheme):
        netloc += f":{port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


def _in_daemon_thread(function: Callable, *args: Any) -> asyncio.Future:
    """`function(*args)` in a daemon thread: a call stuck on a stalled server neither blocks the event
    loop nor keeps the process from exiting (the default executor's threads are joined at exit)."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if not future.done():
            future.set_exception(error) if error else future.set_result(result)

    def run() -> None:
        try:
            outcome: tuple[Any, BaseException | None] = (function(*args), None)
        except BaseException as exc:  # noqa: BLE001  # handed to the awaiting coroutine
            outcome = (None, exc)
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=run, daemon=True, name="rubricflow-lease").start()
    return future


class LeasedBucket:
    """The in-process face of a SharedQuota: spends a local allowance, leases more when short."""

    LEASE_TIMEOUT_S = 15.0  # a store that does not answer in this long (a stalled database) fails the bucket

    def __init__(self, quota: SharedQuota | PgQuota):
        self.quota = quota
        self.allowance = 0.0
        self._lock = asyncio.Lock()
        self.broken: str | None = None

    async def take(self, amount: float = 1.0) -> None:
        async with self._lock:
            while self.allowance < amount:  # off the event loop: a slow store stalls this bucket only
                if isinstance(self.quota, PgQuota):
                    self.allowance += await self._lease_remote(amount - self.allowance)
                else:  # a local file: answers at once
                    self.allowance += self.quota.lease(amount - self.allowance)
                if self.allowance < amount:
                    await asyncio.sleep(min(1.0, (amount - self.allowance) / self.quota.rate))
            self.allowance -= amount

    async def _lease_remote(self, wanted: float) -> float:
        """A lease from the database in a thread, given up after LEASE_TIMEOUT_S (then the bucket
        fails every later take at once: its connection is stuck)."""
        from rubricflow.errors import TransientError

        if self.broken:
            raise TransientError(self.broken)
        try:
            return await asyncio.wait_for(_in_daemon_thread(self.quota.lease, wanted), self.LEASE_TIMEOUT_S)
        except TimeoutError:
            where = getattr(self.quota, "where", "?")
            self.broken = f"the rate-limit database {where} did not answer in {self.LEASE_TIMEOUT_S:g} s"
            raise TransientError(self.broken) from None
