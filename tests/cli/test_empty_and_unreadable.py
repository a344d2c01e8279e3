"""A warehouse path that is a folder or not a DuckDB file is named as such, not as locked, and a
rubric folder with no rubric files is refused instead of checking nothing and exiting 0."""

import os
import subprocess
import sys

import pytest

from rubricflow.warehouse import db
from tests.conftest import EXE

HOLD = "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(60)"


def run(*args, cwd, **env):
    return subprocess.run([EXE, *args], capture_output=True, text=True, cwd=cwd, timeout=300, env={**os.environ, **env})


def one_line(result) -> str:
    """The command's only output: one line on stderr, no traceback."""
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and not result.stdout.strip() and len(lines) == 1, result.stderr
    return lines[0]


def test_a_folder_as_warehouse_is_named_a_folder_not_locked(tmp_path):
    (tmp_path / "adir").mkdir()
    line = one_line(run("runs", "-w", "adir", cwd=tmp_path))
    assert "warehouse adir is a folder, not a warehouse file" in line and "locked" not in line


@pytest.mark.parametrize("content", ["x\n", ""])
def test_a_file_that_is_not_duckdb_is_named_so_at_once(tmp_path, content):
    """Under a folder whose name holds "lock": the old check matched the word in the path and waited."""
    (tmp_path / "blocks").mkdir()
    (tmp_path / "blocks" / "notdb.duckdb").write_text(content)
    done = run("runs", "-w", "blocks/notdb.duckdb", cwd=tmp_path, RUBRICFLOW_LOCK_WAIT_S="30")
    line = one_line(done)
    assert "warehouse blocks/notdb.duckdb is not a DuckDB warehouse" in line and "locked" not in line
    assert "waiting for" not in done.stderr


def test_a_real_lock_is_still_waited_for_then_called_locked(tmp_path):
    with db.writer(tmp_path / "w.duckdb"):
        pass
    holder = subprocess.Popen([sys.executable, "-c", HOLD, "w.duckdb"], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        done = run("runs", "-w", "w.duckdb", cwd=tmp_path, RUBRICFLOW_LOCK_WAIT_S="1")
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"waiting for w.duckdb: held by process {holder.pid}" in done.stderr
    assert "warehouse w.duckdb is locked by another process" in done.stderr and "(waited 1 s;" in done.stderr


@pytest.mark.parametrize("command", [["doctor"], ["rubric", "validate"]])
@pytest.mark.parametrize("folder", ["adir", "docs_only"])
def test_a_folder_without_rubric_files_is_refused(tmp_path, command, folder):
    (tmp_path / folder).mkdir()
    if folder == "docs_only":
        (tmp_path / folder / "README.md").write_text("# not a rubric\n")  # a folder's own document
    line = one_line(run(*command, folder, cwd=tmp_path))
    assert line.startswith(f"error: {folder}: no rubric files in this folder (")
    assert ".yaml" in line and ".prompty" in line
