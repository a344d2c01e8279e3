"""The viewer's run list marks a judge change (#54): a run whose corpus and rubric version were last
scored by another judge names that judge, so a series read across it is not taken for one scale."""

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.model import Rubric
from rubricflow.warehouse import db


def test_the_run_after_a_judge_change_names_the_judge_before(tmp_path):
    bundle = compile_or_raise(Rubric.model_validate({"metadata": {"id": "r"}, "goal": "g", "criteria": [{"id": "a"}]}))
    with db.writer(tmp_path / "w.duckdb") as con:
        db.register_rubric(con, bundle)
        for k, (corpus, judge) in enumerate([("c", "old"), ("c", "old"), ("d", "new"), ("c", "new"), ("c", "new")]):
            con.execute(
                "INSERT INTO runs (run_id, corpus_id, rubric_hash, judge_hash, model, strategy, samples, parameters, "
                "status, started_at) VALUES (?, ?, ?, ?, 'm', 'holistic', 1, '{}', 'completed', "
                "TIMESTAMP '2026-01-01' + to_days(?))",
                [f"run{k}", corpus, bundle.hash, judge, k],
            )
        rows = db.fetch(con, "view_runs.sql", limit=10, offset=0)
    marked = {r["run_id"]: r["judge_before"] for r in rows}
    assert marked == {"run0": None, "run1": None, "run2": None, "run3": "old", "run4": None}
