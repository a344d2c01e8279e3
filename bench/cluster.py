"""Bench: fan-out over Dask workers. The same run on a cluster of N worker processes (each started
here, each with --max-in-flight calls of its own) against the offline judge with 200 ms of latency,
so the figure measures how the work spreads, not this machine's two cores.

The baseline is measured in the same run: the plain flow (no cluster, one process) at the same
--max-in-flight against the same judge. Each cluster size prints its calls/s per worker as a ratio
to the plain flow's (target >= 0.95: a worker judges as fast as one machine's flow; N workers then
judge N times as fast), beside its ratio to the ceiling (max-in-flight / 200 ms). On a loaded machine
both slow, so the ratio to the same run's baseline is the figure that means something. Beside them:
the mean calls in flight (Little's law: the client's time of every call over the span), the client's
mean latency and the judge server's own (body read to answer sent): a gap between the two is time a
call's answer waited in the client's process (its loop, the GIL) or for a CPU, not in the judge.

    python bench/cluster.py [--cells 2400] [--workers 1,2,4] [--max-in-flight 8] [--no-nanny]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import duckdb
from common import Server, on_the_shared_prefect_server, write_corpus

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


class Measured:
    """One run's figures: calls/s, calls in flight, the client's and the judge server's ms a call."""

    def __init__(self, server: Server, warehouse: Path, cells: int, before: dict):
        after = server.stats()
        n, self.rate, self.in_flight, latency_s = busy(warehouse)
        assert n == cells, f"{n} of {cells} cells landed"
        self.client_ms = latency_s * 1000
        self.server_ms = (
            (after["served_s"] - before["served_s"]) * 1000 / max(1, after["answered"] - before["answered"])
        )

    def latency(self) -> str:
        return f"{self.client_ms:.0f} ms a call (the judge's own {self.server_ms:.0f} ms)"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cells", type=int, default=2400)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--max-in-flight", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--threads", type=int, default=2, help="shards a worker judges at once (1: the old setup)")
    parser.add_argument(
        "--nanny",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="each worker under a nanny, as deployed (--no-nanny: one process less a worker, for the CI smoke)",
    )
    args = parser.parse_args()
    on_the_shared_prefect_server()
    ideal, mif = args.max_in_flight / (args.latency_ms / 1000), args.max_in_flight
    with tempfile.TemporaryDirectory() as tmp, Server("--latency-ms", str(args.latency_ms)) as server:
        corpus = write_corpus(Path(tmp) / "c.jsonl", args.cells)
        judge = {"base_url": server.base_url, "max_in_flight": mif}
        warehouse, before = Path(tmp) / "plain.duckdb", server.stats()
        ingest_flow(str(corpus), str(warehouse), "bench")
        score_corpus("bench", "llm-slop", str(warehouse), judge, {"shard_size": max(50, args.cells // 4)})
        plain = Measured(server, warehouse, args.cells, before)
        print(
            f"plain flow (the baseline): {plain.rate:7.1f} calls/s, {plain.rate / ideal:.2f} of the {ideal:.0f}/s "
            f"ceiling; calls in flight {plain.in_flight:.1f} of {mif} at {plain.latency()}",
            flush=True,
        )
        for n in (int(w) for w in args.workers.split(",")):
            warehouse, before = Path(tmp) / f"w{n}.duckdb", server.stats()
            ingest_flow(str(corpus), str(warehouse), "bench")
            with DaskCluster(n, Path(tmp) / f"dask{n}", threads=args.threads, nanny=args.nanny) as cluster:
                os.environ.update(cluster.tls_env)  # the flow's client certificate (tasks/runtime/dask_access)
                shard = max(50, args.cells // (4 * n))  # a few shards per worker
                score_corpus(
                    "bench", "llm-slop", str(warehouse), {**judge, "cluster": cluster.address}, {"shard_size": shard}
                )
            got = Measured(server, warehouse, args.cells, before)
            print(
                f"{n} worker(s): {got.rate:7.1f} calls/s; per worker {got.rate / n / plain.rate:.2f} of the plain "
                f"flow's (target >= 0.95), {got.rate / n / ideal:.2f} of its {ideal:.0f}/s ceiling; calls in flight "
                f"per worker {got.in_flight / n:.1f} of {mif} at {got.latency()}",
                flush=True,
            )
    print(f"{args.cells} cells per run, {mif} calls in flight per worker, {args.latency_ms:.0f} ms judge")


if __name__ == "__main__":
    main()
