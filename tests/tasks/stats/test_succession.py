"""The nightly series across a judge change (#54 item 3): nights judged by a bridged judge are
restated on its successor's scale through the newest stitchable bridge, with the bridge's band;
nights of the new judge, and bridges that were refused, restate nothing."""

import json

from rubricflow.tasks.stats import succession
from rubricflow.warehouse import db


def bridge_row(con, bridge_id: str, new: str, stitchable: bool, high: float) -> None:
    score = {"mapping": "linear", "knots": [[0.0, 1.0], [0.1, high]], "band": [0.49, 0.51]}
    db.run_sql(
        con, "bridge_record.sql", bridge=bridge_id, corpus="c", rubric="r", old="old", new=new, texts=10,
        stitchable=stitchable, verdict=json.dumps({"criteria": [], "score": score, "refusals": []}),
    )  # fmt: skip


def test_the_old_judges_nights_are_restated_on_the_new_judges_scale_with_the_band(tmp_path):
    with db.writer(tmp_path / "w.duckdb") as con:
        for k, (judge, mean) in enumerate([("old", 0.5), ("old", 0.6), ("new", 0.55)]):
            con.execute(
                "INSERT INTO nights (night, corpus_id, rubric_id, rubric_hash, judge_hash, run_id, mean_score, "
                "recorded_at) VALUES (?, 'c', 'r', 'r', ?, ?, ?, TIMESTAMP '2026-01-01' + to_days(?))",
                [f"n{k}", judge, f"run{k}", mean, k],
            )
        bridge_row(con, "b1", "new", True, 0.9)
        bridge_row(con, "b2", "reorders", False, 0.2)  # refused: never used
        nights = succession.series(con, "c", "r")
    assert [n["night"] for n in nights] == ["n0", "n1", "n2"]
    first, second, third = nights
    assert first["new_judge"] == "new" and abs(first["restated"] - 0.5) < 1e-12
    assert abs(second["restated"] - 0.58) < 1e-12
    assert [round(x, 12) for x in second["band"]] == [0.57, 0.59]
    assert third["new_judge"] is None and "restated" not in third


def test_a_stored_ab_is_restated_through_each_sides_bridge_and_a_flip_is_said(tmp_path):
    """Rubric versions ra and rb, both judged by the old judge: A ahead by 0.05. The new judge reads
    ra 0.1 lower and rb as the old one did: on its scale B is ahead, and the tool says it flips."""
    import numpy as np

    noise = np.random.default_rng(0).normal(0, 0.01, 40)
    with db.writer(tmp_path / "w.duckdb") as con:
        for rubric, shift in (("ra", 0.05), ("rb", 0.0)):
            con.executemany(
                "INSERT INTO mat_text_scores (corpus_id, rubric_hash, judge_hash, text_id, score) "
                "VALUES ('c', ?, 'old', ?, ?)",
                [(rubric, f"t{k}", 0.5 + shift + noise[k]) for k in range(40)],
            )
        sides = json.dumps({"a": [["ra", "old"]], "b": [["rb", "old"]]})
        con.execute("INSERT INTO ab_results VALUES ('c', ?, '{}', 1, now(), 0.1, '{}')", [sides])
        for rubric, low, high in (("ra", -0.1, 0.9), ("rb", 0.0, 1.0)):
            score = {"mapping": "linear", "knots": [[0.0, 1.0], [low, high]], "band": [0.4, 0.6]}
            db.run_sql(
                con, "bridge_record.sql", bridge=f"b{rubric}", corpus="c", rubric=rubric, old="old", new="new",
                texts=10, stitchable=True, verdict=json.dumps({"criteria": [], "score": score, "refusals": []}),
            )  # fmt: skip
        [ab] = succession.restated_abs(con, "c")
    assert ab["new_judge"] == "new" and ab["before"]["decision"] == "A" and ab["after"]["decision"] == "B"
    assert ab["flips"] and abs(ab["after"]["difference"] - (-0.05)) < 1e-9
