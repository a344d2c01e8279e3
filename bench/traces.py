"""Bench: a corpus of agent transcripts ingested and every trajectory check evaluated (#51).

N synthetic transcripts of about 40 messages each (a shared system prompt and tool schemas, user
turns, tool calls with arguments, tool results, some of them errors) as OpenAI chat JSONL; ingested
(tasks/loaders/ingest + warehouse/steps.load_corpus, the ingest flow's two steps without Prefect)
and every kind of trajectory check (warehouse/checks.py) evaluated. Prints the ingest and check
times, the peak RSS, and the warehouse's bytes per transcript against the raw JSONL's. Baseline,
in the same run: the same transcripts' renderings ingested as a plain-text corpus.
Target at users' size (1,000,000 transcripts): <= 10 min, peak RSS <= 4 GB on 2 cores. The chat
file is read by DuckDB (warehouse/chat_files.py); the row-by-row Python path took ~23 min of CPU.
The machine is shared: the bench also prints CPU seconds, and the minutes 1,000,000 would take on
two cores of their own (CPU seconds / 2), beside the wall-clock extrapolation.

    python bench/traces.py [--transcripts 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from common import peak_rss_mib

TOOLS = ["search_flights", "get_weather", "lookup_booking", "book_flight", "send_email"]
SYSTEM = "You are a travel agent for Example Air. " + " ".join(
    f"Rule {k}: always confirm the traveller's name, dates and budget before booking; never invent flights."
    for k in range(16)
)
SCHEMAS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name.replace('_', ' ')} for the traveller; returns JSON. " * 4,
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "day": {"type": "string"}, "seats": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
    for name in TOOLS
]
CPU_S: dict[str, float] = {}  # each corpus's CPU seconds, ingest and checks
CITIES = ["Paris", "Rome", "Oslo", "Lima", "Kyoto", "Quito", "Accra", "Perth"]
CHECKS = {
    "searched": {"kind": "tool_used", "tool": "search_flights"},
    "no-email": {"kind": "tool_not_used", "tool": "send_email"},
    "search-then-book": {"kind": "tool_sequence", "tools": ["search_flights", "book_flight"]},
    "both-any-order": {"kind": "tool_sequence", "tools": ["book_flight", "search_flights"], "order": "any_order"},
    "to-paris": {"kind": "argument", "tool": "search_flights", "path": "$.city", "equals": "Paris"},
    "seats-number": {"kind": "argument", "tool": "book_flight", "path": "$.seats", "matches": "^[1-4]$"},
    "bounded-steps": {"kind": "step_count", "min": 2, "max": 30},
    "no-errors": {"kind": "error_results", "matches": "^ERROR"},
    "confirms": {"kind": "final_message", "matches": "(?i)confirmed", "not_matches": "(?i)sorry"},
}


def transcript(i: int) -> dict:
    """About 40 messages: system, then 9 rounds of user / assistant call / tool result / assistant."""
    messages = [{"role": "system", "content": SYSTEM}]
    for turn in range(9):
        tool = TOOLS[(i + turn) % len(TOOLS)]
        city = CITIES[(i * 3 + turn) % len(CITIES)]
        cid = f"call_{i}_{turn}"
        args = {"city": city, "day": f"2026-12-{turn + 1:02d}", "seats": 1 + (i + turn) % 4}
        messages += [
            {"role": "user", "content": f"Traveller {i} asks, turn {turn}: what about {city} on day {turn + 1}?"},
            {"role": "assistant", "content": None, "tool_calls": [_call(cid, tool, args)]},
            {"role": "tool", "tool_call_id": cid, "content": _result(i, turn, city)},
            {"role": "assistant", "content": f"For {city} I found option {i % 97}-{turn}; shall I go on?"},
        ]
    messages.append({"role": "user", "content": "Yes, book it."})
    closing = "Your booking is confirmed." if i % 5 else "Sorry, nothing is available."
    messages.append({"role": "assistant", "content": f"{closing} Reference {i:08d}."})
    return {"id": f"tr{i:08d}", "messages": messages, "tools": SCHEMAS}


def _call(cid: str, tool: str, args: dict) -> dict:
    return {"id": cid, "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}


def _result(i: int, turn: int, city: str) -> str:
    if (i + turn) % 23 == 0:
        return "ERROR: upstream timeout"
    return json.dumps({"city": city, "flights": [f"EA{(i + turn) % 900 + 100}", f"EA{(i * turn) % 900 + 100}"]})


def write_transcripts(path: Path, n: int) -> int:
    """The JSONL file; its number of messages."""
    messages = 0
    with path.open("w") as fh:
        for i in range(n):
            record = transcript(i)
            messages += len(record["messages"])
            fh.write(json.dumps(record) + "\n")
    return messages


def ingest(source: Path, warehouse: Path, corpus: str) -> tuple[float, object]:
    """Wall seconds of the ingest; prints its two steps' wall and CPU seconds (the machine is shared)."""
    from rubricflow.tasks.loaders.ingest import ingest_corpus
    from rubricflow.warehouse import db, steps

    t0, c0 = time.perf_counter(), time.process_time()
    report = ingest_corpus(source, warehouse.parent / "corpora" / corpus)
    t1, c1 = time.perf_counter(), time.process_time()
    with db.writer(warehouse) as con:
        steps.load_corpus(con, corpus, str(source), report.parquet, report.rows_ok, report.rows_quarantined)
    t2, c2 = time.perf_counter(), time.process_time()
    print(
        f"  {corpus}: normalise {t1 - t0:.1f} s wall / {c1 - c0:.1f} s CPU, load {t2 - t1:.1f} s / {c2 - c1:.1f} s CPU"
    )
    CPU_S[corpus] = CPU_S.get(corpus, 0.0) + c2 - c0
    return t2 - t0, report


def evaluate(warehouse: Path, corpus: str) -> tuple[float, int]:
    from rubricflow.rubrics.compiler import compile_or_raise
    from rubricflow.rubrics.model import Rubric
    from rubricflow.warehouse import checks, db

    criteria = [{"id": cid, "check": check} for cid, check in CHECKS.items()]
    rubric = Rubric.model_validate({"metadata": {"id": "bench-traces"}, "goal": "Books well.", "criteria": criteria})
    bundle = compile_or_raise(rubric)
    with db.writer(warehouse) as con:
        db.register_rubric(con, bundle)
        t0, c0 = time.perf_counter(), time.process_time()
        checks.evaluate_checks(con, corpus, bundle, "bench-run", "bench-judge")
        seconds = time.perf_counter() - t0
        CPU_S[corpus] = CPU_S.get(corpus, 0.0) + time.process_time() - c0
        print(f"  checks and their analytics refresh: {time.process_time() - c0:.1f} s CPU")
        [(judgments,)] = con.execute("SELECT count(*) FROM judgments WHERE run_id = 'bench-run'").fetchall()
    return seconds, judgments


def plain_baseline(source: Path, tmp: Path, n: int) -> float:
    """The transcripts' renderings as a plain-text corpus, ingested the same way."""
    import duckdb

    from rubricflow.warehouse import db

    texts = tmp / "plain.parquet"
    # Under the warehouse's memory limit: with DuckDB's default (80% of the machine) this copy grows
    # with the renderings (200,000 transcripts: 2,198 MiB; at 2GB 1,696), the whole run's peak.
    with duckdb.connect(str(tmp / "w.duckdb"), read_only=True, config=db.memory_config()) as con:
        con.execute(f"COPY (SELECT text_id, text FROM texts) TO '{texts}' (FORMAT parquet)")
    seconds, _ = ingest(texts, tmp / "plain" / "w.duckdb", "plain")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transcripts", type=int, default=100_000)
    args = parser.parse_args()
    n = args.transcripts
    os.environ.setdefault("RUBRICFLOW_DUCKDB_MEMORY", "2GB")  # the warehouse's share of the 4 GB budget
    print(f"load average at start: {os.getloadavg()[0]:.2f} (2 cores, shared)")
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as folder:
        tmp = Path(folder)
        source = tmp / "chats.jsonl"
        t0 = time.perf_counter()
        messages = write_transcripts(source, n)
        print(f"wrote {n:,} transcripts, {messages:,} messages, {source.stat().st_size / 1e6:,.0f} MB "
              f"in {time.perf_counter() - t0:.1f} s")  # fmt: skip
        seconds, report = ingest(source, tmp / "w.duckdb", "traces")
        print(f"ingest: {seconds:.1f} s ({n / seconds:,.0f} transcripts/s, {report.messages:,} messages)")
        check_s, judgments = evaluate(tmp / "w.duckdb", "traces")
        print(f"checks: {len(CHECKS)} kinds evaluated in {check_s:.1f} s ({judgments:,} judgments)")
        print(
            f"peak RSS through ingest and checks: {peak_rss_mib():,.0f} MiB; load average now {os.getloadavg()[0]:.2f}"
        )
        stored = (tmp / "w.duckdb").stat().st_size + sum(p.stat().st_size for p in (tmp / "corpora").rglob("*"))
        raw = source.stat().st_size
        print(f"bytes per transcript: warehouse file {(tmp / 'w.duckdb').stat().st_size / n:,.0f}, "
              f"with the corpus Parquet {stored / n:,.0f}, raw JSONL {raw / n:,.0f}")  # fmt: skip
        plain = plain_baseline(source, tmp, n)
        print(f"baseline: the renderings as a plain-text corpus ingested in {plain:.1f} s")
        per_million = (seconds + check_s) * 1_000_000 / n / 60
        on_two_cores = CPU_S["traces"] / 2 * 1_000_000 / n / 60
        print(f"ratio transcripts / plain-text ingest: {seconds / plain:.2f}; at 1,000,000: ~{per_million:.1f} min "
              f"wall at this load, ~{on_two_cores:.1f} min on two cores of their own "
              f"({CPU_S['traces']:.0f} s CPU here)")  # fmt: skip
    print(f"peak RSS of the whole run, the baseline included: {peak_rss_mib():,.0f} MiB")


if __name__ == "__main__":
    main()
