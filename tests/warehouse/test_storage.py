"""How the warehouse file is stored (#22): a checkpoint's row-group merges stay small, however
large the table grows, and every writer connection of one process shares one open file."""

from rubricflow.warehouse import db


def row_groups(con, table: str) -> list[int]:
    return [
        rows
        for (rows,) in con.execute(
            f"SELECT max(count) FROM pragma_storage_info('{table}') GROUP BY row_group_id ORDER BY row_group_id"
        ).fetchall()
    ]


def test_row_groups_merge_no_larger_than_the_warehouse_row_group_size(tmp_path):
    """Appends of separate writers (a run's shard loads) are merged by DuckDB's checkpoint: with
    its default size (122,880 rows) a merge rewrote a whole run's raw completions at once."""
    path = tmp_path / "w.duckdb"
    loads, rows = 6, 5_000
    for load in range(loads):
        with db.writer(path) as con:
            con.execute("CREATE TABLE IF NOT EXISTS appended (i BIGINT, payload VARCHAR)")
            con.execute(
                "INSERT INTO appended SELECT range, repeat('x', 50) FROM range($start, $end)",
                {"start": load * rows, "end": (load + 1) * rows},
            )
    with db.reader(path) as con:
        groups = row_groups(con, "appended")
    assert sum(groups) == loads * rows
    assert max(groups) <= db.ROW_GROUP_ROWS < loads * rows
    assert len(groups) >= (loads * rows) // db.ROW_GROUP_ROWS


def test_writers_of_one_process_share_the_open_file(tmp_path):
    """A writer opened while another is open in the same process (as DuckDB's own instance cache
    allowed) sees the same database; the file is released when the last one closes."""
    path = tmp_path / "w.duckdb"
    with db.writer(path) as outer:
        outer.execute("CREATE TABLE shared (i INTEGER)")
        outer.execute("INSERT INTO shared VALUES (1)")
        with db.writer(path) as inner:
            inner.execute("INSERT INTO shared VALUES (2)")
        assert outer.execute("SELECT count(*) FROM shared").fetchone()[0] == 2
    with db.reader(path) as con:  # a reader opens the file: no writer of this process holds it
        assert con.execute("SELECT sum(i) FROM shared").fetchone()[0] == 3
