"""Two identical seeded `improve evolve` runs picked different criteria (#50 item 6): criteria whose
agreement with the humans is the same number were ordered by floating-point noise (0.0161529997630813
against 0.01615299976308135 for one criterion's scores and the same scores times three), which the
order of DuckDB's parallel sums decides. Ties now go by criterion id, as the SQL says."""

import duckdb
import numpy as np

from rubricflow.tasks.improve.evolve import least_agreeing
from rubricflow.warehouse import db


def test_criteria_that_agree_equally_are_ordered_by_id_not_by_rounding_noise(tmp_path):
    rng = np.random.default_rng(1)
    n = 200
    judged, human = rng.integers(0, 4, n) / 3, rng.integers(1, 6, n)
    texts = [f"t{i:03d}" for i in range(n)]
    path = tmp_path / "w.duckdb"
    with db.writer(path) as con:
        con.executemany(
            "INSERT INTO labels (corpus_id, text_id, criterion_id, rater, score, source) "
            "VALUES ('c', ?, 'overall', 'human', ?, 'x')",
            [[t, float(h)] for t, h in zip(texts, human, strict=True)],
        )
        con.executemany(  # the same scores on two scales: one agreement, mathematically
            "INSERT INTO mat_criterion_scores (corpus_id, rubric_hash, judge_hash, text_id, criterion_id, unit_score) "
            "VALUES ('c', 'r', 'j', ?, ?, ?)",
            [
                [t, c, float(x) * k]
                for c, k in (("a-criterion", 0.1), ("b-criterion", 0.3))
                for t, x in zip(texts, judged, strict=True)
            ],
        )
    con = duckdb.connect(str(path), read_only=True)
    try:
        criterion, agreement = least_agreeing(con, "c", "r", "j", ["human"], "overall", texts)
    finally:
        con.close()
    assert agreement["a-criterion"] == agreement["b-criterion"], agreement
    assert criterion == "a-criterion"
