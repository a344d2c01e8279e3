"""Forge's usage telemetry and calibration gate: per rubric version, how often it was run and what it
cost, and whether its latest calibration against the humans (mean Pearson r over its criteria) falls
under its threshold: `metadata.provenance.calibration_threshold` when the rubric states one, else 0.7
(calibrations on fewer than MIN_LABELS texts are not counted).
`rubric status` prints it; the nightly job fails on a flagged rubric it scored."""

from __future__ import annotations

import json

import duckdb

from rubricflow.rubrics import metrics
from rubricflow.warehouse import db

DEFAULT_THRESHOLD = 0.7
# The gate counts a calibration made on at least as many texts as an estimate needs: one on 2 texts
# (r = +/-1 whatever the agreement) cleared a version flagged at r = -1 on 20.
MIN_LABELS = 10


def threshold_of(rubric_json: str | None, default: float = DEFAULT_THRESHOLD) -> float:
    """The rubric's own calibration threshold, from its stored document's provenance."""
    if not rubric_json:
        return default
    value = (json.loads(rubric_json).get("metadata") or {}).get("provenance", {}).get("calibration_threshold")
    try:
        return default if value is None else float(value)
    except (TypeError, ValueError):
        return default


def status(con: duckdb.DuckDBPyConnection, default: float = DEFAULT_THRESHOLD) -> list[dict]:
    """One row per rubric version: usage, latest calibration, threshold, and `flagged` (calibrated and under it)."""
    documents = dict(con.execute("SELECT rubric_hash, document FROM rubrics").fetchall())
    rows = db.fetch(con, "rubric_status.sql", least=MIN_LABELS)
    for row in rows:
        row["threshold"] = threshold_of(documents.get(row["rubric_hash"]), default)
        row["flagged"] = row["pearson"] is not None and row["pearson"] < row["threshold"]
        if row["pearson"] is not None:
            metrics.calibration(row["rubric_id"], row["version"], row["pearson"])
    return rows


def flagged(rows: list[dict], hashes: set[str] | None = None) -> list[dict]:
    return [r for r in rows if r["flagged"] and (hashes is None or r["rubric_hash"] in hashes)]


def describe(row: dict) -> str:
    return (
        f"{row['rubric_id']}@{row['version']} ({row['rubric_hash'][:12]}): latest calibration r = "
        f"{row['pearson']:.3f} < {row['threshold']:g}"
    )


def flagged_runs(warehouse_path: str, run_ids: list[str], default: float = DEFAULT_THRESHOLD) -> list[dict]:
    """The flagged rubric versions among those the given runs scored (the nightly job's gate)."""
    with db.reader(warehouse_path) as con:
        hashes = {
            h
            for (h,) in con.execute("SELECT rubric_hash FROM runs WHERE list_contains(?, run_id)", [run_ids]).fetchall()
        }
        return flagged(status(con, default), hashes)
