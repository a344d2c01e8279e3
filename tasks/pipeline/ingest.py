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


# The source normalised into Parquet: tasks/loaders/ingest.ingest_corpus itself, as a step of the flow.
normalise = task(name="normalise-corpus", cache_policy=NO_CACHE)(ingest_corpus)


@task(name="load-corpus", cache_policy=NO_CACHE)
def load(
    warehouse_path: str, corpus_id: str, report: IngestReport, allow_removal: bool = False, partial: bool = False
) -> int:
    """Load the normalised corpus; the texts it marks removed, how many. One that would mark most of
    the corpus removed is refused unless `allow_removal` (warehouse/steps.removals); a `partial`
    read (`--limit`: the source's first rows) removes none (it marked the rest of a corpus removed)."""
    with db.writer(warehouse_path) as con:
        removed = 0 if partial else steps.removals(con, corpus_id, report.source, report.parquet, not allow_removal)
        steps.load_corpus(
            con, corpus_id, report.source, report.parquet, report.rows_ok, report.rows_quarantined, keep_absent=partial
        )
    return removed
