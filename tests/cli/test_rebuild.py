"""`rubricflow rebuild`: the materialised analytics recomputed from the raw rows."""

import subprocess
import sys

from rubricflow.warehouse import db
from tests.warehouse.test_analytics import assert_materialised_equals_scratch, ingest, judge


def rebuild(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rubricflow.launch", "rebuild", *args], capture_output=True, text=True, timeout=120
    )


def test_rebuild_restores_tables_edited_by_hand_and_says_what_it_built(tmp_path):
    path = tmp_path / "w.duckdb"
    with db.writer(path) as con:
        ingest(con, tmp_path, 11)
        judge(con, tmp_path, 0, 11, kill=False)
        texts = con.execute("SELECT count(*) FROM current_texts").fetchone()[0]
        con.execute("DELETE FROM mat_text_scores")
        con.execute("UPDATE mat_criterion_scores SET unit_score = 0.123")
    done = rebuild("-w", str(path))
    assert done.returncode == 0, done.stderr
    assert f"{texts:,} texts in 1 judgment sets" in done.stdout
    assert_materialised_equals_scratch(path)


def test_rebuild_of_a_missing_warehouse_names_it(tmp_path):
    done = rebuild("-w", str(tmp_path / "nowhere.duckdb"))
    assert done.returncode == 2
    assert "nowhere.duckdb" in done.stderr and "no warehouse" in done.stderr
