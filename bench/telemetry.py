"""What OpenTelemetry costs the judge loop: the same cells judged by a real Judge against the
offline judge server (its own process), with the telemetry hooks bypassed (`bare`: the untraced
inner method), telemetry off (the shipped default) and on (spans and evaluation events into the
SDK's in-memory exporter), interleaved and repeated; medians and ratios against `bare` printed.
Then the hooks alone when off, per cell, in a tight loop.

    python bench/telemetry.py --cells 2000 --repeat 5
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Server  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

from rubricflow.rubrics.compiler import compile_or_raise  # noqa: E402
from rubricflow.rubrics.library import resolve  # noqa: E402
from rubricflow.tasks.judging import telemetry  # noqa: E402
from rubricflow.tasks.judging.config import JudgeConfig  # noqa: E402
from rubricflow.tasks.judging.judge import Cell, Judge, RetryBudget  # noqa: E402
from rubricflow.tasks.judging.ratelimit import RateLimiter  # noqa: E402

BUNDLE = compile_or_raise(resolve("llm-slop"))


def cells(n: int) -> list[Cell]:
    texts = ["The council approved the road budget by seven votes to two.", "Certainly! Nestled in a vibrant town."]
    made = []
    for i in range(n):
        text = f"{texts[i % 2]} ({i})"
        made.append(Cell(f"k{i}", f"t{i}", hashlib.sha256(text.encode()).hexdigest(), "_all", 0, text))
    return made


def in_memory_tracer():
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("bench"), exporter


async def judge_once(base_url: str, todo: list[Cell], mode: str) -> float:
    client = AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
    judge = Judge(
        BUNDLE, JudgeConfig(base_url=base_url), client, RateLimiter(max_in_flight=32), RetryBudget(100), "r", "c"
    )
    call = judge._judge if mode == "bare" else judge.judge
    started = time.perf_counter()
    try:
        await asyncio.gather(*(call(c) for c in todo))
    finally:
        await client.close()
    return time.perf_counter() - started


def hooks_off_ns(n: int) -> float:
    """The hooks' cost per cell when off: model_call and record_outcome, as the judge calls them."""
    telemetry._STATE["tracer"] = None
    cell, config, row = cells(1)[0], JudgeConfig(), {"model": "m"}
    started = time.perf_counter()
    for _ in range(n):
        with telemetry.model_call("m", "openai", config, cell) as span:
            telemetry.record_outcome(span, row, [], {})
    return (time.perf_counter() - started) / n * 1e9


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cells", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    todo = cells(args.cells)
    tracer, exporter = in_memory_tracer()
    times: dict[str, list[float]] = {"bare": [], "off": [], "on": []}
    with Server() as server:
        asyncio.run(judge_once(server.base_url, todo[:50], "bare"))  # warm the server and the client
        for _ in range(args.repeat):
            for mode in times:
                telemetry._STATE["tracer"] = tracer if mode == "on" else None
                times[mode].append(asyncio.run(judge_once(server.base_url, todo, mode)))
                exporter.clear()
    base = statistics.median(times["bare"])
    print(f"{args.cells} cells x {args.repeat} repeats, median seconds (ratio against bare):")
    for mode, seconds in times.items():
        median = statistics.median(seconds)
        print(f"  {mode:5} {median:8.3f} s  {args.cells / median:8.0f} cells/s  ratio {median / base:.3f}")
    print(f"ratio off / bare: {statistics.median(times['off']) / base:.3f} (telemetry off costs nothing measurable)")
    hooks = hooks_off_ns(100_000)
    print(
        f"hooks alone when off: {hooks:.0f} ns per cell, {hooks / (base / args.cells * 1e9):.5f} of a judged cell's time"
    )


if __name__ == "__main__":
    main()
