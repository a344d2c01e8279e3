"""`rubricflow demo`: the whole job offline, on the bundled sample corpus and two built-in rubrics."""

from __future__ import annotations

from pathlib import Path

import typer

from rubricflow.errors import InputError

from .common import out, quiet_flow_errors
from .ingest import print_ingest
from .score import print_run, run_score

DEMO_RUBRICS = ("llm-slop", "writing-quality")
DEMO_WAREHOUSE = Path("warehouse") / "demo" / "demo.duckdb"
MARKER = ".rubricflow-demo"  # in the demo's folder: the demo made it, so the demo may empty it


def prepare_folder(warehouse: Path, fresh: bool) -> None:
    """The demo works in a folder of its own: one that is empty or that an earlier demo made. A
    fresh start removes only what the demo writes there (its warehouse, runs and corpus)."""
    folder = warehouse.parent
    marker = folder / MARKER
    if folder.is_dir() and any(folder.iterdir()) and not marker.is_file():
        raise InputError(f"{folder} holds files the demo did not create, and the demo never touches those: "
                         f"give it a folder of its own, e.g. -w {DEMO_WAREHOUSE}")
    folder.mkdir(parents=True, exist_ok=True)
    marker.write_text("made by `rubricflow demo`, which empties this folder's demo files on each --fresh run\n")
    if fresh:
        import shutil

        for leftover in (warehouse, warehouse.with_name(warehouse.name + ".wal")):
            leftover.unlink(missing_ok=True)
        for tree in (folder / "runs", folder / "corpora" / "demo"):
            shutil.rmtree(tree, ignore_errors=True)


def sample_corpus() -> Path:
    """The bundled sample corpus (package data of rubricflow.flows)."""
    import rubricflow.flows

    return Path(rubricflow.flows.__file__).parent / "samples" / "demo_corpus.jsonl"


def demo(warehouse: Path = typer.Option(DEMO_WAREHOUSE, "--warehouse", "-w",
                                        help="The demo's warehouse, in a folder of its own."),
         fresh: bool = typer.Option(True, help="Start from an empty demo warehouse (only ever the demo's own files).")) -> None:
    """The whole job offline: start the offline judge, ingest the sample corpus, score it with two
    built-in rubrics, and print summary tables read from the warehouse."""
    from rubricflow.flows.ingest import ingest_flow

    quiet_flow_errors()
    from rubricflow.tasks.judge_server import RunningServer

    prepare_folder(warehouse, fresh)
    out.print("[bold]rubricflow demo[/]: judging with the OFFLINE judge, a deterministic stand-in (no model, no network)")
    with RunningServer() as server:
        out.print(f"offline judge on {server.base_url}")
        print_ingest(ingest_flow(str(sample_corpus()), str(warehouse), "demo"))
        for rubric in DEMO_RUBRICS:
            summary = run_score("demo", rubric, warehouse, {"base_url": server.base_url})
            print_run(warehouse, summary["run_id"])
    out.print(f"\nwarehouse: {warehouse}   try: rubricflow query -w {warehouse} \"SELECT * FROM text_scores LIMIT 5\"",
              markup=False, highlight=False)
