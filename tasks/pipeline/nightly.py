"""The nightly flow's Prefect tasks: has the source changed since the last ingest, tonight's
canary corpus (goldens plus a fixed sample), and the night's record."""

from __future__ import annotations

import hashlib
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from rubricflow.errors import InputError
from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.library import resolve
from rubricflow.warehouse import db, steps


def source_digest(source: str | Path) -> str:
    """sha256 of a corpus file, or of a folder's file names, sizes and contents; a source that is
    gone (a deployed night whose file was moved) is one line naming it, not a traceback."""
    path = Path(source)
    if not path.exists():
        raise InputError(f"{source}: the night's source is missing (no such file or folder); nothing was scored")
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for f in files:
        digest.update(str(f.relative_to(path) if path.is_dir() else f.name).encode())
        with f.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


@task(name="ingest-if-changed", cache_policy=NO_CACHE)
def source_changed(source: str, warehouse_path: str, corpus_id: str) -> tuple[bool, str]:
    digest = source_digest(source)
    if not Path(warehouse_path).exists():
        return True, digest
    with db.reader(warehouse_path) as con:
        known = steps.corpus_digest(con, corpus_id)
    return known != digest, digest


@task(name="record-source-digest", cache_policy=NO_CACHE)
def record_source_digest(warehouse_path: str, corpus_id: str, digest: str) -> None:
    """The ingested source's digest, so an unchanged source is not ingested again tomorrow."""
    with db.writer(warehouse_path) as con:
        steps.set_corpus_digest(con, corpus_id, digest)


@task(name="load-canary", cache_policy=NO_CACHE)
def load_canary(warehouse_path: str, corpus_id: str, rubric: str, night: str, size: int) -> str:
    """Tonight's canary corpus for this rubric: its goldens plus a fixed sample of the corpus, under ids
    prefixed with the night, so they are judged again every night (a cell key names the text id). One
    canary corpus per rubric: in a shared one, a rubric needing context met another's goldens without it."""
    compiled = compile_or_raise(resolve(rubric), source=rubric).rubric
    canary, goldens = f"{corpus_id}--canary-{night}--{compiled.metadata.id}", compiled.goldens
    with db.writer(warehouse_path) as con:
        sample = db.fetch(con, "canary_sample.sql", corpus=corpus_id, size=size)
        rows = [
            {
                "text_id": f"{night}:golden:{g.name}",
                "text": g.output,
                "input": g.input or None,
                "context": g.context or None,
            }
            for g in goldens
        ]
        rows += [
            {"text_id": f"{night}:{r['text_id']}", "text": r["text"], "input": r["input"], "context": r["context"]}
            for r in sample
        ]
        import polars as pl  # imported when used: it starts threads, and the warm worker forks with none alive

        frame = pl.DataFrame(rows, schema={"text_id": pl.Utf8, "text": pl.Utf8, "input": pl.Utf8, "context": pl.Utf8})
        with db.transaction(con):
            steps.load_texts(con, canary, frame, f"canary of {corpus_id} for {night}")
    return canary


@task(name="record-night", cache_policy=NO_CACHE)
def record_night(warehouse_path: str, night: str, corpus_id: str, run: dict, canary_run: dict | None) -> dict:
    with db.writer(warehouse_path) as con:
        steps.run_sql(
            con,
            "record_night.sql",
            night=night,
            corpus=corpus_id,
            run=run["run_id"],
            canary_run=canary_run["run_id"] if canary_run else None,
        )
        return db.fetch(con, "night_report.sql", night=night, corpus=corpus_id, run=run["run_id"])[0]
