"""The ingest flow: a corpus file or folder to normalised Parquet, then into the warehouse."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from prefect import flow, get_run_logger

from rubricflow.flows.deploy_params import refuse_unset
from rubricflow.rubrics.importers.common import kebab
from rubricflow.tasks.loaders.ingest import check_corpus_id
from rubricflow.tasks.pipeline.ingest import corpus_dir, load, normalise


@flow(name="ingest-corpus")
def ingest_flow(
    source: str,
    warehouse_path: str,
    corpus_id: str | None = None,
    text_field: str | None = None,
    max_chars: int = 1_000_000,
    limit: int | None = None,
    id_field: str | None = None,
    encoding: str | None = None,
    fields: dict[str, str] | None = None,
    split: str | None = None,
    allow_removal: bool = False,
    announce: bool = True,
    trace_format: str | None = None,
) -> dict:
    """`announce=False`: no `rubricflow.corpus.ingested` event, for a caller that scores the corpus
        itself (the nightly job: the event would start deploy/prefect.yaml's score-on-ingest, a
        second scoring run of the same texts). `fields` maps input / context / genre to the source's columns of other names (see
        tasks/loaders/ingest.ingest_corpus); the CLI's --input-field etc. and `Warehouse.ingest` fill it.
        `split` picks a Hugging Face dataset folder's split (tasks/loaders/hf_datasets.py). An ingest that
        would mark more than half the corpus removed is refused unless `allow_removal`. `trace_format`
    names an agent-trace format (tasks/loaders/trace_formats.py; default: detected)."""
    refuse_unset(source=source, warehouse_path=warehouse_path)
    if corpus_id is not None:
        refuse_unset(corpus_id=corpus_id)
    logger = get_run_logger()
    corpus_id = check_corpus_id(corpus_id or kebab(Path(source).stem, "corpus"))
    out_dir = str(corpus_dir(Path(warehouse_path), corpus_id))
    report = normalise(source, out_dir, text_field, max_chars, limit, id_field, encoding, fields, split, trace_format)
    removed = load(warehouse_path, corpus_id, report, allow_removal, partial=limit is not None)
    logger.info(
        "corpus %s: %s rows in, %s quarantined (%s)",
        corpus_id,
        report.rows_ok,
        report.rows_quarantined,
        report.quarantine,
    )
    result = {"corpus_id": corpus_id, **{k: str(v) if isinstance(v, Path) else v for k, v in asdict(report).items()}}
    result["removed"] = removed
    if announce:
        announce_ingested(result, source, warehouse_path)
    return result


def announce_ingested(result: dict, source: str, warehouse_path: str) -> None:
    """The Prefect event `rubricflow.corpus.ingested` (resource rubricflow.corpus.<corpus>): what a
    deployment trigger matches to score a corpus as soon as it lands (deploy/prefect.yaml's
    `score-on-ingest`); its payload names the corpus and the warehouse."""
    from prefect.events import emit_event

    emit_event(
        event="rubricflow.corpus.ingested",
        resource={
            "prefect.resource.id": f"rubricflow.corpus.{result['corpus_id']}",
            "prefect.resource.name": result["corpus_id"],
        },
        payload={
            "corpus_id": result["corpus_id"],
            "warehouse_path": str(Path(warehouse_path).resolve()),
            "source": str(source),
            "rows_ok": result.get("rows_ok"),
            "rows_quarantined": result.get("rows_quarantined"),
        },
    )
