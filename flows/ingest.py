"""The ingest flow: a corpus file or folder to normalised Parquet, then into the warehouse."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from rubrics.importers.common import kebab
from tasks.ingest import IngestReport, ingest_corpus
from warehouse import db, steps


def corpus_dir(warehouse_path: Path, corpus_id: str) -> Path:
    return warehouse_path.parent / "corpora" / corpus_id


@task(name="normalise-corpus", cache_policy=NO_CACHE)
def normalise(source: str, out_dir: str, text_field: str | None, max_chars: int) -> IngestReport:
    return ingest_corpus(source, out_dir, text_field=text_field, max_chars=max_chars)


@task(name="load-corpus", cache_policy=NO_CACHE)
def load(warehouse_path: str, corpus_id: str, report: IngestReport) -> None:
    with db.writer(warehouse_path) as con:
        steps.load_corpus(con, corpus_id, report.source, report.parquet, report.rows_ok, report.rows_quarantined)


@flow(name="ingest-corpus")
def ingest_flow(source: str, warehouse_path: str, corpus_id: str | None = None, text_field: str | None = None,
                max_chars: int = 1_000_000) -> dict:
    logger = get_run_logger()
    corpus_id = corpus_id or kebab(Path(source).stem, "corpus")
    report = normalise(source, str(corpus_dir(Path(warehouse_path), corpus_id)), text_field, max_chars)
    load(warehouse_path, corpus_id, report)
    logger.info("corpus %s: %s rows in, %s quarantined (%s)", corpus_id, report.rows_ok, report.rows_quarantined,
                report.quarantine)
    return {"corpus_id": corpus_id, **{k: str(v) if isinstance(v, Path) else v for k, v in asdict(report).items()}}
