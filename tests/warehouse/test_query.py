"""User SQL (`rubricflow query`) runs one SELECT on a sandboxed read-only connection: nothing it
can say writes the warehouse, reads or writes another file, reaches the network or changes a
setting (finding 1 of the reliability pass: `COPY ... TO` once replaced a warehouse with 8 bytes)."""

import hashlib

import pytest

from rubricflow.warehouse import db


@pytest.fixture
def warehouse(tmp_path):
    path = tmp_path / "w.duckdb"
    with db.writer(path) as con:
        con.execute("INSERT INTO texts (corpus_id, text_id, sha256, text) VALUES ('c', 't1', 'x', 'hello')")
    return path


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_select_reads_tables_and_views(warehouse):
    assert db.read_only_query(warehouse, "SELECT text FROM texts").to_pylist() == [{"text": "hello"}]
    assert (
        db.read_only_query(warehouse, "WITH x AS (SELECT count(*) AS n FROM text_scores) SELECT n FROM x").num_rows == 1
    )


@pytest.mark.parametrize(
    "statement",
    [
        "COPY (SELECT 'x') TO '{w}' (FORMAT csv)",
        "EXPORT DATABASE '{tmp}/export'",
        "INSTALL httpfs",
        "LOAD httpfs",
        "PRAGMA enable_profiling",
        "SET threads = 1",
        "CREATE TEMP TABLE t AS SELECT 1",
        "ATTACH '{tmp}/other.duckdb' AS other",
        "DELETE FROM texts",
        "SELECT 1; DROP TABLE texts",
        "SELECT * FROM texts; COPY texts TO '{tmp}/leak.csv'",
    ],
)
def test_statements_that_are_not_one_select_are_refused(warehouse, statement):
    before = digest(warehouse)
    with pytest.raises(db.QueryRefused, match="query refused"):
        db.read_only_query(warehouse, statement.format(w=warehouse, tmp=warehouse.parent))
    assert digest(warehouse) == before
    assert sorted(p.name for p in warehouse.parent.iterdir()) == ["w.duckdb"]


@pytest.mark.parametrize(
    "select",
    [
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('/etc/hostname')",
        "SELECT * FROM glob('/etc/*')",
        "SELECT * FROM read_parquet('{tmp}/*.parquet')",
        "SELECT * FROM 'https://127.0.0.1:9/x.csv'",
    ],
)
def test_a_select_cannot_reach_files_or_the_network(warehouse, select):
    with pytest.raises(db.QueryRefused, match="disabled by configuration|Permission"):
        db.read_only_query(warehouse, select.format(tmp=warehouse.parent))


def test_the_sandbox_cannot_be_switched_off_from_inside(warehouse):
    setting = db.read_only_query(warehouse, "SELECT current_setting('enable_external_access') AS on")
    assert setting.to_pylist() == [{"on": False}]


def test_a_missing_warehouse_is_an_input_error(tmp_path):
    with pytest.raises(db.WarehouseError, match="no warehouse at"):
        db.read_only_query(tmp_path / "nowhere.duckdb", "SELECT 1")
