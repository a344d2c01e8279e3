"""Bench 1: end-to-end judge calls/s of the scoring flow against the instant offline judge server,
next to a bare AsyncOpenAI loop on the same server with the same prompts (target: >= 0.8).

    python bench/throughput.py [--cells 3000] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from common import Server, write_corpus

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.rubrics.library import Library
from rubricflow.rubrics.render import call_units, output_schema, render_system_prompt, render_user_message


async def bare_loop(base_url: str, prompts: list[list[dict]], schema: dict, concurrency: int, tuned: bool = False) -> float:
    """Plain: default httpx transport, typed response_format. Tuned: what the pipeline does
    (aiohttp transport, schema passed untyped in extra_body)."""
    from openai import AsyncOpenAI, DefaultAioHttpClient

    client = AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0,
                         **({"http_client": DefaultAioHttpClient()} if tuned else {}))
    gate = asyncio.Semaphore(concurrency)
    fmt = {"type": "json_schema", "json_schema": {"name": "j", "schema": schema, "strict": True}}

    async def one(messages):
        async with gate:
            extra = {"extra_body": {"response_format": fmt}} if tuned else {"response_format": fmt}
            r = await client.chat.completions.create(model="m", messages=messages, temperature=0, max_tokens=1024, **extra)
            return r.choices[0].message.content

    t = time.perf_counter()
    await asyncio.gather(*(one(m) for m in prompts))
    elapsed = time.perf_counter() - t
    await client.close()
    return len(prompts) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cells", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    bundle = Library().bundle("llm-slop")
    unit = call_units(bundle.rubric, "holistic")[0]
    system, schema = render_system_prompt(bundle.rubric, unit), output_schema(bundle.rubric, unit)
    with tempfile.TemporaryDirectory() as tmp, Server() as server:
        corpus = write_corpus(Path(tmp) / "c.jsonl", args.cells)
        texts = [line for line in corpus.read_text().splitlines()]
        import json
        prompts = [[{"role": "system", "content": system},
                    {"role": "user", "content": render_user_message(json.loads(t)["text"])}] for t in texts]
        warehouse = Path(tmp) / "w.duckdb"
        ingest_flow(str(corpus), str(warehouse), "bench")  # also warms up Prefect's ephemeral server
        bare = asyncio.run(bare_loop(server.base_url, prompts, schema, args.concurrency))
        t = time.perf_counter()
        summary = score_corpus("bench", "llm-slop", str(warehouse),
                               {"base_url": server.base_url, "max_in_flight": args.concurrency}, shard_size=2000)
        flow_s = time.perf_counter() - t
        assert summary["ok_cells"] == args.cells, summary
        flow_rate = summary["calls"] / flow_s
        bare2 = asyncio.run(bare_loop(server.base_url, prompts, schema, args.concurrency))
        tuned = asyncio.run(bare_loop(server.base_url, prompts, schema, args.concurrency, tuned=True))
    baseline = (bare + bare2) / 2
    print(f"cells: {args.cells}, concurrency {args.concurrency}")
    print(f"bare AsyncOpenAI loop          : {bare:7.1f} and {bare2:7.1f} calls/s (mean {baseline:.1f})")
    print(f"bare loop, pipeline's transport: {tuned:7.1f} calls/s (aiohttp, schema in extra_body)")
    print(f"scoring flow end to end        : {flow_rate:7.1f} calls/s ({flow_s:.1f} s: plan, judge, verify, land, load)")
    print(f"ratio flow / bare loop         : {flow_rate / baseline:7.2f}   (target >= 0.8)")
    print(f"ratio flow / tuned bare loop   : {flow_rate / tuned:7.2f}")


if __name__ == "__main__":
    main()
