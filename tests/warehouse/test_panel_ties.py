"""G11: a panel's majority is deterministic when judges tie: the lowest tied score, the same on
every query, and its share counts the judges who gave that score."""

import duckdb

from rubricflow.warehouse.sqlfiles import sql


def _panel_view() -> list[str]:
    """The panel_scores view and the macros views.sql defines for it (its exact means)."""
    statements = sql("views.sql").split(";\n")
    return [s for s in statements if "MACRO" in s and "SELECT" not in s] + [
        next(s for s in statements if "VIEW panel_scores" in s)
    ]


def test_a_tied_majority_is_the_lowest_score_every_time(tmp_path):
    con = duckdb.connect(str(tmp_path / "panel.duckdb"))
    con.execute(
        "CREATE TABLE criterion_scores (corpus_id VARCHAR, rubric_hash VARCHAR, text_id VARCHAR, "
        "criterion_id VARCHAR, judge_hash VARCHAR, unit_score DOUBLE)"
    )
    rows = []
    for t in range(300):  # two or three judges tied, their scores inserted in every order
        scores = [[1.0, 0.0], [0.0, 1.0], [2.0, 1.0, 0.0], [0.5, 1.0, 1.0, 0.5]][t % 4]
        rows += [("c", "r", f"t{t}", "a", f"j{j}", s) for j, s in enumerate(scores)]
    con.executemany("INSERT INTO criterion_scores VALUES (?, ?, ?, ?, ?, ?)", rows)
    for statement in _panel_view():
        con.execute(statement)
    query = "SELECT text_id, majority, majority_share FROM panel_scores ORDER BY text_id"
    first = con.execute(query).fetchall()
    for _ in range(5):
        assert con.execute(query).fetchall() == first
    expected = {0: (0.0, 0.5), 1: (0.0, 0.5), 2: (0.0, 1 / 3), 3: (0.5, 0.5)}
    for text_id, majority, share in first:
        assert (majority, share) == expected[int(text_id[1:]) % 4], text_id
