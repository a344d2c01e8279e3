"""The ingest flow's Prefect tasks: normalise a corpus file or folder into Parquet, then load it
into the warehouse (one transaction)."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from rubricflow.tasks.loaders.ingest import IngestReport, ingest_corpus
from rubricflow.warehouse import db, steps


def corpus_dir(warehouse_path: Path, corpus_id: str) -> Path:
    return warehouse_path.parent / "corpora" / corpus_id


@task(name="normalise-corpus", cache_policy=NO_CACHE)
def normalise(
    source: str,
    out_dir: str,
    text_field: str | None,
    max_chars: int,
    limit: int | None = None,
    id_field: str | None = None,
    encoding: str | None = None,
    fields: dict[str, str] | None = None,
    split: str | None = None,
) -> IngestReport:
    return ingest_corpus(
        source,
        out_dir,
        text_field=text_field,
        max_chars=max_chars,
        limit=limit,
        id_field=id_field,
        encoding=encoding,
        fields=fields,
        split=split,
    )


@task(name="load-corpus", cache_policy=NO_CACHE)
def load(warehouse_path: str, corpus_id: str, report: IngestReport) -> None:
    with db.writer(warehouse_path) as con:
        steps.load_corpus(con, corpus_id, report.source, report.parquet, report.rows_ok, report.rows_quarantined)
