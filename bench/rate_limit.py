"""Bench 2: rate-limit accuracy. The server adds 500 ms latency and enforces the same requests/min
limit the client is given; over >= 60 s the achieved rate should be >= 0.97 of the configured one,
with zero 429s.

    python bench/rate_limit.py [--rpm 600] [--seconds 66]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import duckdb
from common import Server, on_the_shared_prefect_server, write_corpus

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rpm", type=float, default=600)
    parser.add_argument("--seconds", type=float, default=66)
    parser.add_argument("--latency-ms", type=float, default=500)
    args = parser.parse_args()
    on_the_shared_prefect_server()
    cells = int(args.rpm / 60 * args.seconds)
    with (
        tempfile.TemporaryDirectory() as tmp,
        Server("--latency-ms", str(args.latency_ms), "--rpm", str(args.rpm)) as server,
    ):
        warehouse = Path(tmp) / "w.duckdb"
        ingest_flow(str(write_corpus(Path(tmp) / "c.jsonl", cells)), str(warehouse), "bench")
        summary = score_corpus(
            "bench",
            "llm-slop",
            str(warehouse),
            {"base_url": server.base_url, "rpm": args.rpm, "max_in_flight": 256},
            options={"shard_size": cells},
        )
        stats = server.stats()
        con = duckdb.connect(str(warehouse), read_only=True)
        first, last, n = con.execute("SELECT min(created_at), max(created_at), count(*) FROM completions").fetchall()[0]
        con.close()
    window_s = (last - first).total_seconds()
    achieved = (n - 1) / window_s * 60
    print(f"configured {args.rpm:.0f} rpm, server latency {args.latency_ms:.0f} ms, {n} calls over {window_s:.1f} s")
    print(f"achieved   {achieved:.1f} rpm   ratio {achieved / args.rpm:.3f}   (target >= 0.97)")
    print(f"429s from the server: {stats['rate_limited']}   (target 0); cells ok: {summary['ok_cells']}/{cells}")


if __name__ == "__main__":
    main()
