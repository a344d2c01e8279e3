"""Bench: the reward server (#55) against the offline judge, each figure next to a baseline
measured in the same run.

    python bench/reward.py [--rollouts 4000] [--concurrency 64] [--in-flight 512] [--latency-rollouts 2048]
                           [--p99-judge-ms 1000] [--rounds 4]

The arms of each ratio (phases 1 and 2; the p99 phase's judge-directly and server) run interleaved
in `--rounds` rounds and are pooled: a machine's speed drifts within a run (on a shared VM the CPU
time of the same work varied ~1.6x between phases a minute apart, and a ratio of two phases run
once each swung 3.0-5.1 between runs), so each arm meets the drift alike.

1. pointwise: judge calls/s of the server (one call per rollout, requests of 8 rollouts) over the
   calls/s of a bare AsyncOpenAI loop making the same calls at the same concurrency (target >= 0.9);
2. group: rewards/s of listwise groups of 8 (one call per group) over pointwise rewards/s (>= 4).
   Each arm answers as many requests a round for each it keeps in flight (pointwise: n/8 requests,
   8 in flight; groups: 8n/8, 64 in flight), so the fill and the drain weigh alike in both: with the
   same n rollouts, a group round was two waves of 64 requests, and the arm was measured at 1.4 of
   the 1.8 busy cores it keeps at steady state (2,527 against 3,500-4,150 rewards/s);
3. against a judge that takes 200 ms: 2,048 rollouts scored (target <= 5 s); it also prints where
   the server's wall time went (on a CPU, runnable but waiting for one, waiting for answers; Linux
   schedstat): on a loaded machine it is CPU-bound at the share it gets (load 15 on 2 cores: 12 of
   17.6 s waiting for a CPU, 1.2 s for answers), not held back by the concurrency controller
   (pinned at its ceiling of 512, the phase was no faster);
   then the server's addition at p99 with 512 requests in flight (target <= 25 ms), against a judge
   that takes `--p99-judge-ms` (1,000): one client (raw aiohttp, the same both ways, so its own CPU
   cancels) keeps 512 requests in flight, each sent as the last answer comes, to the judge directly
   (the server's judge request for each rollout) and to the server (one rollout a request) in turn,
   3 x 512 requests each a round; the first 512 answers of each (connections opened) are not
   counted. The p99 of the server's latencies less the judge's is what the server adds. A first
   round of each arm is not pooled, and its addition is printed on its own: in it the server's
   concurrency controller opens from where it stood to 512 (slow start, doubling a round trip: ~6 s
   from 8 against a 1 s judge), once for the life of the process, which a training loop's hours
   never see again and a bench of 6,000 answers would count at p99. The judge's latency is one at
   which the offline judge sets no pace: 512 in flight at 1 s ask 512 answers/s, within what it
   answers on its own core. At 200 ms they ask 2,560/s, past what the offline judge answers on this
   2-core machine at all (~1,500/s directly), and the phase measured how three CPU-bound processes
   share two cores (Little's law, printed as the server's CPU a request) rather than what the
   server adds to a request: +55 to +191 ms in earlier runs. (A burst of 512 sent once, each arm
   through its own client, measured the drain of one queue and the bare AsyncOpenAI client's CPU:
   the server "added" -2.3 s);
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
from dataclasses import dataclass, field
from typing import Any

import orjson
from common import Server, write_corpus

GROUP = 8
JSON = {"Content-Type": "application/json"}


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


def run(coro: Any) -> Any:
    """`coro` on uvloop, as the server and the judge run (asyncio's own loop cost the client ~2x the
    CPU a request, taken from the same two cores), else on asyncio's."""
    try:
        import uvloop
    except ImportError:  # Windows
        return asyncio.run(coro)
    return uvloop.run(coro)


def texts(n: int, tag: str) -> list[str]:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        corpus = write_corpus(Path(folder) / "c.jsonl", n)
        return [f"{json.loads(line)['text']} ({tag})" for line in corpus.read_text().splitlines()]


def bare_client(base_url: str) -> Any:
    """A plain AsyncOpenAI client (no retries), kept over the rounds as a training loop keeps one."""
    from openai import AsyncOpenAI

    return AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0, timeout=600.0)  # connect too: 512 at once


async def bare_loop(client: Any, batch: list[str], concurrency: int) -> tuple[float, list[float]]:
    """Calls/s and each call's latency of a plain AsyncOpenAI loop sending the server's prompts."""
    from rubricflow.rubrics.library import Library
    from rubricflow.rubrics.render import call_units, output_schema, render_system_prompt, render_user_message

    rubric = Library().bundle("llm-slop").rubric
    unit = call_units(rubric, "holistic")[0]
    system, schema = render_system_prompt(rubric, unit), output_schema(rubric, unit)
    fmt = {"type": "json_schema", "json_schema": {"name": "j", "schema": schema, "strict": True}}
    gate, latencies = asyncio.Semaphore(concurrency), []

    async def one(text: str) -> None:
        async with gate:
            t = time.perf_counter()
            messages = [{"role": "system", "content": system}, {"role": "user", "content": render_user_message(text)}]
            await client.chat.completions.create(model="m", messages=messages, temperature=0, response_format=fmt)
            latencies.append(time.perf_counter() - t)

    t = time.perf_counter()
    await asyncio.gather(*(one(x) for x in batch))
    return len(batch) / (time.perf_counter() - t), latencies


def server_session(server: RewardServer) -> Any:
    """An aiohttp session to the reward server: no connection limit, no total timeout (a loaded
    machine's slow phase is measured, not cut off)."""
    import aiohttp

    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0), headers=server.headers, timeout=aiohttp.ClientTimeout(total=None)
    )


async def through_server(
    server: RewardServer, requests: list[dict], concurrency: int, session: Any = None
) -> tuple[float, list[float], list]:
    """Seconds, each request's latency, and the answers, for `requests` sent `concurrency` at a time
    (through `session`, or a session of their own)."""
    if session is None:
        async with server_session(server) as own:
            return await through_server(server, requests, concurrency, own)
    gate, latencies, answers = asyncio.Semaphore(concurrency), [], []

    async def one(body: bytes) -> None:
        async with gate:
            t = time.perf_counter()
            async with session.post(server.url + "/v1/rewards", data=body, headers=JSON) as answer:
                payload = orjson.loads(await answer.read())
                if answer.status != 200:
                    raise SystemExit(f"reward server answered {answer.status}: {payload}")
            latencies.append(time.perf_counter() - t)
            answers.append(payload)

    bodies = [
        orjson.dumps(r) for r in requests
    ]  # encoded before the clock starts, by orjson: the client's CPU is not the server's
    t = time.perf_counter()
    await asyncio.gather(*(one(b) for b in bodies))
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


def set_latency(judge: Server, ms: float, jitter_ms: float = 0.0) -> None:
    """The judge's answers take `ms`, plus up to `jitter_ms` more (a hash of the request)."""
    import urllib.request

    url = judge.base_url.removesuffix("/v1") + "/latency"
    switch = json.dumps({"ms": ms, "jitter_ms": jitter_ms}).encode()
    urllib.request.urlopen(urllib.request.Request(url, data=switch), timeout=10).read()


@dataclass
class Arm:
    """One arm's totals over the rounds: units (calls or rewards), rewards, seconds, CPU seconds."""

    units: int = 0
    rewards: int = 0
    seconds: float = 0.0
    judge: float = 0.0  # CPU seconds of the judge, the reward server and this process (the client)
    server: float = 0.0
    client: float = 0.0

    def add(
        self, units: int, seconds: float, cpu: tuple[float, float, float] = (0.0, 0.0, 0.0), rewards: int = 0
    ) -> None:
        self.units, self.rewards, self.seconds = (
            self.units + units,
            self.rewards + (rewards or units),
            self.seconds + seconds,
        )
        self.judge, self.server, self.client = (
            a + b for a, b in zip((self.judge, self.server, self.client), cpu, strict=True)
        )

    @property
    def cpu(self) -> float:
        return self.judge + self.server

    def cpu_line(self) -> str:
        n = max(self.rewards, 1)
        return (
            f"{1000 * self.cpu / n:.2f} ms (judge {1000 * self.judge / n:.2f}, "
            f"server {1000 * self.server / n:.2f}; the client {1000 * self.client / n:.2f})"
        )

    @property
    def rate(self) -> float:
        return self.units / max(self.seconds, 1e-9)


def rates(judge: Server, server: RewardServer, n: int, c: int, rounds: int) -> None:
    """Phases 1 and 2 in `rounds` interleaved rounds (bare loop, server pointwise, server groups, each
    on texts of its own so no round hits the cache), each client kept open over them as a training
    loop keeps its own (connections opened once, by a warm-up round not counted): pointwise calls/s
    over the bare loop's, groups' rewards/s over pointwise; each arm's CPU a reward too (judge +
    server), what the group ratio is where the CPU is the limit. A machine's speed drifts within a
    run (a VM's CPU time for the same work varied ~1.6x between phases a minute apart):
    interleaved, every arm meets the drift alike."""
    print(f"start: {load()}")
    bare, point, group = run(_rounds(judge, server, max(GROUP, n // rounds), c, rounds))
    print(f"bare AsyncOpenAI loop: {bare.rate:,.0f} calls/s ({bare.units} calls, {c} in flight, {rounds} rounds)")
    point_rewards = point.rewards / point.seconds
    print(f"server pointwise: {point.rate:,.0f} calls/s, {point_rewards:,.0f} rewards/s ({point.units} calls)")
    print(f"ratio pointwise / bare loop (calls/s): {point.rate / bare.rate:.2f} (target >= 0.9)")
    print(f"server listwise groups of {GROUP}: {group.rate:,.0f} rewards/s")
    print(f"ratio group / pointwise (rewards/s): {group.rate / point_rewards:.2f} (target >= 4; {load()})")
    print(f"CPU a reward, judge + server: pointwise {point.cpu_line()}, group {group.cpu_line()}")
    print(
        f"ratio of that CPU, pointwise / group: {point.cpu / point.rewards / max(group.cpu / group.rewards, 1e-9):.2f}"
    )


async def _rounds(judge: Server, server: RewardServer, m: int, c: int, rounds: int) -> tuple[Arm, Arm, Arm]:
    """The three arms' totals over `rounds` rounds of `m` rollouts each (round -1: the warm-up)."""
    bare, point, group = Arm(), Arm(), Arm()
    client = bare_client(judge.base_url)
    async with server_session(server) as session:
        for r in range(-1, rounds):
            size = min(c * GROUP, m) if r < 0 else m  # the warm-up: enough to open the connections
            rate, _ = await bare_loop(client, texts(size, f"bare-{r}"), c)
            bodies = [{"rollouts": part} for part in chunks(texts(size, f"pointwise-{r}"), GROUP)]
            before, spent = judge.stats()["answered"], cpus(judge, server)  # the texts made: not the client's CPU
            took, _, _ = await through_server(server, bodies, max(1, c // GROUP), session)
            calls, point_cpu = judge.stats()["answered"] - before, since(spent, judge, server)
            parts = chunks(texts(GROUP * size, f"group-{r}"), GROUP)
            listwise = [{"rollouts": part, "mode": "listwise", "swap": False} for part in parts]
            spent = cpus(judge, server)
            group_took, _, _ = await through_server(server, listwise, c, session)
            if r >= 0:
                bare.add(size, size / rate)
                point.add(calls, took, point_cpu, rewards=size)
                group.add(GROUP * size, group_took, since(spent, judge, server))
    await client.close()
    return bare, point, group


def latencies(judge: Server, server: RewardServer, m: int, k: int, rounds: int, p99_ms: float) -> None:
    """Phase 3: `m` rollouts' wall time against a 200 ms judge, then the p99 at `k` in flight
    against a `p99_ms` one."""
    set_latency(judge, 200)
    bodies = [{"rollouts": part} for part in chunks(texts(m, "slow"), 32)]
    judge_cpu, server_cpu, scheduled = cpu_s(judge.proc.pid), cpu_s(server.proc.pid), sched_s(server.proc.pid)
    took, _, _ = run(through_server(server, bodies, len(bodies)))
    print(f"{m} rollouts against a 200 ms judge: {took:.2f} s (target <= 5 s; {load()})")
    print(cpu_floor(m, cpu_s(judge.proc.pid) - judge_cpu, cpu_s(server.proc.pid) - server_cpu))
    print(cpu_share(took, scheduled, sched_s(server.proc.pid)))
    set_latency(judge, p99_ms / 2, p99_ms)  # 0.5 to 1.5 times p99_ms, p99_ms on average
    added_at(judge, server, k, rounds, p99_ms)
    set_latency(judge, 0)


def added_at(judge: Server, server: RewardServer, k: int, rounds: int, judge_ms: float) -> None:
    """The server's addition at p99 with `k` requests in flight: the same client keeps `k` in flight
    to the judge directly, then to the server, 3k requests each a round, the arms interleaved over
    `rounds` rounds after a first one (connections opened, the controller opening) and each arm's
    latencies pooled."""
    direct, served, server_cpu = run(_added_rounds(judge, server, k, rounds))
    per_request = server_cpu / (3 * k * rounds)
    print(
        f"p99 with {k} in flight against a judge of {judge_ms / 2:,.0f}-{1.5 * judge_ms:,.0f} ms ({len(served.latencies)} "
        f"answers each, one client, {rounds} rounds): server {p99(served.latencies) * 1000:.0f} ms ({served.rate:,.0f}/s), "
        f"judge directly {p99(direct.latencies) * 1000:.0f} ms ({direct.rate:,.0f}/s)"
    )
    added = p99(served.latencies) - p99(direct.latencies)
    print(f"server's added p99 latency: {added * 1000:.1f} ms (target <= 25 ms; {load()})")
    burst = p99(served.opening) - p99(direct.opening)
    print(
        f"each round's opening burst ({k} sent at once, not pooled above): the server added {burst * 1000:.0f} ms at p99"
    )
    print(
        f"server CPU a request: {1000 * per_request:.2f} ms: one core answers at most {1 / per_request:,.0f}/s, "
        f"so {k} in flight wait >= {k * per_request:.2f} s each (Little's law) once the judge answers faster"
    )


@dataclass
class Latencies:
    """One arm's counted latencies, answers and seconds over the rounds."""

    latencies: list[float]
    answers: int = 0
    seconds: float = 0.0
    opening: list[float] = field(default_factory=list)  # the first k of each round, sent at once

    @property
    def rate(self) -> float:
        return self.answers / max(self.seconds, 1e-9)


async def _added_rounds(judge: Server, server: RewardServer, k: int, rounds: int) -> tuple[Latencies, Latencies, float]:
    """Both arms' latencies over `rounds` rounds (round -1, the first, printed on its own), each arm's
    client kept open over them as a training loop keeps its own; the server's CPU seconds."""
    import aiohttp

    n, direct, served, server_cpu = 3 * k, Latencies([]), Latencies([]), 0.0
    timeout = aiohttp.ClientTimeout(total=None)  # a loaded machine's slow phase is measured, not cut off

    def session(headers: dict) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), headers=headers, timeout=timeout)

    async with session({"Authorization": "Bearer x"}) as to_judge, session(server.headers) as to_server:
        for r in range(-1, rounds):
            bodies = judge_requests(texts(n, f"p99-direct-{r}"))
            judged = await closed_loop(to_judge, judge.base_url + "/chat/completions", bodies, k)
            spent = cpu_s(server.proc.pid)
            rewards = [orjson.dumps({"rollouts": [x]}) for x in texts(n, f"p99-{r}")]
            rewarded = await closed_loop(to_server, server.url + "/v1/rewards", rewards, k)
            if r < 0:
                added = p99(rewarded.latencies) - p99(judged.latencies)
                print(f"first round at {k} in flight (connections opened, the controller opening; not pooled): "
                      f"server's added p99 {added * 1000:.0f} ms")  # fmt: skip
                continue
            for total, arm in ((direct, judged), (served, rewarded)):
                total.latencies += arm.latencies
                total.opening += arm.opening
                total.answers, total.seconds = total.answers + arm.answers, total.seconds + arm.seconds
            server_cpu += cpu_s(server.proc.pid) - spent
    return direct, served, server_cpu


def judge_requests(batch: list[str]) -> list[bytes]:
    """The chat request the server sends the judge for each rollout (the bare loop's), encoded."""
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


async def closed_loop(session: Any, url: str, payloads: list[bytes], k: int) -> Latencies:
    """`payloads` sent through `session` with `k` kept in flight (each worker sends its next as its
    last is answered): the latencies of all but the first `k` sent (a round's opening burst, every
    worker's first at once), the answers and the seconds they took."""
    pending, latencies, opening = iter(enumerate(payloads)), [], []

    async def worker() -> None:
        for i, body in pending:  # one iterator shared by the workers: each takes the next
            t = time.perf_counter()
            async with session.post(url, data=body, headers=JSON) as answer:
                await answer.read()
                if answer.status != 200:
                    raise SystemExit(f"{url} answered {answer.status}: {(await answer.text())[:200]}")
            (latencies if i >= k else opening).append(time.perf_counter() - t)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(k)))
    return Latencies(latencies, len(payloads), time.perf_counter() - started, opening)


def cpus(judge: Server, server: RewardServer) -> tuple[float, float, float]:
    """CPU seconds so far of the judge, the reward server and this process."""
    return cpu_s(judge.proc.pid), cpu_s(server.proc.pid), time.process_time()


def since(before: tuple[float, float, float], judge: Server, server: RewardServer) -> tuple[float, float, float]:
    return tuple(b - a for a, b in zip(before, cpus(judge, server), strict=True))  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rollouts", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--in-flight", type=int, default=512)
    parser.add_argument("--latency-rollouts", type=int, default=2048)
    parser.add_argument("--p99-judge-ms", type=float, default=1000, help="the judge's latency in the p99 phase")
    parser.add_argument("--rounds", type=int, default=4, help="rounds the arms of phases 1-3 are interleaved in")
    args = parser.parse_args()
    n, c = args.rollouts, args.concurrency
    with Server() as judge, RewardServer(judge.base_url, max(c, args.in_flight)) as server:
        run(through_server(server, [{"rollouts": texts(16, "warm-up")}], 1))  # engine built, imports done
        rates(judge, server, n, c, args.rounds)
        latencies(judge, server, args.latency_rollouts, args.in_flight, args.rounds, args.p99_judge_ms)
        before = judge.stats()["answered"]
        _, _, [answer] = run(through_server(server, [{"rollouts": texts(1, "pointwise-0")}], 1))
        print(
            f"repeated rollout: cached={answer['results'][0]['cached']}, "
            f"judge calls for it: {judge.stats()['answered'] - before}"
        )


if __name__ == "__main__":
    main()
