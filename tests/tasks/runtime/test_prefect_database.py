"""A new Prefect home starts from a kept copy of an empty database: only Prefect's schema rows are
kept, never a run or a configuration row (each database's own encryption key), and a database that
exists, or one the user pointed elsewhere, is left alone."""

import sqlite3

import pytest

from rubricflow.tasks.runtime import prefect_database


def database(path, *, runs: int = 0, configuration: tuple = ("ENCRYPTION_KEY", "k1")):
    """A SQLite file shaped like Prefect's: its schema tables, a configuration table, a run table."""
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")  # as Prefect's: the copy must hold the WAL's pages too
    con.executescript(
        "CREATE TABLE alembic_version (version_num TEXT);"
        "CREATE TABLE block_type (id TEXT, name TEXT);"
        "CREATE TABLE configuration (key TEXT, value TEXT);"
        "CREATE TABLE flow_run (id TEXT);"
        "INSERT INTO alembic_version VALUES ('head-1');"
        "INSERT INTO block_type VALUES ('b1', 'secret');"
    )
    con.execute("INSERT INTO configuration VALUES (?, ?)", configuration)
    con.executemany("INSERT INTO flow_run VALUES (?)", [(f"r{i}",) for i in range(runs)])
    con.commit()
    return con  # left open: its writes sit in the WAL


def test_an_empty_database_is_kept_without_its_configuration_and_seeds_a_new_home(tmp_path):
    (tmp_path / "home").mkdir()
    live = database(tmp_path / "home" / "prefect.db")
    kept = tmp_path / "cache" / "prefect-x.db"
    assert prefect_database.keep(tmp_path / "home" / "prefect.db", kept)
    live.close()
    copy = sqlite3.connect(kept)
    assert copy.execute("SELECT * FROM alembic_version").fetchall() == [("head-1",)]
    assert copy.execute("SELECT * FROM block_type").fetchall() == [("b1", "secret")]
    assert copy.execute("SELECT count(*) FROM configuration").fetchone() == (0,)
    copy.close()
    assert kept.stat().st_mode & 0o777 == 0o600 and kept.parent.stat().st_mode & 0o777 == 0o700
    new = tmp_path / "new-home" / "prefect.db"
    assert prefect_database.seed(new, kept)
    assert sqlite3.connect(new).execute("SELECT * FROM block_type").fetchall() == [("b1", "secret")]
    assert new.stat().st_mode & 0o777 == 0o600
    assert not prefect_database.keep(new, kept)  # one copy is kept; it is never replaced


def test_a_database_holding_a_run_is_not_kept(tmp_path):
    database(tmp_path / "prefect.db", runs=1).close()
    kept = tmp_path / "cache" / "prefect-x.db"
    assert not prefect_database.keep(tmp_path / "prefect.db", kept)
    assert not kept.exists() and list(kept.parent.iterdir()) == []  # no partial copy left either


def test_an_existing_database_is_never_overwritten(tmp_path):
    database(tmp_path / "kept.db").close()
    database(tmp_path / "prefect.db", runs=3).close()
    assert not prefect_database.seed(tmp_path / "prefect.db", tmp_path / "kept.db")
    assert sqlite3.connect(tmp_path / "prefect.db").execute("SELECT count(*) FROM flow_run").fetchone() == (3,)
    assert not prefect_database.seed(tmp_path / "other.db", tmp_path / "missing.db")  # nothing kept yet
    assert not (tmp_path / "other.db").exists()


@pytest.mark.parametrize(
    ("url", "seeded"),
    [(None, True), ("sqlite+aiosqlite:///{home}/prefect.db", True), ("postgresql+asyncpg://u@127.0.0.1/p", False)],
)
def test_only_prefects_default_database_is_seeded(url, seeded, tmp_path):
    from prefect.settings import PREFECT_API_DATABASE_CONNECTION_URL, PREFECT_HOME, temporary_settings

    home = tmp_path / "home"
    updates = {PREFECT_HOME: str(home), **({PREFECT_API_DATABASE_CONNECTION_URL: url.format(home=home)} if url else {})}
    with temporary_settings(updates=updates):
        found = prefect_database.default_database(home)
    assert found == ((home / "prefect.db") if seeded else None)


def test_a_copy_that_cannot_be_made_or_kept_is_no_error(tmp_path):
    """The server starts as without a copy (Prefect migrates) when the home or the cache cannot be written."""
    database(tmp_path / "kept.db").close()
    (tmp_path / "a-file").write_text("not a folder")
    assert not prefect_database.seed(tmp_path / "a-file" / "home" / "prefect.db", tmp_path / "kept.db")
    database(tmp_path / "prefect.db").close()
    assert not prefect_database.keep(tmp_path / "prefect.db", tmp_path / "a-file" / "cache" / "prefect-x.db")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "kept.db", "prefect.db"]  # nothing half-made
