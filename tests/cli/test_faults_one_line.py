"""#41 faults a user meets (G8, G12, G13, G15, F19, F32): each is one line naming the file, variable or
value, and exit 2; none is a traceback. Each runs the real `rubricflow` command on a real warehouse."""

import json
import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import EXE, ThreadServer

DEAD = "http://127.0.0.1:9"  # nothing listens on the discard port


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A warehouse with corpus `c`, and the bad files the cases read."""
    home = tmp_path_factory.mktemp("faults")
    (home / "c.jsonl").write_text("".join(json.dumps({"id": f"t{i}", "text": f"text {i}"}) + "\n" for i in range(3)))
    assert run("ingest", "c.jsonl", "-c", "c", "-w", "w.duckdb", cwd=home).returncode == 0
    pq.write_table(pa.table({"id": ["a", "b"], "text": ["x", "y"]}), home / "good.parquet")
    whole = (home / "good.parquet").read_bytes()
    (home / "truncated.parquet").write_bytes(whole[: len(whole) // 2])
    (home / "empty.parquet").write_bytes(b"")
    (home / "garbage.parquet").write_bytes(b"PAR1 this is not Parquet at all")
    (home / "huge.csv").write_text("text_id,criterion,score\nt0,clarity,3\nt1,clarity,1e308\nt2,clarity,-1e308\n")
    return home


def run(*args, cwd, **env):
    return subprocess.run(
        [EXE, *args], capture_output=True, text=True, cwd=cwd, timeout=300, env={**os.environ, "COLUMNS": "300", **env}
    )


def one_line(result, message: str) -> None:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(lines) == 1 and message in lines[0], result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr


SCORE = ["score", "-c", "c", "-r", "writing-quality", "-w", "w.duckdb", "--base-url", f"{DEAD}/v1"]


@pytest.mark.parametrize(
    "args, env, message",
    [
        (
            ["ingest", "garbage.parquet", "-c", "p", "-w", "w.duckdb"],
            {},
            "garbage.parquet: not a readable Parquet file",
        ),
        (["ingest", "empty.parquet", "-c", "p", "-w", "w.duckdb"], {}, "empty.parquet: not a readable Parquet file"),
        (["ingest", "truncated.parquet", "-c", "p", "-w", "w.duckdb"], {}, "truncated.parquet: not a readable Parquet"),
        (
            ["labels", "import", "huge.csv", "-c", "c", "-w", "w.duckdb"],
            {},
            "huge.csv: row 2: score '1e308' is no rating on any scale",
        ),
        ([*SCORE, "--shard-size", "0"], {}, "--shard-size must be at least 1 cell, not 0"),
        (
            [*SCORE, "--cluster", "tls://127.0.0.1:9", "--rpm", "60"],
            {"PREFECT_API_URL": f"{DEAD}/api"},  # refused before any flow: Prefect is never asked
            "--rpm/--tpm with --cluster need --limits",
        ),
        (
            ["ingest", "good.parquet", "-c", "p", "-w", "w.duckdb"],
            {"PREFECT_API_URL": f"{DEAD}/api"},
            f"the Prefect API at {DEAD}/api (PREFECT_API_URL",
        ),
        (
            ["rebuild", "-w", "w.duckdb"],
            {"RUBRICFLOW_DUCKDB_MEMORY": "1MB"},
            "$RUBRICFLOW_DUCKDB_MEMORY=1MB is too small for it",
        ),
    ],
    ids=[
        "garbage-parquet",
        "empty-parquet",
        "truncated-parquet",
        "labels-1e308",
        "shard-size-0",
        "rpm-cluster",
        "dead-prefect-url",
        "duckdb-memory",
    ],
)
def test_a_fault_is_one_line_naming_its_cause(home, args, env, message):
    one_line(run(*args, cwd=home, **env), message)


def test_a_run_failing_in_preparation_leaves_no_copy_of_the_texts(home):
    """G12: the plan files (copies of the texts) of a run that failed after planning are removed."""
    (home / "prices.yaml").write_text("rubricflow-offline-judge: [not, a, price]\n")
    server = ThreadServer()
    try:
        result = run(*SCORE[:-1], server.base_url, "--prices", "prices.yaml", cwd=home)
    finally:
        server.stop()
    one_line(result, "prices.yaml: model 'rubricflow-offline-judge': needs numeric")
    assert list(home.glob("runs/w.duckdb/*/plan/*.parquet")) == []  # main: the plan's copy of every text stayed
