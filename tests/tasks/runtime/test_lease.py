"""Rate limits shared by processes: the file-backed bucket grants no more than its rate allows,
however many holders lease from it, and its state survives concurrent processes (flock)."""

import asyncio
import os
import subprocess
import sys

import pytest

from rubricflow.tasks.runtime.lease import LeasedBucket, SharedQuota, update_locked


class Clock:
    def __init__(self) -> None:
        self.now = 5000.0

    def __call__(self) -> float:
        return self.now


def test_two_holders_share_one_rate(tmp_path):
    clock = Clock()
    a = SharedQuota(tmp_path / "q.json", 600, clock=clock)  # 10/s; two holders, one file
    b = SharedQuota(tmp_path / "q.json", 600, clock=clock)
    granted = 0.0
    for _ in range(100):  # 10 seconds in 0.1 s steps, both asking for much more than their share
        clock.now += 0.1
        granted += a.lease(50) + b.lease(50)
    assert granted == pytest.approx(100.0, abs=1.0)  # 10 s x 10/s, whoever asked


def test_a_lease_starts_empty_and_caps_at_capacity(tmp_path):
    clock = Clock()
    q = SharedQuota(tmp_path / "q.json", 600, clock=clock)
    assert q.lease(5) == 0.0  # nothing saved up at the start
    clock.now += 3600
    assert q.lease(100) == pytest.approx(10.0)  # one second of quota at most


def test_leased_bucket_waits_for_quota(tmp_path):
    clock = Clock()
    quota = SharedQuota(tmp_path / "q.json", 6000, clock=clock)  # 100/s
    bucket = LeasedBucket(quota)

    async def scenario() -> None:
        async def advance() -> None:  # wall time moves while the bucket waits
            for _ in range(200):
                await asyncio.sleep(0.001)
                clock.now += 0.01

        mover = asyncio.create_task(advance())
        for _ in range(50):
            await bucket.take(1)
        mover.cancel()

    start = clock.now
    asyncio.run(scenario())
    assert clock.now - start >= 0.49  # 50 requests at 100/s need half a second of quota


INCREMENT = """
import sys
from rubricflow.tasks.runtime.lease import update_locked

def add(state):
    state["n"] += 1

for _ in range(int(sys.argv[2])):
    update_locked(sys.argv[1], {"n": 0}, add)
"""


def test_state_updates_from_several_processes_are_not_lost(tmp_path):
    path = tmp_path / "counter.json"
    procs = [
        subprocess.Popen([sys.executable, "-c", INCREMENT, str(path), "200"], stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    assert update_locked(path, {"n": 0}, lambda s: s["n"]) == 800
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o600)


def test_a_providers_key_has_one_bucket_per_limit_named_without_the_key(tmp_path):
    from rubricflow.tasks.judging.ratelimit import KeyLimits

    url = "https://api.example.com/v1"
    one = KeyLimits(url, "sk-secret-1", tmp_path).bucket("requests", 600)
    same = KeyLimits(url, "sk-secret-1", tmp_path).bucket("requests", 600)  # another run on the same key
    other = KeyLimits(url, "sk-secret-2", tmp_path).bucket("requests", 600)
    tokens = KeyLimits(url, "sk-secret-1", tmp_path).bucket("tokens", 600)
    assert one.quota.path == same.quota.path
    assert len({one.quota.path, other.quota.path, tokens.quota.path}) == 3
    assert "sk-secret" not in " ".join(str(p) for p in tmp_path.rglob("*"))
