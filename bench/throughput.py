"""Bench 1: end-to-end judge calls/s of the scoring flow against the instant offline judge server,
next to bare AsyncOpenAI loops over the same prompts, at several run sizes in one run
(targets at 10k and 100k cells: flow >= 0.9x the bare loop and >= 0.8x the tuned loop; peak RSS at
the largest size <= 1.2x the 10k figure), then against a judge that takes 200 ms per answer, where
the concurrency controller must hold >= 0.9 of --max-in-flight.

    python bench/throughput.py [--sizes 3000,10000,100000] [--concurrency 64] [--latency-cells 4000]

bare  = a plain AsyncOpenAI loop (default httpx transport, typed response_format);
tuned = the same loop on the pipeline's aiohttp transport with the schema in extra_body.
Each flow runs in a fresh process of its own, on the local Prefect server that rubricflow's commands
and Python API share (tasks/runtime/prefect_server.py: started once, so the second flow's process
does not start a Prefect server of its own); its peak RSS is the scoring's (after the ingest).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import Server, on_the_shared_prefect_server, peak_rss_mib, write_corpus


def prompts_of(corpus: Path) -> tuple[list[list[dict]], dict]:
    from rubricflow.rubrics.library import Library
    from rubricflow.rubrics.render import call_units, output_schema, render_system_prompt, render_user_message

    bundle = Library().bundle("llm-slop")
    unit = call_units(bundle.rubric, "holistic")[0]
    system, schema = render_system_prompt(bundle.rubric, unit), output_schema(bundle.rubric, unit)
    texts = [json.loads(line)["text"] for line in corpus.read_text().splitlines()]
    return [
        [{"role": "system", "content": system}, {"role": "user", "content": render_user_message(t)}] for t in texts
    ], schema


async def bare_loop(
    base_url: str, prompts: list[list[dict]], schema: dict, concurrency: int, tuned: bool = False
) -> float:
    from openai import AsyncOpenAI, DefaultAioHttpClient

    client = AsyncOpenAI(
        base_url=base_url, api_key="x", max_retries=0, **({"http_client": DefaultAioHttpClient()} if tuned else {})
    )
    gate = asyncio.Semaphore(concurrency)
    fmt = {"type": "json_schema", "json_schema": {"name": "j", "schema": schema, "strict": True}}

    async def one(messages):
        async with gate:
            extra = {"extra_body": {"response_format": fmt}} if tuned else {"response_format": fmt}
            r = await client.chat.completions.create(
                model="m", messages=messages, temperature=0, max_tokens=1024, **extra
            )
            return r.choices[0].message.content

    t = time.perf_counter()
    await asyncio.gather(*(one(m) for m in prompts))
    elapsed = time.perf_counter() - t
    await client.close()
    return len(prompts) / elapsed


def flow_child(corpus: str, base_url: str, concurrency: int) -> None:
    """In a fresh process: ingest, score, print calls/s, peak RSS and what the controller reached."""
    on_the_shared_prefect_server()
    from rubricflow.flows.ingest import ingest_flow
    from rubricflow.flows.score import score_corpus
    from rubricflow.tasks.judging.shard import Worker
    from rubricflow.warehouse import db

    warehouse = str(Path(corpus).with_suffix(".duckdb"))
    ingest_flow(corpus, warehouse, "bench")  # also warms up this process's Prefect client
    maintenance = "SELECT coalesce(sum(seconds), 0) FROM analytics_refreshes"  # the analytics kept current
    with db.reader(warehouse) as con:
        (maintained_before,) = con.execute(maintenance).fetchone()
    Path("/proc/self/clear_refs").write_text("5")  # the peak RSS from here on is the scoring's own
    rss_before = scoring_peak_mib()
    t = time.perf_counter()
    summary = score_corpus(
        "bench",
        "llm-slop",
        warehouse,
        {"base_url": base_url, "max_in_flight": concurrency},
        options={"shard_size": 2000},
    )
    flow_s = time.perf_counter() - t
    with db.reader(warehouse) as con:  # Little's law: calls in flight = server time of all calls / span
        busy_s, span_s = con.execute(
            "SELECT sum(latency_ms) / 1000, epoch(max(created_at) - min(created_at)) FROM completions"
        ).fetchone()
        (maintained,) = con.execute(maintenance).fetchone()
    controller = next(iter(Worker.get().controllers.values()))
    print(
        json.dumps(
            {
                "cells": summary["ok_cells"],
                "calls": summary["calls"],
                "flow_s": flow_s,
                "rate": summary["calls"] / flow_s,
                "rss_mib": scoring_peak_mib(),
                "rss_before_mib": rss_before,
                "peak": controller.peak,
                "limit": controller.limit,
                "mean_in_flight": busy_s / max(span_s, 1e-9),
                "maintenance_s": maintained - maintained_before,
            }
        )
    )


def scoring_peak_mib() -> float:
    """VmHWM: the peak resident set since clear_refs reset it (Linux), so the ingest's is left out."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return peak_rss_mib()


def run_flow(corpus: Path, base_url: str, concurrency: int) -> dict:
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--flow-child",
            str(corpus),
            "--base-url",
            base_url,
            "--concurrency",
            str(concurrency),
        ],
        capture_output=True,
        text=True,
    )
    if out.returncode:
        sys.exit(f"the flow's process failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def size_row(tmp: Path, cells: int, concurrency: int) -> dict:
    with Server() as server:
        corpus = write_corpus(tmp / f"c{cells}.jsonl", cells)
        prompts, schema = prompts_of(corpus)
        bare = asyncio.run(bare_loop(server.base_url, prompts, schema, concurrency))
        flow = run_flow(corpus, server.base_url, concurrency)
        assert flow["cells"] == cells, flow
        tuned = asyncio.run(bare_loop(server.base_url, prompts, schema, concurrency, tuned=True))
    return flow | {"bare": bare, "tuned": tuned}


def latency_row(tmp: Path, cells: int, concurrency: int) -> dict:
    with Server("--latency-ms", "200") as server:
        corpus = write_corpus(tmp / f"slow{cells}.jsonl", cells)
        return run_flow(corpus, server.base_url, concurrency)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="3000,10000,100000", help="run sizes in cells, comma-separated")
    parser.add_argument("--concurrency", type=int, default=64, help="--max-in-flight of the flow and the loops")
    parser.add_argument("--latency-cells", type=int, default=4000, help="cells against the 200 ms judge")
    parser.add_argument("--flow-child", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.flow_child:
        return flow_child(args.flow_child, args.base_url, args.concurrency)
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for cells in (int(s) for s in args.sizes.split(",")):
            rows[cells] = size_row(Path(tmp), cells, args.concurrency)
        slow = latency_row(Path(tmp), args.latency_cells, args.concurrency)
    print(f"concurrency (--max-in-flight) {args.concurrency}; calls/s; each flow in a fresh process")
    print(
        "| cells | flow | bare | tuned | flow / bare | flow / tuned | peak RSS MiB | controller peak "
        "| flow wall s | analytics upkeep s (share) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for cells, r in rows.items():
        print(
            f"| {cells:,} | {r['rate']:.1f} | {r['bare']:.1f} | {r['tuned']:.1f} | {r['rate'] / r['bare']:.2f} | "
            f"{r['rate'] / r['tuned']:.2f} | {r['rss_mib']:.0f} | {r['peak']} | {r['flow_s']:.1f} | "
            f"{r['maintenance_s']:.1f} ({r['maintenance_s'] / r['flow_s']:.1%}; target <= 10%) |"
        )
    sizes = sorted(rows)
    if len(sizes) > 1:
        base = 10000 if 10000 in rows else sizes[0]
        print(
            f"peak RSS at {sizes[-1]:,} cells / at {base:,}: {rows[sizes[-1]]['rss_mib'] / rows[base]['rss_mib']:.2f} "
            "(target <= 1.2)"
        )
    print(
        f"200 ms judge, {args.latency_cells:,} cells: {slow['rate']:.1f} calls/s, mean in flight "
        f"{slow['mean_in_flight']:.1f} of {args.concurrency} = {slow['mean_in_flight'] / args.concurrency:.2f} "
        f"(target >= 0.9), controller peak {slow['peak']}, limit at the end {slow['limit']:.1f}"
    )


if __name__ == "__main__":
    main()
