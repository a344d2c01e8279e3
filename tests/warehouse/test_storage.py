"""How the warehouse file is stored (#22): a checkpoint's row-group merges stay small, however
large the table grows, and every writer connection of one process shares one open file."""

import duckdb
import pytest

from rubricflow.errors import InputError
from rubricflow.warehouse import db
from rubricflow.warehouse.sqlfiles import sql


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


def keyed_schema() -> str:
    """The schema as warehouses before #22 had it: completions, judgments and pattern_hits keyed."""
    schema = sql("001_schema.sql")
    for unkeyed, keyed in (
        ("cell_key          VARCHAR NOT NULL,", "cell_key          VARCHAR PRIMARY KEY,"),
        (
            "reason        VARCHAR            -- why unscored\n);",
            "reason VARCHAR, PRIMARY KEY (cell_key, criterion_id)\n);",
        ),
        (
            "hits        INTEGER NOT NULL\n);",
            "hits INTEGER NOT NULL, PRIMARY KEY (corpus_id, text_id, rubric_hash, pattern_id)\n);",
        ),
    ):
        assert schema.count(unkeyed) == 1, unkeyed
        schema = schema.replace(unkeyed, keyed)
    return schema


def test_an_older_warehouses_keyed_tables_lose_their_keys_and_keep_their_rows(tmp_path):
    """A primary key's index is held in memory whole and grows with the table: opening an older
    warehouse rebuilds completions, judgments and pattern_hits without one, every row kept."""
    path = tmp_path / "old.duckdb"
    old = duckdb.connect(str(path))
    old.execute(keyed_schema())
    old.execute(
        "INSERT INTO completions (cell_key, run_id, corpus_id, text_id, text_sha256, unit_id, rubric_hash, "
        "judge_hash, sample, attempts, status, created_at, raw_response) "
        "SELECT 'k' || i, 'r', 'c', 't' || i, 's', 'u', 'h', 'j', 0, 1, 'ok', now(), 'answer ' || i FROM range(3) r(i)"
    )
    old.execute(
        "INSERT INTO judgments (cell_key, criterion_id, run_id, corpus_id, text_id, rubric_hash, judge_hash, sample, "
        "unit_score, status, text_sha256) SELECT 'k' || i, 'c1', 'r', 'c', 't' || i, 'h', 'j', 0, 0.5, 'scored', 's' "
        "FROM range(3) r(i)"
    )
    old.execute("INSERT INTO pattern_hits VALUES ('c', 't1', 's1', 'r', 'p', 2), ('c', 't2', 's2', 'r', 'p', 0)")
    before = {t: old.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in db.UNKEYED}
    old.close()
    with db.writer(path) as con:
        keys = con.execute(
            "SELECT count(*) FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY' "
            "AND table_name IN ('completions', 'judgments', 'pattern_hits')"
        ).fetchone()[0]
        after = {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in db.UNKEYED}
        nullable = con.execute(
            "SELECT is_nullable FROM information_schema.columns WHERE table_name = 'completions' AND column_name = 'cell_key'"
        ).fetchone()[0]
    assert keys == 0 and after == before and all(before.values())
    assert nullable == "NO"  # made again by the schema: the columns' other constraints kept
    with db.writer(path) as con:  # opened again: nothing to do
        assert con.execute("SELECT count(*) FROM judgments").fetchone()[0] == 3


def test_the_memory_limit_bounds_every_connection_and_spills_beside_the_warehouse(tmp_path, monkeypatch):
    """$RUBRICFLOW_DUCKDB_MEMORY caps DuckDB's memory; what does not fit spills to a folder beside
    the file (the writer's in-memory hub would spill to `.tmp` in the working folder), gone after."""
    path, cwd = tmp_path / "w.duckdb", tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv(db.MEMORY_ENV, "160MB")
    with db.writer(path) as con:
        limit, spill = con.execute(
            "SELECT current_setting('memory_limit'), current_setting('temp_directory')"
        ).fetchone()
        # a sort of ~300 MB of strings: more than the limit
        (count,) = con.execute(
            "SELECT count(DISTINCT h) FROM (SELECT md5(range::VARCHAR) || md5((range + 1)::VARCHAR) AS h "
            "FROM range(3_000_000) ORDER BY h)"
        ).fetchone()
    with db.reader(path) as con:
        (reader_limit,) = con.execute("SELECT current_setting('memory_limit')").fetchone()
    assert limit == reader_limit and limit.endswith("MiB") and float(limit.split()[0]) < 160
    assert spill == str(path) + ".tmp" and count == 3_000_000
    assert list(cwd.iterdir()) == [] and not (tmp_path / "w.duckdb.tmp").exists()


def test_a_memory_limit_that_is_not_a_size_is_refused_by_name(tmp_path, monkeypatch):
    monkeypatch.setenv(db.MEMORY_ENV, "lots")
    with pytest.raises(InputError, match=r"\$RUBRICFLOW_DUCKDB_MEMORY must be a size such as 1GB"):
        db.writer(tmp_path / "w.duckdb").__enter__()


def test_a_warehouse_from_before_rendered_unit_fingerprints_opens_with_its_rows_current(tmp_path):
    """Cells landed before completions and judgments named their rendered unit's fingerprint
    (unit_hash) keep being read: the columns are added, NULL, and such cells stay current."""
    old_schema = sql("001_schema.sql")
    for table in ("completions", "judgments"):
        added = f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS unit_hash VARCHAR;"
        assert old_schema.count(added) == 1
        old_schema = old_schema.replace(added, "")
    path = tmp_path / "old.duckdb"
    old = duckdb.connect(str(path))
    old.execute(old_schema)
    old.execute("INSERT INTO texts (corpus_id, text_id, sha256, text) VALUES ('c', 't', 's', 'a text')")
    old.execute(
        "INSERT INTO judgments (cell_key, criterion_id, run_id, corpus_id, text_id, rubric_hash, judge_hash, sample, "
        "unit_score, status, text_sha256) VALUES ('k', 'c1', 'r', 'c', 't', 'h', 'j', 0, 0.5, 'scored', 's')"
    )
    assert "unit_hash" not in [d[0] for d in old.execute("SELECT * FROM judgments").description]
    old.close()
    with db.writer(path) as con:
        assert con.execute("SELECT unit_hash, unit_score FROM current_judgments").fetchall() == [(None, 0.5)]
        assert con.execute("SELECT count(unit_hash) FROM completions").fetchone() == (0,)


def test_a_writers_open_replays_the_schema_only_when_its_files_changed(tmp_path):
    """Every writer's open replayed the schema's DDL (~0.5 s an open); now only a warehouse brought up
    by other schema files (their hash in schema_state) gets it again, and then whole."""
    path = tmp_path / "w.duckdb"
    with db.writer(path) as con:
        assert con.execute("SELECT definition_sha FROM schema_state").fetchall() == [(db.schema_sha(),)]
        con.execute("DROP VIEW current_judgments")  # gone, as a file made by other definitions may lack it
    with db.writer(path) as con:  # the same files: nothing replayed
        gone = "SELECT count(*) FROM duckdb_views() WHERE view_name = 'current_judgments'"
        assert con.execute(gone).fetchone()[0] == 0
        con.execute("UPDATE schema_state SET definition_sha = 'older'")
    with db.writer(path) as con:  # other files: replayed, and the new hash kept
        assert con.execute(gone).fetchone()[0] == 1
        assert con.execute("SELECT definition_sha FROM schema_state").fetchall() == [(db.schema_sha(),)]
