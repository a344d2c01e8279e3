"""A new Prefect home's database starts from a copy of an empty one this Prefect version has made.

Prefect migrates a new SQLite database (its whole Alembic history) and registers its block types when
a server first starts on it: ~14 s of CPU of a ~21 s start, paid again by every new home (a project,
a CI job, each test's own home). The first server on a new home keeps a copy of its database in the
user's cache, made before it held anything but Prefect's own schema rows; a server on a later new home
starts from that copy, which Prefect finds migrated and registered. Only Prefect's default SQLite file
is seeded (a database URL the user set is left alone), and no configuration row is copied: Prefect
keeps each database's own encryption key there.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

# The only tables a kept copy may hold rows in: the schema's version and Prefect's registered blocks.
SCHEMA_TABLES = frozenset({"alembic_version", "block_schema", "block_schema_reference", "block_type"})


def default_database(home: Path) -> Path | None:
    """The home's SQLite file when Prefect uses its default database, else None."""
    from prefect.settings import get_current_settings

    url = get_current_settings().server.database.connection_url
    default = f"sqlite+aiosqlite:///{home / 'prefect.db'}"
    return home / "prefect.db" if url is None or url.get_secret_value() == default else None


def seed(database: Path, kept: Path) -> bool:
    """Start a database that does not exist yet from the kept copy, if there is one. A copy that
    cannot be made is no error: Prefect migrates the new database itself, as without one."""
    if database.exists() or not kept.is_file():
        return False
    partial = database.with_name(f".{database.name}.{os.getpid()}")
    try:
        database.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial.write_bytes(kept.read_bytes())
        partial.chmod(0o600)
        os.replace(partial, database)
    except OSError:
        _remove(partial)
        return False
    return True


def keep(database: Path, kept: Path) -> bool:
    """Keep a copy of a database that holds Prefect's schema rows only (no run, flow, log or event);
    False, and nothing kept, when it holds more or a copy is kept already."""
    if kept.exists() or not database.is_file():
        return False
    partial = kept.with_name(f".{kept.name}.{os.getpid()}")
    try:  # a copy not kept (a full disk, a cache folder not ours) only costs the next new home its migrations
        kept.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if _copied_schema_only(database, partial):
            partial.chmod(0o600)
            os.replace(partial, kept)
            return True
    except (OSError, sqlite3.Error):
        pass
    _remove(partial)
    return False


def _remove(partial: Path) -> None:
    with contextlib.suppress(OSError):  # gone, or never made (its folder could not be)
        partial.unlink()


def _copied_schema_only(database: Path, partial: Path) -> bool:
    source, target = sqlite3.connect(f"file:{database}?mode=ro", uri=True), sqlite3.connect(partial)
    try:
        source.backup(target)  # a consistent copy, the WAL's pages included
        if not _schema_only(target):
            return False
        target.execute("DELETE FROM configuration")
        target.commit()
        return True
    finally:
        source.close()
        target.close()


def _schema_only(con: sqlite3.Connection) -> bool:
    tables = [name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    if "alembic_version" not in tables or "configuration" not in tables:
        return False
    others = (t for t in tables if t not in SCHEMA_TABLES and t != "configuration" and not t.startswith("sqlite_"))
    return all(con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] == 0 for t in others)
