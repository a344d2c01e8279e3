"""`rubricflow export`: a run's scores and judgments and an A/B, written as Parquet, CSV and JSONL
and read back by other readers (polars, csv, json), with the run's metadata; the figures checked
against the warehouse's own rows."""

import csv
import json

import numpy as np
import polars as pl
import pytest

from tests.conftest import rows

from .test_pipeline_commands import run


def test_scores_as_parquet_carry_the_runs_metadata(scored):
    home, w, server = scored
    out = home / "scores.parquet"
    result = run("export", "scores", "-c", "c", "-r", "llm-slop@1.0.0", "-o", str(out), *w)
    assert result.returncode == 0, result.stderr
    frame = pl.read_parquet(out)
    expected = rows(
        home / "w.duckdb", "SELECT text_id, score, label FROM text_scores WHERE version = '1.0.0' ORDER BY text_id"
    )
    assert [tuple(r) for r in frame.select("text_id", "score", "label").iter_rows()] == expected
    meta = json.loads(pl.read_parquet_metadata(out)["rubricflow"])
    [[run_id, model]] = rows(
        home / "w.duckdb", "SELECT run_id, model FROM runs JOIN rubrics USING (rubric_hash) WHERE version = '1.0.0'"
    )
    assert meta["kind"] == "scores" and meta["run"]["run_id"] == run_id and meta["run"]["rubric"] == "llm-slop@1.0.0"
    assert meta["run"]["model"] == model and meta["run"]["coverage"] == 1.0 and meta["rubricflow_version"]
    assert set(frame["run_id"]) == {run_id}


def test_judgments_as_csv_with_metadata_beside(scored):
    home, w, server = scored
    [[run_id]] = rows(
        home / "w.duckdb", "SELECT run_id FROM runs JOIN rubrics USING (rubric_hash) WHERE version = '1.1.0'"
    )
    out = home / "judgments.csv"
    result = run("export", "judgments", "--run", run_id, "-o", str(out), *w)
    assert result.returncode == 0, result.stderr
    with out.open(newline="", encoding="utf-8") as fh:
        read = list(csv.DictReader(fh))
    assert len(read) == 60 * 3 and {r["criterion_id"] for r in read} == {"puffery", "scaffolding", "meta-talk"}
    assert all(isinstance(json.loads(r["evidence"]), list) and r["rationale"] for r in read)
    meta = json.loads((home / "judgments.csv.meta.json").read_text())
    assert meta["kind"] == "judgments" and meta["run"]["run_id"] == run_id and meta["run"]["rubric"] == "llm-slop@1.1.0"
    assert "metadata in judgments.csv.meta.json" in result.stderr


def test_a_comparison_as_jsonl_matches_the_paired_deltas(scored):
    home, w, server = scored
    out = home / "ab.jsonl"
    result = run(
        "export", "comparison", "-c", "c", "--a", "llm-slop@1.0.0", "--b", "llm-slop@1.1.0", "-o", str(out), *w
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    overall = lines[0]
    paired = rows(
        home / "w.duckdb",
        "SELECT a.score, b.score FROM text_scores a JOIN text_scores b USING (corpus_id, text_id) "
        "WHERE a.version = '1.0.0' AND b.version = '1.1.0'",
    )
    deltas = np.array([sb - sa for sa, sb in paired])
    assert overall["criterion_id"] is None and overall["n"] == len(paired) == 60
    assert overall["mean_delta"] == pytest.approx(deltas.mean()) and overall["ci_high"] < 0
    assert {r["criterion_id"] for r in lines[1:]} == {"puffery", "scaffolding", "meta-talk"}
    meta = json.loads((home / "ab.jsonl.meta.json").read_text())
    assert meta["rubric_a"] == "llm-slop@1.0.0" and meta["rubric_b"] == "llm-slop@1.1.0"


@pytest.mark.parametrize(
    "args, message",
    [
        (["everything", "-o", "x.csv"], "unknown export 'everything'"),
        (["scores", "-o", "x.xlsx", "--run", "r1"], "say --format parquet, csv or jsonl"),
        (["scores", "-o", "x.csv", "--run", "r-none"], "no run 'r-none'"),
        (["scores", "-o", "x.csv"], "name the run"),
    ],
)
def test_a_bad_export_names_the_problem(scored, tmp_path, args, message):
    home, w, server = scored
    result = run("export", *args, *w, cwd=tmp_path)
    assert result.returncode == 2 and message in result.stderr, result.stderr
