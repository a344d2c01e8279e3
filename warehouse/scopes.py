"""Scoped criteria (#51 item 2): a criterion with `scope: turn | step | tool_call | final` is judged
once per matching unit of each transcript, and the unit scores are reduced per transcript by the
criterion's reducer into one judgment of the run.

How: the units are written as a corpus of their own (`<corpus>.units`, one text per unit and
criterion, its genre naming the criterion) and scored by an ordinary run of the unit rubric (the
scoped criteria, each active for its own units only), so every unit is one judge call through the
same pipeline (budget, shards, evidence verification); `land_scoped.sql` then reduces that run's
judgments onto the transcripts.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from rubricflow.rubrics.model import Rubric
from rubricflow.tasks.loaders.ingest import SCHEMA
from rubricflow.tasks.loaders.transcript_units import Unit, transcript_units

from . import analytics, db, steps
from .sqlfiles import fetch, run_sql, transaction


def unit_corpus_id(corpus_id: str) -> str:
    return f"{corpus_id}.units"


def unit_genre(criterion_id: str) -> str:
    return f"unit.{criterion_id}"


def unit_rubric(rubric: Rubric, criterion_id: str) -> Rubric:
    """The rubric one scoped criterion's units are scored with: that criterion alone, judging the
    whole unit text, without the groups, disqualifiers or goldens of the whole rubric."""
    data = rubric.model_dump(mode="json")
    data["metadata"]["id"] = f"{rubric.metadata.id}-units"
    data["criteria"] = [
        {**c, "scope": "transcript", "select": None, "reducer": "mean"}
        for c in data["criteria"]
        if c["id"] == criterion_id
    ]
    for key in ("groups", "disqualifiers", "goldens", "mapping_examples"):
        data[key] = []
    data["long_transcripts"] = None  # the units are cut already
    return Rubric.model_validate(data)


def cut_units(con: duckdb.DuckDBPyConnection, corpus_id: str, rubric: Rubric) -> list[Unit]:
    """Every scoped criterion's units of every transcript of the corpus."""
    scoped = [c for c in rubric.criteria if c.scoped]
    rows = fetch(con, "scope_messages.sql", corpus=corpus_id)
    units: list[Unit] = []
    for transcript_id, messages in itertools.groupby(rows, key=lambda r: r["transcript_id"]):
        listed = list(messages)
        for criterion in scoped:
            units += transcript_units(transcript_id, listed, criterion, rubric.long_transcripts)
    return units


def long_transcripts(units: list[Unit]) -> dict[str, int]:
    """How many transcripts were judged in segments, or cut to a view, and into how many units: the
    run reports them (a long transcript is never shortened silently)."""
    cut = {(u.transcript_id, u.part) for u in units if u.part in ("segment", "last_turns", "tool_calls")}
    return {
        "segmented": sum(1 for _, part in cut if part == "segment"),
        "segments": sum(1 for u in units if u.part == "segment"),
        "cut": sum(1 for _, part in cut if part != "segment"),
    }


def load_units(con: duckdb.DuckDBPyConnection, corpus_id: str, units: list[Unit], folder: Path) -> str:
    """The units as the texts of the unit corpus (replacing the last cut); its id."""
    rows = [
        {
            "text_id": u.unit_id,
            "text": u.text,
            "input": None,
            "context": None,
            "genre": unit_genre(u.criterion_id),
            "metadata": json.dumps(
                {
                    "transcript_id": u.transcript_id,
                    "criterion_id": u.criterion_id,
                    "position": u.position,
                    "part": u.part,
                }
            ),
            "sha256": hashlib.sha256(u.text.encode("utf-8")).hexdigest(),
            "row": n,
        }
        for n, u in enumerate(units, start=1)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    parquet = folder / "texts.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), parquet)
    units_id = unit_corpus_id(corpus_id)
    steps.load_corpus(con, units_id, f"units of {corpus_id}", parquet, len(rows), 0)
    return units_id


def land_reduced(
    con: duckdb.DuckDBPyConnection,
    corpus_id: str,
    rubric: Rubric,
    hashes: dict[str, str],
    unit_rubrics: dict[str, str],
    run_id: str,
) -> None:
    """The units' judgments (by each criterion's unit rubric, `unit_rubrics`, and the unit judge:
    this run's and earlier runs' landed cells) reduced per transcript onto the run
    (sql/land_scoped.sql). `hashes`: rubric, judge, unit_judge."""
    scoped = [c for c in rubric.criteria if c.scoped]
    with transaction(con):
        con.execute(
            "CREATE OR REPLACE TEMP TABLE scope_reducers AS SELECT unnest($ids) AS criterion_id, "
            "unnest($reducers) AS reducer, unnest($rubrics) AS unit_rubric",
            {
                "ids": [c.id for c in scoped],
                "reducers": [c.reducer for c in scoped],
                "rubrics": [unit_rubrics.get(c.id, "") for c in scoped],
            },
        )
        run_sql(
            con, "land_scoped.sql", corpus=corpus_id, units=unit_corpus_id(corpus_id), run=run_id, **hashes
        )  # fmt: skip
    analytics.refresh_in_batches(con)


def cut_and_load_units(path: Path, corpus_id: str, rubric: Rubric, folder: Path) -> list[Unit]:
    """The units of the rubric's scoped criteria cut from the warehouse's corpus and loaded as its unit
    corpus, in one writer session (a flow body does not open the warehouse itself)."""
    with db.writer(path) as con:
        units = cut_units(con, corpus_id, rubric)
        if units:
            load_units(con, corpus_id, units, folder)
    return units


def land_reduced_in(path: Path, corpus_id: str, rubric: Rubric, hashes: dict, unit_rubrics: dict, run_id: str) -> None:
    """`land_reduced` in a writer session of the warehouse at `path`."""
    with db.writer(path) as con:
        land_reduced(con, corpus_id, rubric, hashes, unit_rubrics, run_id)
