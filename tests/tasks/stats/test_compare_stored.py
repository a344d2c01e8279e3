"""Stored A/B comparisons (tasks/stats/compare.py: `compared`, `refresh_stored`): read back while
the corpus's analytics have not moved, recomputed when they have and when a run finishes."""

import json

from rubricflow.tasks.stats.compare import compare, compared, refresh_stored, stored_comparison
from rubricflow.warehouse import db
from tests.warehouse.test_analytics import BUNDLES, SETS, ingest, judge

A = [(BUNDLES[SETS[0][0]].hash, SETS[0][1])]
B = [(BUNDLES[SETS[1][0]].hash, SETS[1][1])]


def rounded(c) -> object:
    """A comparison's JSON with floats to 9 places (DuckDB's parallel sums differ in the last bits)."""

    def walk(v):
        if isinstance(v, float):
            return round(v, 9)
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        return [walk(x) for x in v] if isinstance(v, list) else v

    return walk(json.loads(c.to_json()))


def scored_twice(tmp_path):
    path = tmp_path / "w.duckdb"
    with db.writer(path) as con:
        ingest(con, tmp_path, 21)
        judge(con, tmp_path, 0, 21, kill=False)
        judge(con, tmp_path, 1, 22, kill=False)
    return path


def test_a_second_question_reads_the_stored_comparison_until_the_corpus_moves(tmp_path):
    path = scored_twice(tmp_path)
    first = compared(path, "c", A, B, top=5, resamples=50)
    assert first.summary["texts_paired"] > 0
    with db.writer(path) as con:  # mark the stored copy, to see which one the next question reads
        con.execute('UPDATE ab_results SET result = json_merge_patch(result, \'{"rubric_a": "stored"}\')')
    assert compared(path, "c", A, B, top=5, resamples=50).rubric_a == "stored"
    assert compared(path, "c", A, B, top=5, resamples=99).rubric_a != "stored"  # other options: computed
    with db.writer(path) as con:
        judge(con, tmp_path, 0, 23, kill=False)  # more judgments land: the analytics move on
        assert stored_comparison(con, "c", A, B, None) is None
    again = compared(path, "c", A, B, top=5, resamples=50)
    assert again.rubric_a != "stored"
    with db.reader(path) as con:
        assert rounded(again) == rounded(compare(con, "c", A, B, top=5, resamples=50))


def test_a_finished_run_recomputes_the_stored_comparisons_it_made_stale(tmp_path):
    path = scored_twice(tmp_path)
    compared(path, "c", A, B, top=5, resamples=50)
    with db.writer(path) as con:
        judge(con, tmp_path, 1, 24, kill=False)
        assert refresh_stored(con, "run-2400-1") == 0  # no such run: nothing on its corpus
        run = con.execute("SELECT max(run_id) FROM runs WHERE run_id LIKE 'run-24-%'").fetchone()[0]
        assert refresh_stored(con, run) == 1
        current = stored_comparison(con, "c", A, B, {"top": 5, "resamples": 50, "seed": 0})
        assert current is not None
        assert rounded(current) == rounded(compare(con, "c", A, B, top=5, resamples=50))
        assert refresh_stored(con, run) == 0  # current now
        (stored,) = con.execute("SELECT result FROM ab_results").fetchone()
        assert json.loads(stored)["summary"]["texts_paired"] == current.summary["texts_paired"]
