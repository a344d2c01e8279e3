"""Bench: the reward server (#55) against the offline judge, each figure next to a baseline
measured in the same run.

    python bench/reward.py [--rollouts 4000] [--concurrency 64] [--in-flight 512] [--latency-rollouts 2048]

1. pointwise: judge calls/s of the server (one call per rollout, requests of 8 rollouts) over the
   calls/s of a bare AsyncOpenAI loop making the same calls at the same concurrency (target >= 0.9);
2. group: rewards/s of listwise groups of 8 (one call per group) over pointwise rewards/s (>= 4);
3. against a judge that takes 200 ms: 2,048 rollouts scored (target <= 5 s), then the server's
   addition at p99 with 512 requests in flight (target <= 25 ms): one client (raw aiohttp, the same
   both ways, so its own CPU cancels) keeps 512 requests in flight, each sent as the last answer
   comes, first to the judge directly (the server's judge request for each rollout), then to the
   server (one rollout a request); the first 512 answers of each (connections opened) are not
   counted. The p99 of the server's latencies less the judge's is what the server adds. (A burst of
   512 sent once, each arm through its own client, measured the drain of one queue and the bare
   AsyncOpenAI client's CPU: the server "added" -2.3 s);
   the 2,048-rollout phase also prints where the server's wall time went (on a CPU, runnable but
   waiting for one, waiting for answers; Linux schedstat): on a loaded machine it is CPU-bound at
   the share it gets (load 15 on 2 cores: 12 of 17.6 s waiting for a CPU, 1.2 s for answers),
   not held back by the concurrency controller (pinned at its ceiling of 512, the phase was no faster);
4. a repeated rollout: answered from the cache, the judge's request count unchanged.
The judge (`rubricflow judge-server`) and the reward server run in processes of their own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import signal
import subprocess
import sys
import time

from common import Server, write_corpus

GROUP = 8


class RewardServer:
    """`rubricflow reward-server` in its own process, judging with the judge at `base_url`."""

    def __init__(self, base_url: str, in_flight: int):
        exe = shutil.which("rubricflow") or sys.exit("install the project first: pip install -e .")
        self.proc = subprocess.Popen(
            [exe, "reward-server", "--port", "0", "-r", "llm-slop", "--base-url", base_url, "--strategy", "holistic",
             "--max-in-flight", str(in_flight)],
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        self.url = self.proc.stdout.readline().split(" on ", 1)[1].split(" ", 1)[0]
        from rubricflow.api_reward import server_secret

        self.headers = {"Authorization": f"Bearer {server_secret()}"}

    def __enter__(self) -> RewardServer:
        return self

    def __exit__(self, *exc) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # still answering what a cut-off phase left in flight
            self.proc.kill()
            self.proc.wait(timeout=10)


def texts(n: int, tag: str) -> list[str]:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        corpus = write_corpus(Path(folder) / "c.jsonl", n)
        return [f"{json.loads(line)['text']} ({tag})" for line in corpus.read_text().splitlines()]


async def bare_loop(base_url: str, batch: list[str], concurrency: int) -> tuple[float, list[float]]:
    """Calls/s and each call's latency of a plain AsyncOpenAI loop sending the server's prompts."""
    from openai import AsyncOpenAI

    from rubricflow.rubrics.library import Library
    from rubricflow.rubrics.render import call_units, output_schema, render_system_prompt, render_user_message

    rubric = Library().bundle("llm-slop").rubric
    unit = call_units(rubric, "holistic")[0]
    system, schema = render_system_prompt(rubric, unit), output_schema(rubric, unit)
    fmt = {"type": "json_schema", "json_schema": {"name": "j", "schema": schema, "strict": True}}
    client = AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0, timeout=600.0)  # connect too: 512 at once
    gate, latencies = asyncio.Semaphore(concurrency), []

    async def one(text: str) -> None:
        async with gate:
            t = time.perf_counter()
            messages = [{"role": "system", "content": system}, {"role": "user", "content": render_user_message(text)}]
            await client.chat.completions.create(model="m", messages=messages, temperature=0, response_format=fmt)
            latencies.append(time.perf_counter() - t)

    t = time.perf_counter()
    await asyncio.gather(*(one(x) for x in batch))
    elapsed = time.perf_counter() - t
    await client.close()
    return len(batch) / elapsed, latencies


async def through_server(
    server: RewardServer, requests: list[dict], concurrency: int
) -> tuple[float, list[float], list]:
    """Seconds, each request's latency, and the answers, for `requests` sent `concurrency` at a time."""
    import aiohttp

    gate, latencies, answers = asyncio.Semaphore(concurrency), [], []
    timeout = aiohttp.ClientTimeout(total=None)  # a loaded machine's slow phase is measured, not cut off
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0), headers=server.headers, timeout=timeout
    ) as session:

        async def one(body: dict) -> None:
            async with gate:
                t = time.perf_counter()
                async with session.post(server.url + "/v1/rewards", json=body) as answer:
                    payload = await answer.json()
                    if answer.status != 200:
                        raise SystemExit(f"reward server answered {answer.status}: {payload}")
                latencies.append(time.perf_counter() - t)
                answers.append(payload)

        t = time.perf_counter()
        await asyncio.gather(*(one(b) for b in requests))
        return time.perf_counter() - t, latencies, answers


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far (Linux /proc)."""
    import os

    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_floor(n: int, judge_s: float, server_s: float) -> str:
    """What the phase's CPU alone allows on this machine: each process runs on one core at most
    (one interpreter each), and the two together on all of them."""
    import os

    floor = max(judge_s, server_s, (judge_s + server_s) / (os.cpu_count() or 1))
    return (
        f"CPU per rollout: server {1000 * server_s / n:.1f} ms, judge {1000 * judge_s / n:.1f} ms: "
        f"on {os.cpu_count()} idle cores the phase cannot take less than {floor:.2f} s"
    )


def sched_s(pid: int) -> tuple[float, float]:
    """Seconds process `pid`'s threads ran on a CPU and waited, runnable, for one (Linux schedstat);
    zeros where the kernel keeps no schedstat."""
    import os

    ran = waited = 0.0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            on_cpu, on_queue = open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[:2]
        except (FileNotFoundError, ValueError):  # a thread gone since, or no schedstat
            continue
        ran, waited = ran + int(on_cpu) / 1e9, waited + int(on_queue) / 1e9
    return ran, waited


def cpu_share(took: float, before: tuple[float, float], after: tuple[float, float]) -> str:
    """Where the server's wall time went: on a CPU, runnable but waiting for one (the machine's
    other load: a loaded machine's phase is CPU-bound at the share it gets, not held back by the
    concurrency controller, which a slow phase suggests first), or waiting for answers."""
    ran, waited = after[0] - before[0], after[1] - before[1]
    return (
        f"server's {took:.2f} s: on a CPU {ran:.2f} s, waiting for a CPU {waited:.2f} s (other load), "
        f"the rest {max(took - ran - waited, 0):.2f} s waiting for answers; "
        f"without the wait for a CPU about {max(took - waited, 0):.2f} s"
    )


def load() -> str:
    """The machine's 1-minute load average: a shared machine's figures are read next to it."""
    import os

    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[int(0.99 * (len(ordered) - 1))]


def chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def set_latency(judge: Server, ms: float) -> None:
    import urllib.request

    url = judge.base_url.removesuffix("/v1") + "/latency"
    urllib.request.urlopen(urllib.request.Request(url, data=json.dumps({"ms": ms}).encode()), timeout=10).read()


def rates(judge: Server, server: RewardServer, n: int, c: int) -> None:
    """Phases 1 and 2: pointwise calls/s over the bare loop's, listwise groups over pointwise; each
    phase's CPU a reward too (judge + server), what the group ratio is where the CPU is the limit."""
    print(f"start: {load()}")
    bare_rate, _ = asyncio.run(bare_loop(judge.base_url, texts(n, "bare"), c))
    print(f"bare AsyncOpenAI loop: {bare_rate:,.0f} calls/s ({n} calls, {c} in flight)")
    before, spent = judge.stats()["answered"], both_cpu(judge, server)
    bodies = [{"rollouts": part} for part in chunks(texts(n, "pointwise"), GROUP)]
    took, _, _ = asyncio.run(through_server(server, bodies, max(1, c // GROUP)))
    calls, point_cpu = judge.stats()["answered"] - before, both_cpu(judge, server) - spent
    point_rate = calls / took
    print(f"server pointwise: {point_rate:,.0f} calls/s, {n / took:,.0f} rewards/s ({calls} calls)")
    print(f"ratio pointwise / bare loop (calls/s): {point_rate / bare_rate:.2f} (target >= 0.9)")

    spent = both_cpu(judge, server)
    bodies = [{"rollouts": part, "mode": "listwise", "swap": False} for part in chunks(texts(n, "group"), GROUP)]
    took, _, _ = asyncio.run(through_server(server, bodies, c))
    group_rate, group_cpu = n / took, both_cpu(judge, server) - spent
    print(f"server listwise groups of {GROUP}: {group_rate:,.0f} rewards/s")
    print(f"ratio group / pointwise (rewards/s): {group_rate / (n / (calls / point_rate)):.2f} (target >= 4; {load()})")
    print(
        f"CPU a reward, judge + server: pointwise {1000 * point_cpu / n:.2f} ms, group {1000 * group_cpu / n:.2f} ms "
        f"(ratio {point_cpu / max(group_cpu, 1e-9):.2f})"
    )


def latencies(judge: Server, server: RewardServer, m: int, k: int) -> None:
    """Phase 3, against a 200 ms judge: `m` rollouts' wall time, then the p99 at `k` in flight."""
    set_latency(judge, 200)
    bodies = [{"rollouts": part} for part in chunks(texts(m, "slow"), 32)]
    judge_cpu, server_cpu, scheduled = cpu_s(judge.proc.pid), cpu_s(server.proc.pid), sched_s(server.proc.pid)
    took, _, _ = asyncio.run(through_server(server, bodies, len(bodies)))
    print(f"{m} rollouts against a 200 ms judge: {took:.2f} s (target <= 5 s; {load()})")
    print(cpu_floor(m, cpu_s(judge.proc.pid) - judge_cpu, cpu_s(server.proc.pid) - server_cpu))
    print(cpu_share(took, scheduled, sched_s(server.proc.pid)))
    added_at(judge, server, k)
    set_latency(judge, 0)


def added_at(judge: Server, server: RewardServer, k: int) -> None:
    """The server's addition at p99 with `k` requests in flight: the same client keeps `k` in
    flight to the judge directly, then to the server, 4k requests each, the first k not counted."""
    import orjson

    n = 4 * k
    direct_url, direct_bodies = judge.base_url + "/chat/completions", judge_requests(texts(n, "p99-direct"))
    direct, direct_rate = asyncio.run(closed_loop(direct_url, {"Authorization": "Bearer x"}, direct_bodies, k))
    server_cpu = cpu_s(server.proc.pid)
    rewards = [orjson.dumps({"rollouts": [x]}) for x in texts(n, "p99")]
    served, served_rate = asyncio.run(closed_loop(server.url + "/v1/rewards", server.headers, rewards, k))
    per_request = (cpu_s(server.proc.pid) - server_cpu) / n
    print(
        f"p99 with {k} in flight ({n - k} answers each, one client): server {p99(served) * 1000:.0f} ms "
        f"({served_rate:,.0f}/s), judge directly {p99(direct) * 1000:.0f} ms ({direct_rate:,.0f}/s)"
    )
    print(f"server's added p99 latency: {(p99(served) - p99(direct)) * 1000:.1f} ms (target <= 25 ms; {load()})")
    print(
        f"server CPU a request: {1000 * per_request:.2f} ms: one core answers at most {1 / per_request:,.0f}/s, "
        f"so {k} in flight wait >= {k * per_request:.2f} s each (Little's law)"
    )


def judge_requests(batch: list[str]) -> list[bytes]:
    """The chat request the server sends the judge for each rollout (the bare loop's), encoded."""
    import orjson

    from rubricflow.rubrics.library import Library
    from rubricflow.rubrics.render import call_units, output_schema, render_system_prompt, render_user_message

    rubric = Library().bundle("llm-slop").rubric
    unit = call_units(rubric, "holistic")[0]
    system, schema = render_system_prompt(rubric, unit), output_schema(rubric, unit)
    fmt = {"type": "json_schema", "json_schema": {"name": "j", "schema": schema, "strict": True}}
    return [
        orjson.dumps(
            {
                "model": "m",
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": render_user_message(x)},
                ],
                "temperature": 0,
                "response_format": fmt,
            }
        )
        for x in batch
    ]


async def closed_loop(url: str, headers: dict, payloads: list[bytes], k: int) -> tuple[list[float], float]:
    """Latencies and answers/s with `k` requests kept in flight (each worker sends its next as its
    last is answered) until `payloads` are all sent; the first `k` answers (each connection's first,
    opened while the others queue) are not counted."""
    import aiohttp

    pending, done = iter(payloads), []
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None)  # a loaded machine's slow phase is measured, not cut off
    async with aiohttp.ClientSession(connector=connector, headers=headers, timeout=timeout) as session:

        async def worker() -> None:
            for body in pending:  # one iterator shared by the workers: each takes the next
                t = time.perf_counter()
                async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as answer:
                    await answer.read()
                    if answer.status != 200:
                        raise SystemExit(f"{url} answered {answer.status}: {(await answer.text())[:200]}")
                done.append((time.perf_counter(), time.perf_counter() - t))

        await asyncio.gather(*(worker() for _ in range(k)))
    counted = done[k:]
    return [latency for _, latency in counted], len(counted) / max(counted[-1][0] - done[k - 1][0], 1e-9)


def both_cpu(judge: Server, server: RewardServer) -> float:
    return cpu_s(judge.proc.pid) + cpu_s(server.proc.pid)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rollouts", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--in-flight", type=int, default=512)
    parser.add_argument("--latency-rollouts", type=int, default=2048)
    args = parser.parse_args()
    n, c = args.rollouts, args.concurrency
    with Server() as judge, RewardServer(judge.base_url, max(c, args.in_flight)) as server:
        asyncio.run(through_server(server, [{"rollouts": texts(16, "warm-up")}], 1))  # engine built, imports done
        rates(judge, server, n, c)
        latencies(judge, server, args.latency_rollouts, args.in_flight)
        before = judge.stats()["answered"]
        _, _, [answer] = asyncio.run(through_server(server, [{"rollouts": texts(1, "pointwise")}], 1))
        print(
            f"repeated rollout: cached={answer['results'][0]['cached']}, "
            f"judge calls for it: {judge.stats()['answered'] - before}"
        )


if __name__ == "__main__":
    main()
