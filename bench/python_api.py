"""The Python API's two costs, each against a baseline measured in the same run:

1. `judge.evaluate_many(rubric, texts)` against a bare AsyncOpenAI loop sending the same prompts
   (same system prompt, user message, schema, concurrency) to the same offline judge server, in a
   process of its own. Target: the API's texts/s >= 0.9x the bare loop's at 10,000 texts.
2. `import rubricflow` against `import prefect`, the median of fresh processes. Target <= 1.5x.

    python bench/python_api.py [--texts 10000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Server  # noqa: E402

CONCURRENCY = 64  # the judge's default max_in_flight


def texts(n: int) -> list[str]:
    return [
        f"The council met on day {i} and approved the road budget by seven votes to two."
        if i % 3
        else f"Certainly! Nestled in the heart of town {i}, this vibrant place plays a vital role."
        for i in range(n)
    ]


async def bare_loop(base_url: str, bodies: list[dict]) -> float:
    """The baseline: the same request bodies through AsyncOpenAI, CONCURRENCY at a time."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=0)
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(body: dict) -> None:
        async with gate:
            await client.chat.completions.create(**body)

    started = time.perf_counter()
    await asyncio.gather(*(one(b) for b in bodies))
    seconds = time.perf_counter() - started
    await client.close()
    return seconds


def bodies(rubric, items: list[str]) -> list[dict]:
    from rubricflow.rubrics.render import call_units, output_schema, render_system_prompt, render_user_message

    [unit] = call_units(rubric.rubric, "holistic", None)
    system, schema = render_system_prompt(rubric.rubric, unit), output_schema(rubric.rubric, unit)
    response_format = {"type": "json_schema", "json_schema": {"name": "judgment", "schema": schema, "strict": True}}
    return [
        {
            "model": "rubricflow-offline-judge",
            "temperature": 0.0,
            "max_tokens": 1024,
            "response_format": response_format,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": render_user_message(t, "", "")},
            ],
        }
        for t in items
    ]


def median_import(module: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    import rubricflow as rf

    rubric, items = rf.load_rubric("llm-slop"), texts(args.texts)
    with Server() as server:
        judge = rf.Judge(base_url=server.base_url, strategy="holistic", system_prompt="system")
        judge.evaluate(rubric, items[0])  # warm: the first call renders the prompts and opens the client
        bare_s = asyncio.run(bare_loop(server.base_url, bodies(rubric, items)))
        started = time.perf_counter()
        results = judge.evaluate_many(rubric, items)
        api_s = time.perf_counter() - started
    scored = sum(r.score is not None for r in results)
    print(f"bare AsyncOpenAI loop   {args.texts} texts in {bare_s:.2f} s ({args.texts / bare_s:,.0f} texts/s)")
    print(
        f"judge.evaluate_many     {args.texts} texts in {api_s:.2f} s ({args.texts / api_s:,.0f} texts/s), {scored} scored"
    )
    print(f"ratio evaluate_many / bare (throughput) {bare_s / api_s:.2f}x (target >= 0.90x)")
    prefect_s = median_import("prefect", args.runs)
    ours_s = median_import("rubricflow", args.runs)
    print(f"import prefect {prefect_s:.3f} s; import rubricflow {ours_s:.3f} s")
    print(f"ratio import rubricflow / import prefect {ours_s / prefect_s:.2f}x (target <= 1.50x)")


if __name__ == "__main__":
    main()
