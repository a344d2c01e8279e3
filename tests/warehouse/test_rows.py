"""The completion and judgment rows are defined once (warehouse/rows.py): the landed Parquet's
Arrow schema must name exactly the columns of the warehouse tables they load into."""

import pytest

from rubricflow.warehouse import db
from rubricflow.warehouse.rows import COMPLETION, JUDGMENT, blank_completion


@pytest.mark.parametrize("table, schema", [("completions", COMPLETION), ("judgments", JUDGMENT)])
def test_arrow_rows_match_the_warehouse_tables(tmp_path, table, schema):
    with db.writer(tmp_path / "w.duckdb") as con:
        columns = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
    assert sorted(columns) == sorted(schema.names)


def test_a_blank_completion_has_every_column_and_refuses_unknown_ones():
    row = blank_completion(cell_key="k")
    assert list(row) == COMPLETION.names and row["status"] == "failed" and row["attempts"] == 0
    assert blank_completion()["declared_disqualifiers"] is not blank_completion()["declared_disqualifiers"]
    with pytest.raises(KeyError, match="not completion columns"):
        blank_completion(cel_key="typo")
