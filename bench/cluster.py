"""Bench: fan-out over Dask workers. The same run on a cluster of 1, 2 and 4 worker processes
(each started here, each with --max-in-flight calls of its own) against the offline judge with
200 ms of latency, so the figure measures how the work spreads, not this machine's two cores.
Prints calls/s for each and its ratio to one worker (target >= 0.8 x N), and how busy each worker
kept its --max-in-flight calls (target >= 0.95): its calls/s over the ceiling's (max-in-flight /
200 ms), and beside it the mean calls in flight (Little's law: the judge's time of every call over
the span) and the judge's mean latency. On a loaded machine the latency grows past 200 ms (the judge
and the workers wait for a CPU), which lowers calls/s but not the calls in flight: the second figure
tells a worker that idles from a judge that slows.

    python bench/cluster.py [--cells 2400] [--workers 1,2,4] [--max-in-flight 8]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import duckdb
from common import Server, write_corpus

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.tasks.standins.cluster import DaskCluster


def busy(warehouse: Path) -> tuple[int, float, float, float]:
    """Cells, calls/s, mean calls in flight and mean latency (s) over the span from the first call
    sent to the last one answered (the run's own start and end apart). A cell's created_at is when
    its answer came, so its call began latency_ms before."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        n, span, judged = con.execute(
            "SELECT count(*), epoch(max(created_at) - min(created_at - to_milliseconds(latency_ms))), "
            "sum(latency_ms) / 1000 FROM completions"
        ).fetchall()[0]
    finally:
        con.close()
    return n, n / span, judged / span, judged / n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cells", type=int, default=2400)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--max-in-flight", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--threads", type=int, default=2, help="shards a worker judges at once (1: the old setup)")
    args = parser.parse_args()
    rates: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp, Server("--latency-ms", str(args.latency_ms)) as server:
        corpus = write_corpus(Path(tmp) / "c.jsonl", args.cells)
        judge = {"base_url": server.base_url, "max_in_flight": args.max_in_flight}
        for n in (int(w) for w in args.workers.split(",")):
            warehouse = Path(tmp) / f"w{n}.duckdb"
            ingest_flow(str(corpus), str(warehouse), "bench")
            with DaskCluster(n, Path(tmp) / f"dask{n}", threads=args.threads) as cluster:
                os.environ.update(cluster.tls_env)  # the flow's client certificate (tasks/runtime/dask_access)
                shard = max(50, args.cells // (4 * n))  # a few shards per worker
                score_corpus(
                    "bench", "llm-slop", str(warehouse), {**judge, "cluster": cluster.address}, {"shard_size": shard}
                )
            cells, rates[n], in_flight, latency_s = busy(warehouse)
            assert cells == args.cells, f"{cells} of {args.cells} cells landed"
            ideal = args.max_in_flight / (args.latency_ms / 1000)
            print(
                f"{n} worker(s): {rates[n]:7.1f} calls/s  ratio to 1 worker {rates[n] / rates[min(rates)]:.2f} "
                f"(target >= {0.8 * n:.1f})  per worker {rates[n] / n / ideal:.2f} of its {ideal:.0f}/s ceiling "
                f"(target >= 0.95); calls in flight per worker {in_flight / n:.1f} of {args.max_in_flight} = "
                f"{in_flight / n / args.max_in_flight:.2f} at {latency_s * 1000:.0f} ms a call",
                flush=True,
            )
    print(
        f"{args.cells} cells per run, {args.max_in_flight} calls in flight per worker, {args.latency_ms:.0f} ms judge"
    )


if __name__ == "__main__":
    main()
