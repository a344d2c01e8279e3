"""The warehouse (in a folder of its own when rubricflow made it) and a corpus's texts are the user's only (0600 files, 0700
folders) whatever the umask: under the usual 022 every local user could read them."""

import json
import os
import stat

import pytest

from rubricflow.tasks.loaders.ingest import ingest_corpus
from rubricflow.warehouse import db


@pytest.fixture
def open_umask():
    before = os.umask(0o022)
    yield
    os.umask(before)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_warehouse_and_its_folder_are_owner_only(tmp_path, open_umask):
    path = tmp_path / "new-folder" / "w.duckdb"
    with db.writer(path) as con:
        con.execute("CREATE TABLE scratch AS SELECT 1 AS a")
    assert mode(path) == 0o600 and mode(path.parent) == 0o700  # the folder covers DuckDB's log while it lives
    wal = path.with_name(path.name + ".wal")
    assert not wal.exists() or mode(wal) == 0o600


def test_a_corpus_texts_are_owner_only(tmp_path, open_umask):
    source = tmp_path / "c.jsonl"
    source.write_text(json.dumps({"id": "a", "text": "private words"}) + "\n")
    report = ingest_corpus(source, tmp_path / "corpora" / "c")
    assert mode(report.parquet) == 0o600 and mode(report.quarantine) == 0o600
    assert mode(tmp_path / "corpora" / "c") == 0o700


def test_an_existing_warehouse_and_corpus_made_looser_are_tightened_when_opened(tmp_path, open_umask):
    """#50 item 15: a warehouse or texts made under umask 022 by an older rubricflow stayed readable."""
    path = tmp_path / "w.duckdb"
    with db.writer(path) as con:
        con.execute("CREATE TABLE scratch AS SELECT 1 AS a")
    texts = tmp_path / "corpora" / "old" / "texts.parquet"
    texts.parent.mkdir(parents=True)
    texts.write_bytes(b"PAR1")
    for loose, looser in ((path, 0o644), (texts.parent, 0o755), (texts, 0o644)):
        loose.chmod(looser)
    db._tightened.discard(path)  # a new process
    with db.writer(path):
        pass
    assert (mode(path), mode(texts.parent), mode(texts)) == (0o600, 0o700, 0o600)
