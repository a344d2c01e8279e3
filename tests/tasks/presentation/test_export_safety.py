"""`export --out` never writes over the warehouse, nor over an existing file without --force, and
a CSV export opens in a spreadsheet as text, never as formulas."""

import csv
import os

import duckdb
import polars as pl
import pytest

from rubricflow.errors import InputError
from rubricflow.tasks.presentation.export import check_target, write


def test_the_warehouse_is_never_an_export_target_even_with_force(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    duckdb.connect(str(warehouse)).close()
    os.link(warehouse, tmp_path / "alias.parquet")  # the same file under another name
    for target in (warehouse, tmp_path / "alias.parquet"):
        with pytest.raises(InputError, match="that is the warehouse"):
            check_target(target, warehouse, force=True, fmt="parquet")
    duckdb.connect(str(warehouse), read_only=True).close()  # still a database


def test_an_existing_file_needs_force(tmp_path):
    warehouse, out = tmp_path / "w.duckdb", tmp_path / "scores.csv"
    check_target(out, warehouse, force=False, fmt="csv")  # a new file: fine
    out.write_text("keep me")
    with pytest.raises(InputError, match="exists; pass --force"):
        check_target(out, warehouse, force=False, fmt="csv")
    check_target(out, warehouse, force=True, fmt="csv")
    out.unlink()
    (tmp_path / "scores.csv.meta.json").write_text("{}")  # the metadata beside it counts too
    with pytest.raises(InputError, match="meta.json: exists"):
        check_target(out, warehouse, force=False, fmt="csv")


def test_csv_cells_a_spreadsheet_would_run_are_written_as_text(tmp_path):
    hostile = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "\t=1", "plain", "a = b"]
    frame = pl.DataFrame({"text": hostile, "score": [0.5] * len(hostile), "delta": [-1.0] * len(hostile)})
    write(frame, tmp_path / "o.csv", "csv", {})
    with open(tmp_path / "o.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["text"] for r in rows] == [f"'{t}" for t in hostile[:5]] + hostile[5:]
    assert {r["delta"] for r in rows} == {"-1.0"}  # numbers stay numbers
