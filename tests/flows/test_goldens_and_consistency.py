"""`rubricflow rubric test` runs goldens through the offline judge server; repeat sampling shows
per-criterion variance and flip rate; calibration against the warehouse's own judgments."""

import os
import subprocess

import duckdb
import pytest
import yaml

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.rubrics.library import Library
from rubricflow.tasks.stats.calibration import calibration
from rubricflow.warehouse import db
from tests.conftest import EXE, write_corpus


def cli(*args, cwd, env=None):
    return subprocess.run(
        [EXE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


# waza's own built-ins, converted unchanged: their one criterion is waza's judge prompt (no anchors,
# no patterns, nothing the deterministic offline judge reads), so only a real model can pass their goldens
PROMPT_ONLY = {"refusal-correctness", "tool-use-appropriateness"}


def test_builtin_goldens_pass_against_the_offline_judge(tmp_path):
    entries = [e for e in Library().entries() if e.id not in PROMPT_ONLY]
    assert len(entries) == len(Library().entries()) - len(PROMPT_ONLY)
    result = cli("rubric", "test", *(f"{e.id}@{e.version}" for e in entries), cwd=tmp_path, env={"OPENAI_BASE_URL": ""})
    assert result.returncode == 0, result.stdout + result.stderr
    total = sum(len(e.rubric.goldens) for e in entries)
    assert f"{total}/{total} goldens pass" in result.stdout
    results = [row.split("│")[-3].strip() for row in result.stdout.splitlines() if row.count("│") > 6]
    assert results.count("PASS") == total and "FAIL" not in results  # (AntiLLMY's disqualified label is FAIL)
    assert "Unclosed" not in result.stderr


def test_a_wrong_golden_fails_with_its_reason(tmp_path):
    doc = yaml.safe_load(Library().get("llm-slop").path.read_text())
    doc["goldens"][1]["expected"] = "pass"  # the slop example, now claimed to pass
    doc["goldens"][0]["expected_scores"] = {"meta-talk": 0}
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(doc))
    result = cli("rubric", "test", "r.yaml", cwd=tmp_path, env={"OPENAI_BASE_URL": ""})
    assert result.returncode == 1
    out = " ".join(result.stdout.split())
    assert "0/2 goldens pass" in out
    assert "expected pass, got fail" in out and "meta-talk: expected 0, got 1" in out


@pytest.fixture(scope="module")
def sampled(tmp_path_factory):
    from tests.conftest import ThreadServer

    tmp = tmp_path_factory.mktemp("sampled")
    server = ThreadServer()
    try:
        warehouse = str(tmp / "w.duckdb")
        ingest_flow(str(write_corpus(tmp / "c.jsonl", 24)), warehouse, "c")
        judge = {"base_url": server.base_url, "samples": 4, "temperature": 1.0}
        first = score_corpus("c", "writing-quality", warehouse, judge)
        rows = judgments(warehouse)
        # the same settings again in a fresh warehouse: the per-sample seeds reproduce every draw
        again_wh = str(tmp / "again.duckdb")
        ingest_flow(str(tmp / "c.jsonl"), again_wh, "c")
        score_corpus("c", "writing-quality", again_wh, judge)
        flat = score_corpus("c", "writing-quality", warehouse, {"base_url": server.base_url})
        yield {
            "warehouse": warehouse,
            "run": first["run_id"],
            "flat_run": flat["run_id"],
            "rows": rows,
            "again": judgments(again_wh),
        }
    finally:
        server.stop()


def judgments(warehouse):
    con = duckdb.connect(warehouse, read_only=True)
    try:
        return con.execute("SELECT text_id, criterion_id, sample, value FROM judgments ORDER BY ALL").fetchall()
    finally:
        con.close()


def test_repeat_samples_differ_and_are_reproducible(sampled):
    assert len(sampled["rows"]) == 24 * 3 * 4
    assert sampled["rows"] == sampled["again"]
    by_cell = {}
    for text, criterion, _, value in sampled["rows"]:
        by_cell.setdefault((text, criterion), set()).add(value)
    assert any(len(v) > 1 for v in by_cell.values())  # temperature > 0: samples disagree somewhere


def test_consistency_per_criterion(sampled):
    with db.reader(sampled["warehouse"]) as con:
        rows = {r["criterion_id"]: r for r in db.fetch(con, "run_criteria.sql", run=sampled["run"])}
        units = con.execute(
            """SELECT j.criterion_id, j.text_id, list(j.unit_score), any_value(c.pass_threshold)
                               FROM judgments j JOIN criteria c USING (rubric_hash, criterion_id)
                               WHERE j.run_id = ? GROUP BY ALL""",
            [sampled["run"]],
        ).fetchall()
        flat = db.fetch(con, "run_criteria.sql", run=sampled["flat_run"])
    for criterion, row in rows.items():
        cells = [(u, t) for c, _, u, t in units if c == criterion]
        flips = sum(1 for u, t in cells if min(u) < t <= max(u)) / len(cells)
        assert row["flip_rate"] == pytest.approx(flips)
    assert any(r["flip_rate"] > 0 for r in rows.values()) and any(r["sample_stddev"] > 0 for r in rows.values())
    assert all(r["flip_rate"] is None for r in flat)  # one sample per cell: nothing to compare


def test_calibration_of_warehouse_judgments_in_native_units(sampled, tmp_path):
    """Labels equal to the judge's own native scores agree perfectly; shifted by one level they
    keep Pearson 1 but lose exact agreement."""
    import polars as pl

    from rubricflow.warehouse import steps

    warehouse = sampled["warehouse"]
    with db.reader(warehouse) as con:
        native = con.execute(
            """SELECT s.text_id, s.criterion_id, c.scale_min + s.unit_score * (c.scale_max - c.scale_min)
                                FROM criterion_scores s JOIN runs r USING (corpus_id, rubric_hash, judge_hash)
                                JOIN criteria c USING (rubric_hash, criterion_id) WHERE r.run_id = ?""",
            [sampled["flat_run"]],
        ).fetchall()
    labels = pl.DataFrame(
        {
            "text_id": [t for t, _, _ in native],
            "criterion_id": [c for _, c, _ in native],
            "rater": ["copy"] * len(native),
            "score": [v for _, _, v in native],
        }
    )
    shifted = labels.with_columns(pl.lit("shifted").alias("rater"), (pl.col("score") + 1).alias("score"))
    with db.writer(warehouse) as con:
        steps.load_labels(con, "c", pl.concat([labels, shifted]), "test")
    with db.reader(warehouse) as con:
        from rubricflow.tasks.judging.config import JudgeConfig

        exact = calibration(con, "c", "", ["copy"], "writing-quality", JudgeConfig().model)
        moved = calibration(con, "c", "", ["shifted"], "writing-quality", JudgeConfig().model)
    for row in exact.rows:
        assert row.n == 24
        assert sum(row.confusion[i][i] for i in range(len(row.levels))) == 24
    for row in moved.rows:
        assert sum(row.confusion[i][i] for i in range(len(row.levels))) == 0
