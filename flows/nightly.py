"""The nightly job: bring the corpus up to date, score it with each rubric (only new or changed
texts and changed rubrics cost calls), re-judge a canary set, record the night, compare it with
the night before, and fail loudly when coverage drops under the threshold."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import polars as pl
from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from flows.artifacts import artifact_key, md_table, publish
from flows.ingest import ingest_flow
from flows.score import score_corpus
from rubrics.compiler import compile_or_raise
from rubrics.library import resolve
from warehouse import db, steps


class CoverageError(RuntimeError):
    """Coverage under the threshold: the night's flow run fails (after its summary is recorded)."""


def source_digest(source: str | Path) -> str:
    """sha256 of a corpus file, or of a folder's file names, sizes and contents."""
    path = Path(source)
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
        known = con.execute("SELECT source_sha256 FROM corpora WHERE corpus_id = ?", [corpus_id]).fetchall()
    return (not known or known[0][0] != digest), digest


@task(name="load-canary", cache_policy=NO_CACHE)
def load_canary(warehouse_path: str, corpus_id: str, rubric: str, night: str, size: int) -> str:
    """Tonight's canary corpus: the rubric's goldens plus a fixed sample of the corpus, under ids
    prefixed with the night, so they are judged again every night (a cell key names the text id)."""
    canary = f"{corpus_id}--canary-{night}"
    goldens = compile_or_raise(resolve(rubric), source=rubric).rubric.goldens
    with db.writer(warehouse_path) as con:
        sample = db.fetch(con, "canary_sample.sql", corpus=corpus_id, size=size)
        rows = [{"text_id": f"{night}:golden:{g.name}", "text": g.output, "input": g.input or None,
                 "context": g.context or None} for g in goldens]
        rows += [{"text_id": f"{night}:{r['text_id']}", "text": r["text"], "input": r["input"], "context": r["context"]}
                 for r in sample]
        frame = pl.DataFrame(rows, schema={"text_id": pl.Utf8, "text": pl.Utf8, "input": pl.Utf8, "context": pl.Utf8})
        with db.transaction(con):
            steps.load_texts(con, canary, frame, f"canary of {corpus_id} for {night}")
    return canary


@task(name="record-night", cache_policy=NO_CACHE)
def record_night(warehouse_path: str, night: str, corpus_id: str, run: dict, canary_run: dict | None) -> dict:
    with db.writer(warehouse_path) as con:
        steps.run_sql(con, "record_night.sql", night=night, corpus=corpus_id, run=run["run_id"],
                      canary_run=canary_run["run_id"] if canary_run else None)
        return db.fetch(con, "night_report.sql", night=night, corpus=corpus_id, run=run["run_id"])[0]


@flow(name="nightly-scoring", log_prints=True)
def nightly_scoring(source: str, corpus_id: str, rubrics: list[str], warehouse_path: str, judge: dict | None = None,
                    min_coverage: float = 0.95, canary_size: int = 20, night: str | None = None,
                    shard_size: int = 2000) -> list[dict]:
    """`judge` holds JudgeConfig fields (never the API key). `night` defaults to today's UTC date."""
    logger = get_run_logger()
    night = night or dt.datetime.now(dt.timezone.utc).date().isoformat()
    changed, digest = source_changed(source, warehouse_path, corpus_id)
    if changed:
        ingest_flow(source, warehouse_path, corpus_id)
        with db.writer(warehouse_path) as con:
            con.execute("UPDATE corpora SET source_sha256 = ? WHERE corpus_id = ?", [digest, corpus_id])
    else:
        logger.info("source %s unchanged since the last ingest: not re-ingested", source)
    nights = []
    for rubric in rubrics:
        run = score_corpus(corpus_id, rubric, warehouse_path, judge, shard_size)
        canary_run = None
        if canary_size > 0:
            canary = load_canary(warehouse_path, corpus_id, rubric, night, canary_size)
            canary_run = score_corpus(canary, rubric, warehouse_path, judge, shard_size)
        nights.append(record_night(warehouse_path, night, corpus_id, run, canary_run))
    publish(f"# Night {night}: `{corpus_id}`\n\n" + md_table(nights), artifact_key("nightly", corpus_id),
            f"rubricflow nightly scoring of {corpus_id} on {night}")
    low = [n for n in nights if n["coverage"] is None or n["coverage"] < min_coverage]
    if low:
        raise CoverageError("; ".join(f"{n['rubric']}: coverage {n['coverage'] or 0:.1%} < {min_coverage:.1%} "
                                      f"(previous night {_pct(n['prev_coverage'])}, errors {n['failed_cells']})" for n in low))
    return nights


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1%}"
