"""An error a user causes is said once, on one line: not after Prefect's own
"Task run ... Finished in state Failed(...)" line restating it."""

import os
import subprocess
import sys

import pytest

from tests.conftest import EXE


def run(*args, cwd, **env):
    return subprocess.run(
        [EXE, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        env={**os.environ, "COLUMNS": "200", **env},
    )


def said_once(result, message: str) -> None:
    # a writer that waits first says so (naming the holder); the error itself is one line
    lines = [
        line for line in result.stderr.splitlines() if line.strip() and not line.startswith("rubricflow: waiting for")
    ]
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert "Finished in state" not in result.stdout + result.stderr


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("nocol.jsonl", '{"id": "a", "body": "x"}\n', "nocol.jsonl: row 1 has no text column"),
        ("texts.xyz", "a,b\n", "texts.xyz: unsupported corpus format '.xyz'"),
    ],
)
def test_bad_corpus_is_said_once(tmp_path, name, content, message):
    (tmp_path / name).write_text(content)
    said_once(run("ingest", name, "-c", "c", "-w", "w.duckdb", cwd=tmp_path), message)


def test_a_locked_warehouse_is_said_once(tmp_path):
    (tmp_path / "c.jsonl").write_text('{"id": "a", "text": "x"}\n')
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb; c = duckdb.connect('w.duckdb'); print('locked', flush=True); input()"],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        done = run("ingest", "c.jsonl", "-c", "c", "-w", "w.duckdb", cwd=tmp_path, RUBRICFLOW_LOCK_WAIT_S="1")
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    said_once(done, "is locked by another process")


def test_a_windows_csv_is_refused_naming_its_row_then_read_with_encoding(tmp_path):
    rows = ["id,text"] + [f"t{i},text {i} " + "x" * 900 for i in range(1, 9)] + ["t9,caf\u00e9"]
    (tmp_path / "legacy.csv").write_bytes(("\r\n".join(rows) + "\r\n").encode("cp1252"))
    refused = run("ingest", "legacy.csv", "-c", "legacy", "-w", "w.duckdb", cwd=tmp_path)
    said_once(refused, "legacy.csv: row 9 (line 10): byte 0xE9 is not utf-8")
    assert "quarantined" not in refused.stdout + refused.stderr
    read = run("ingest", "legacy.csv", "-c", "legacy", "-w", "w.duckdb", "--encoding", "cp1252", cwd=tmp_path)
    assert read.returncode == 0 and "9 texts loaded, 0 rows quarantined" in read.stdout, read.stdout + read.stderr


def test_a_corpus_whose_every_row_was_quarantined_neither_ingests_nor_scores_successfully(
    tmp_path, thread_judge_server
):
    """An outside probe: with --allow-quarantine, a file whose two rows were both bad exited 0 with 0
    texts loaded, and `score` on that corpus "completed" 0 cells at 100% coverage, exit 0."""
    rows = ['{"id": "a", "messages": [{"role": ["user"], "content": "x"}]}', '{"id": "b", "messages": "nope"}']
    (tmp_path / "bad.jsonl").write_text("\n".join(rows) + "\n")
    ingested = run("ingest", "bad.jsonl", "-c", "c", "-w", "w.duckdb", "--allow-quarantine", cwd=tmp_path)
    assert ingested.returncode == 1 and "every row of bad.jsonl was quarantined (2)" in ingested.stderr, ingested.stderr
    judge = thread_judge_server()
    scored = run("score", "-c", "c", "-r", "llm-slop", "-w", "w.duckdb", "--base-url", judge.base_url, cwd=tmp_path)
    said_once(scored, "corpus 'c' has no live texts (every row quarantined")
    assert judge.stats()["requests"] == 0
