"""Bench 3: peak memory scoring 100k texts (target < 1 GiB RSS) and the cost of re-running the
finished job (target: zero calls, seconds).

    python bench/scale.py [--texts 100000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from common import Server, on_the_shared_prefect_server, peak_rss_mib, write_corpus

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=100_000)
    args = parser.parse_args()
    on_the_shared_prefect_server()
    with tempfile.TemporaryDirectory() as tmp, Server() as server:
        judge = {"base_url": server.base_url}
        warehouse = Path(tmp) / "w.duckdb"
        t = time.perf_counter()
        ingest_flow(str(write_corpus(Path(tmp) / "c.jsonl", args.texts)), str(warehouse), "bench")
        ingest_s = time.perf_counter() - t
        print(f"ingest {args.texts} texts: {ingest_s:.1f} s, peak RSS so far {peak_rss_mib():.0f} MiB", flush=True)
        t = time.perf_counter()
        first = score_corpus("bench", "llm-slop", str(warehouse), judge)
        score_s = time.perf_counter() - t
        print(
            f"score: {first['ok_cells']} ok / {first['planned_cells']} cells, {first['calls']} calls in {score_s:.1f} s "
            f"({first['calls'] / score_s:.0f} calls/s), peak RSS {peak_rss_mib():.0f} MiB (target < 1024)",
            flush=True,
        )
        requests = server.stats()["requests"]
        t = time.perf_counter()
        again = score_corpus("bench", "llm-slop", str(warehouse), judge)
        rerun_s = time.perf_counter() - t
        print(
            f"re-run of the finished job: {again['calls']} calls, {again['skipped_cells']} cells reused, "
            f"{rerun_s:.1f} s; server saw {server.stats()['requests'] - requests} new requests"
        )
    print(f"peak RSS of the scoring process: {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
