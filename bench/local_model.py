"""The real local model (Gemma 3 270M on llama.cpp's server, the `local` extra): judgments/s and
prompt tokens served from the server's prefix cache, with cells in cache-aware order (cells of
one call unit together, as the planner orders them) against the same cells shuffled, same run.

    python bench/local_model.py [--texts 4] [--rubric writing-quality] [--strategy per_criterion] [--max-tokens 300]

llama.cpp reports cache reuse in its log ("N prefix-match hit"), not in the API's usage, so the
cached tokens are read from the server's log between the two passes.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import re
import tempfile
import time
from pathlib import Path

from openai import AsyncOpenAI

from rubricflow.rubrics.library import Library
from rubricflow.rubrics.render import call_units
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.judge import Cell, Judge, RetryBudget, judge_all
from rubricflow.tasks.judging.ratelimit import RateLimiter
from rubricflow.tasks.standins.local_model import MODEL_ALIAS, LocalModelServer

SAMPLE = Path(__file__).resolve().parents[1] / "flows" / "samples" / "demo_corpus.jsonl"


def cells_for(texts: list[dict], unit_ids: list[str]) -> list[Cell]:
    return [
        Cell(
            cell_key=f"{t['id']}/{u}",
            text_id=t["id"],
            text_sha256=hashlib.sha256(t["text"].encode()).hexdigest(),
            unit_id=u,
            sample=0,
            text=t["text"],
        )
        for t in texts
        for u in unit_ids
    ]


async def one_pass(server: LocalModelServer, bundle, config: JudgeConfig, cells: list[Cell]) -> tuple[float, int]:
    client = AsyncOpenAI(base_url=server.base_url, api_key="local", max_retries=0)
    judge = Judge(bundle, config, client, RateLimiter(max_in_flight=1), RetryBudget(1000), "bench", "bench")
    started = time.perf_counter()
    outcomes = await judge_all(judge, cells)
    await client.close()
    scored = sum(r.status == "scored" for o in outcomes for r in o.judgments)
    return time.perf_counter() - started, scored


def prefix_hits(log: Path, start: int) -> tuple[int, int]:
    text = log.read_text(errors="replace")[start:]
    return sum(int(n) for n in re.findall(r"(\d+) prefix-match hit", text)), len(text)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=4)
    parser.add_argument("--rubric", default="writing-quality")
    parser.add_argument("--strategy", default="per_criterion")
    parser.add_argument("--max-tokens", type=int, default=300)
    args = parser.parse_args()
    texts = [json.loads(line) for line in SAMPLE.read_text().splitlines()][: args.texts]
    bundle = Library().bundle(args.rubric)
    units = [u.id for u in call_units(bundle.rubric, args.strategy)]
    ordered = sorted(cells_for(texts, units), key=lambda c: (c.unit_id, c.text_id))  # as the planner orders them
    shuffled = ordered[:]
    random.Random(7).shuffle(shuffled)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "llama.log"
        with LocalModelServer(log=log) as server:
            # the server's own URL: its loopback timeout (300 s), and the cells one at a time, as it serves them
            config = JudgeConfig(
                model=MODEL_ALIAS,
                base_url=server.base_url,
                strategy=args.strategy,
                max_tokens=args.max_tokens,
                output_mode="json_object",
                system_prompt="user",
                max_in_flight=1,
            )
            offset = len(log.read_text(errors="replace"))
            figures = {}
            for name, cells in (("shuffled", shuffled), ("cache-aware", ordered)):
                seconds, scored = asyncio.run(one_pass(server, bundle, config, cells))
                cached, read = prefix_hits(log, offset)
                offset += read
                figures[name] = (seconds, scored, cached, len(cells))
    print(f"{args.rubric} ({args.strategy}), {len(texts)} texts x {len(units)} call units, one call at a time")
    for name, (seconds, scored, cached, calls) in figures.items():
        print(
            f"{name:<12} {calls} calls in {seconds:6.1f} s  {scored / seconds:5.2f} judgments/s  "
            f"{cached:>7,} prompt tokens from the prefix cache ({cached / calls:,.0f} a call)"
        )
    (s_time, _, s_cached, _), (c_time, _, c_cached, _) = figures["shuffled"], figures["cache-aware"]
    print(
        f"cache-aware vs shuffled: {s_time / c_time:.2f}x the speed, {c_cached / max(1, s_cached):.2f}x the cached tokens"
    )


if __name__ == "__main__":
    main()
