"""Bench: the wall time of a no-change night over a large corpus.

Night 1 ingests the corpus and judges every text (offline judge server, real HTTP); night 2 sees
the same source: the digest check skips the ingest and the plan's anti-join finds every cell
landed, so it makes zero judge calls. Baseline, in the same process: an empty Prefect flow run
(the floor any nightly flow pays).

    python bench/nightly.py [--texts 100000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from common import Server, on_the_shared_prefect_server, write_corpus


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=100_000)
    args = parser.parse_args()
    on_the_shared_prefect_server()
    from prefect import flow

    from rubricflow.flows.nightly import nightly_scoring

    @flow(name="empty-baseline")
    def empty() -> None:
        return None

    with Server() as server, tempfile.TemporaryDirectory() as tmp:
        source = write_corpus(Path(tmp) / "corpus.jsonl", args.texts)
        warehouse = str(Path(tmp) / "w.duckdb")
        judge = {"base_url": server.base_url, "max_in_flight": 64}
        t0 = time.perf_counter()
        nightly_scoring(str(source), "bench", ["llm-slop"], warehouse, judge, canary_size=0, night="night-1")
        first = time.perf_counter() - t0
        calls = server.stats()["requests"]
        t0 = time.perf_counter()
        (night,) = nightly_scoring(str(source), "bench", ["llm-slop"], warehouse, judge, canary_size=0, night="night-2")
        second = time.perf_counter() - t0
        t0 = time.perf_counter()
        empty()
        floor = time.perf_counter() - t0
        print(f"night 1: {args.texts:,} texts ingested and judged in {first:.1f} s ({calls:,} calls)")
        print(
            f"night 2 (no change): {second:.2f} s, {server.stats()['requests'] - calls} calls, "
            f"{night['judged_cells']} cells judged, coverage {night['coverage']:.3f}"
        )
        print(f"baseline empty Prefect flow run: {floor:.2f} s; no-change night / empty flow: {second / floor:.1f}")


if __name__ == "__main__":
    main()
