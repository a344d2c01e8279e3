"""Pairwise judging against scoring on the same offline judge server, same run: N pairs judged in
both orders (2N cells) next to the same 2N responses scored one by one (2N cells), cells/s each
(target: pairwise within 10% of scoring), then a panel of two offline judges over the N pairs as
one flow.

    python bench/pairwise.py [--pairs 1000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from common import Server, on_the_shared_prefect_server

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.panel import panel_flow
from rubricflow.flows.score import score_corpus
from rubricflow.rubrics.formats import dump
from rubricflow.rubrics.library import Library
from rubricflow.rubrics.pairwise import pairwise_rubric

RUBRIC = "llm-slop"


def responses(i: int) -> tuple[str, str]:
    plain = f"The council met on day {i} and approved the road budget by seven votes to two."
    sloppy = f"Certainly! Nestled in the heart of town {i}, this vibrant budget plays a vital role. I hope this helps."
    return plain, sloppy


def timed(run) -> tuple[float, dict]:
    started = time.perf_counter()
    summary = run()
    return time.perf_counter() - started, summary


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=1000)
    args = parser.parse_args()
    on_the_shared_prefect_server()
    n = args.pairs
    with tempfile.TemporaryDirectory() as tmp, Server() as server:
        work = Path(tmp)
        with (work / "pairs.jsonl").open("w") as fh, (work / "texts.jsonl").open("w") as texts:
            for i in range(n):
                a, b = responses(i)
                fh.write(
                    json.dumps(
                        {"pair_id": f"p{i:05d}", "prompt": f"Report on day {i}.", "response_a": a, "response_b": b}
                    )
                    + "\n"
                )
                texts.write(json.dumps({"id": f"t{i:05d}a", "text": a, "input": f"Report on day {i}."}) + "\n")
                texts.write(json.dumps({"id": f"t{i:05d}b", "text": b, "input": f"Report on day {i}."}) + "\n")
        warehouse = str(work / "w.duckdb")
        ingest_flow(str(work / "pairs.jsonl"), warehouse, "pairs")
        ingest_flow(str(work / "texts.jsonl"), warehouse, "texts")
        pair_form = work / f"{RUBRIC}-pairwise.yaml"
        pair_form.write_text(dump(pairwise_rubric(Library().bundle(RUBRIC).rubric), "yaml"))
        judge = {"base_url": server.base_url}
        score_s, scored = timed(lambda: score_corpus("texts", RUBRIC, warehouse, judge))
        pair_s, paired = timed(lambda: score_corpus("pairs", str(pair_form), warehouse, judge))
        panel_s, panel = timed(
            lambda: panel_flow(
                "pairs", str(pair_form), warehouse, [{**judge, "model": "judge-x"}, {**judge, "model": "judge-y"}]
            )
        )
    score_rate, pair_rate = scored["judged_cells"] / score_s, paired["judged_cells"] / pair_s
    print(f"{n} pairs, {RUBRIC}, holistic, offline judge server in its own process")
    print(f"scoring   {scored['judged_cells']:>6} cells in {score_s:6.1f} s  {score_rate:7.1f} cells/s")
    print(
        f"pairwise  {paired['judged_cells']:>6} cells in {pair_s:6.1f} s  {pair_rate:7.1f} cells/s  "
        f"({pair_rate / score_rate:.2f}x scoring; target >= 0.90)"
    )
    panel_cells = sum(r["judged_cells"] for r in panel)
    print(
        f"panel of 2 judges as one flow: {panel_cells} cells in {panel_s:.1f} s ({panel_cells / panel_s:.1f} cells/s)"
    )


if __name__ == "__main__":
    main()
