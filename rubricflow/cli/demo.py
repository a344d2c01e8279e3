"""`rubricflow demo`: the whole job offline, on the bundled sample corpus and two built-in rubrics."""

from __future__ import annotations

from pathlib import Path

import typer

from .common import out
from .ingest import print_ingest
from .score import print_run, run_score

DEMO_RUBRICS = ("llm-slop", "writing-quality")


def sample_corpus() -> Path:
    """The bundled sample corpus (package data of rubricflow.flows)."""
    import rubricflow.flows

    return Path(rubricflow.flows.__file__).parent / "samples" / "demo_corpus.jsonl"


def demo(warehouse: Path = typer.Option(Path("warehouse") / "demo.duckdb", "--warehouse", "-w"),
         fresh: bool = typer.Option(True, help="Start from an empty demo warehouse.")) -> None:
    """The whole job offline: start the offline judge, ingest the sample corpus, score it with two
    built-in rubrics, and print summary tables read from the warehouse."""
    import shutil

    from rubricflow.flows.ingest import ingest_flow
    from rubricflow.tasks.judge_server import RunningServer

    if fresh:
        for leftover in (warehouse, warehouse.with_name(warehouse.name + ".wal")):
            leftover.unlink(missing_ok=True)
        shutil.rmtree(warehouse.parent / "runs", ignore_errors=True)
    out.print("[bold]rubricflow demo[/]: judging with the OFFLINE judge, a deterministic stand-in (no model, no network)")
    with RunningServer() as server:
        out.print(f"offline judge on {server.base_url}")
        print_ingest(ingest_flow(str(sample_corpus()), str(warehouse), "demo"))
        for rubric in DEMO_RUBRICS:
            summary = run_score("demo", rubric, warehouse, {"base_url": server.base_url})
            print_run(warehouse, summary["run_id"])
    out.print(f"\nwarehouse: {warehouse}   try: rubricflow query -w {warehouse} \"SELECT * FROM text_scores LIMIT 5\"",
              markup=False, highlight=False)
