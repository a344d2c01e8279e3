"""Bench: what the prompt layout planner saves (tasks/judging/layout_plan.py), on the offline judge
with its simulated prefix cache (tasks/standins/prefix_cache.py), for three corpora:

    (a) 10,000 short texts x 3 criteria      (llm-slop, per criterion)
    (b) 2,000 texts of 4k tokens x 8 criteria (an 8-criterion rubric, per criterion)
    (c) 500 transcripts of 20k tokens x 8 criteria

For each, today's layout (rubric-first) beside the planned one: prompt tokens sent, those the cache
served, uncached / minimum (the minimum: each distinct prefix paid once, in the better layout) and
the cached share. Targets for the planned layout: uncached / minimum <= 1.1, cached share >= 0.8.

    python bench/layout.py [--scale 1.0] [--send] [--cases a,b,c]
    python bench/layout.py --base-url URL --model NAME ...   # a real server (bench/layout_gpu.sh)

The requests are the Judge's own (Judge.request_body, in the order plan_cells.sql gives); by default
each is served to the simulated cache in this process (the full size is ~200M prompt tokens, too
much to send over HTTP on a small machine); --send sends every call over HTTP to `rubricflow
judge-server` instead and sums the usage it answers (the smoke size does that).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from common import Server

if TYPE_CHECKING:
    from rubricflow.tasks.standins.prefix_cache import PrefixCache

CASES = {  # case: (texts at scale 1, tokens a text, criteria, rubric)
    "a": (10_000, 60, 3, "llm-slop"),
    "b": (2_000, 4_000, 8, "eight"),
    "c": (500, 20_000, 8, "eight"),
}
WORDS = "council budget river bridge engineer museum library market ferry bakery report trial assistant tool".split()


def rubric(name: str):
    """llm-slop from the library, or `eight`: rubric-quality's criteria and two of anti-llmy's, eight."""
    from rubricflow.rubrics.compiler import compile_or_raise
    from rubricflow.rubrics.library import resolve

    if name != "eight":
        return compile_or_raise(resolve(name))
    base = compile_or_raise(resolve("rubric-quality")).rubric
    more = tuple(c.model_copy(update={"id": f"{c.id}_b", "patterns": ()}) for c in base.criteria[:2])
    return compile_or_raise(base.model_copy(update={"criteria": (*base.criteria, *more)}))


def text(i: int, tokens: int) -> str:
    """A text of about `tokens` offline-judge tokens (4 characters each), different for every i."""
    words = [f"{WORDS[(i * 7 + k * 3) % len(WORDS)]}{i if k % 50 == 0 else ''}" for k in range(tokens * 4 // 7 + 1)]
    return f"Text {i}: " + " ".join(words)


def requests(bundle, layout: str, texts: list[str]) -> Iterator[dict]:
    """Every call's request body, in plan order for the layout (plan_cells.sql): rubric-first by
    unit then text, text-first by text then unit."""
    from rubricflow.tasks.judging.config import JudgeConfig
    from rubricflow.tasks.judging.judge import Judge, RetryBudget
    from rubricflow.tasks.judging.ratelimit import RateLimiter

    config = JudgeConfig(base_url="http://127.0.0.1:9/v1", strategy="per_criterion")
    judge = Judge(bundle, config, None, RateLimiter(max_in_flight=8), RetryBudget(1), "bench", "c", None, layout)
    units = judge.rendering.of_genre(None)
    pairs = (
        [(u, t) for u in units for t in texts] if layout == "rubric-first" else [(u, t) for t in texts for u in units]
    )
    return (judge.request_body(u.system, u.schema, u.user(t), judge.mode, 0) for u, t in pairs)


def served(bodies: Iterable[dict], *caches: PrefixCache) -> None:
    """The bodies served in order to each simulated cache (its totals count them)."""
    from rubricflow.tasks.standins.judge_server import token_count
    from rubricflow.tasks.standins.prefix_cache import prompt_of

    for body in bodies:
        prompt, tokens = prompt_of(body["messages"]), sum(token_count(m["content"]) for m in body["messages"])
        for cache in caches:
            cache.serve(prompt, tokens)


def sent(endpoint: Endpoint, bodies: list[dict]) -> tuple[int, int]:
    """(prompt tokens, cached tokens) as the server's usage counted them, every call over HTTP."""
    from openai import AsyncOpenAI

    totals = [0, 0]

    async def go() -> None:
        client = AsyncOpenAI(base_url=endpoint.base_url, api_key="x", max_retries=0, timeout=600)
        gate = asyncio.Semaphore(endpoint.concurrency)

        async def one(body):
            async with gate:
                usage = (await client.chat.completions.create(**{**body, **endpoint.overrides})).usage
            totals[0] += usage.prompt_tokens
            details = usage.prompt_tokens_details
            totals[1] += (details.cached_tokens or 0) if details else 0

        await asyncio.gather(*(one(b) for b in bodies))
        await client.close()

    asyncio.run(go())
    return totals[0], totals[1]


@dataclass
class Endpoint:
    """Where --send sends: the offline judge (one server for the whole bench: no two cases or
    layouts share a prefix), or a real server (--base-url, --model: bench/layout_gpu.sh's vLLM)."""

    base_url: str
    overrides: dict
    concurrency: int = 8


def measure(case: str, scale: float, endpoint: Endpoint | None) -> dict:
    """Both layouts of one case: served to a simulated cache here, or sent to `endpoint`."""
    from rubricflow.rubrics.render import render
    from rubricflow.tasks.judging import layout_plan
    from rubricflow.tasks.standins.prefix_cache import CacheRules, PrefixCache

    n, tokens, _, name = CASES[case]
    n = max(2, int(n * scale))
    bundle, texts = rubric(name), [text(i, tokens) for i in range(n)]
    rendering = render(bundle.rubric, "per_criterion")
    units = [u.system for u in rendering.of_genre(None)]
    planned = layout_plan.choose(layout_plan.Shape.of(n, sum(map(len, texts)), units, rendering.shared)).layout
    out = {"case": case, "texts": n, "tokens": tokens, "units": len(units), "planned": planned}
    perfect = CacheRules(capacity_tokens=10**12)  # never evicts: each distinct prefix paid once
    distinct = []
    for layout in ("rubric-first", "text-first"):
        started, cache, every = time.perf_counter(), PrefixCache(), PrefixCache(perfect)
        if endpoint is None:
            served(requests(bundle, layout, texts), cache, every)
            prompt, cached = cache.prompt_tokens, cache.cached_tokens
        else:
            bodies = list(requests(bundle, layout, texts))
            prompt, cached = sent(endpoint, bodies)
            served(bodies, every)
        seconds = time.perf_counter() - started
        out[layout] = {"prompt": prompt, "cached": cached, "s": seconds, "calls": n * len(units)}
        distinct.append(every.prompt_tokens - every.cached_tokens)
    out["minimum"] = min(distinct)
    return out


def report(result: dict) -> str:
    lines = [
        f"case {result['case']}: {result['texts']:,} texts of ~{result['tokens']:,} tokens x {result['units']} "
        f"criteria; minimum {result['minimum']:,} prompt tokens"
    ]
    for layout, label in (("rubric-first", "today  "), (result["planned"], "planned")):
        r = result[layout]
        lines.append(
            f"  {label} {layout:<12}: sent {r['prompt']:>12,}  cached {r['cached']:>12,}  "
            f"uncached/minimum {(r['prompt'] - r['cached']) / result['minimum']:.2f}  "
            f"cached share {r['cached'] / r['prompt']:.2f}  ({r['s']:.1f} s: {r['calls'] / r['s']:.1f} judgments/s, "
            f"{(r['prompt'] - r['cached']) / r['s']:,.0f} prefill tokens/s)"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="share of each case's texts (smoke: 0.005)")
    parser.add_argument("--send", action="store_true", help="send every call over HTTP to the offline judge")
    parser.add_argument("--base-url", help="send every call to this OpenAI-compatible server instead (vLLM)")
    parser.add_argument("--model", default="", help="the model name --base-url serves")
    parser.add_argument("--cases", default="a,b,c", help="which cases, comma-separated")
    parser.add_argument("--concurrency", type=int, default=8, help="calls in flight when sending")
    args = parser.parse_args()
    results = []
    with contextlib.ExitStack() as stack:
        endpoint = None
        if args.base_url:  # a real model: short answers, so prefill dominates as judging does
            endpoint = Endpoint(args.base_url, {"model": args.model, "max_tokens": 256}, args.concurrency)
        elif args.send:
            endpoint = Endpoint(stack.enter_context(Server()).base_url, {}, args.concurrency)
        for case in args.cases.split(","):
            results.append(measure(case, args.scale, endpoint))
            print(report(results[-1]), flush=True)
    for r in results:
        planned = r[r["planned"]]
        print(
            f"case {r['case']}: uncached/minimum {(planned['prompt'] - planned['cached']) / r['minimum']:.2f}, "
            f"cached share {planned['cached'] / planned['prompt']:.2f}"
        )


if __name__ == "__main__":
    sys.exit(main())
