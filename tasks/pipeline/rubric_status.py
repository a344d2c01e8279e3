"""Forge's usage telemetry and calibration gate: per rubric version, how often it was run and what it
cost, and whether its latest calibration against the humans falls under its threshold:
`metadata.provenance.calibration_threshold` when the rubric states one, else 0.7. The latest
calibration is one `rubricflow calibrate` run (one corpus, one judge setup, named beside it), and its
figure the mean of the Pearson r that run printed per criterion (a criterion's r on fewer than
MIN_LABELS texts is not counted), never a mix of runs, judges or corpora.
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
    """One row per rubric version: usage, latest calibration run (its mean r, corpus, judge setup and
    criteria), threshold, and `flagged` (calibrated and its latest run's mean r under the threshold)."""
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


def calibration_source(row: dict) -> str:
    """Where a version's calibration figure comes from: its calibrate run's corpus, judge setup,
    criteria counted and time ('' when not calibrated)."""
    if row["pearson"] is None:
        return ""
    criteria = f"{row['criteria']} criteri{'on' if row['criteria'] == 1 else 'a'}"
    when = f"{row['calibrated_at']:%Y-%m-%d %H:%M:%S}"
    return f"corpus {row['calibration_corpus']}, judge {judge_of(row)}, {criteria}, calibrated {when}"


def judge_of(row: dict) -> str | None:
    """The judge setup a version's latest calibration checked: its model (when a run here names it)
    and judge hash prefix, and `weighted` for its logprob-weighted scores."""
    if row["pearson"] is None:
        return None
    judge_hash = (row["calibration_judge_hash"] or "?")[:12]
    judge = f"{row['calibration_model']} ({judge_hash})" if row["calibration_model"] else judge_hash
    return judge + (" weighted" if row["calibration_score"] == "weighted" else "")


def describe(row: dict) -> str:
    return (
        f"{row['rubric_id']}@{row['version']} ({row['rubric_hash'][:12]}): latest calibration r = "
        f"{row['pearson']:.3f} < {row['threshold']:g} ({calibration_source(row)})"
    )


def flagged_runs(warehouse_path: str, run_ids: list[str], default: float = DEFAULT_THRESHOLD) -> list[dict]:
    """The flagged rubric versions among those the given runs scored (the nightly job's gate)."""
    with db.reader(warehouse_path) as con:
        hashes = {
            h
            for (h,) in con.execute("SELECT rubric_hash FROM runs WHERE list_contains(?, run_id)", [run_ids]).fetchall()
        }
        return flagged(status(con, default), hashes)
