"""Kill the flow at any moment, run it again: no cell lost, none twice."""

import os
import shutil
import subprocess
import time

import duckdb

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.rubrics.library import Library
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.warehouse import db, steps
from rubricflow.warehouse.locks import runs_root
from rubricflow.warehouse.run_folder import RunFolder
from tests.conftest import kill_once_answered, land_one_shard

EXE = shutil.which("rubricflow")


def count(warehouse, query):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(query).fetchall()[0]
    finally:
        con.close()


def count_when_released(warehouse, query, wait_s: float = 10.0):
    """`count` once the killed command's process let the file go: a command the warm worker ran
    is ended by its waiter (SIGKILL) as soon as it sees the caller gone, a moment after the caller."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return count(warehouse, query)
        except duckdb.IOException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_sigkill_mid_run_then_rerun_finishes_exactly_once(tmp_path, corpus, thread_judge_server):
    server = thread_judge_server(latency_ms=40)
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(corpus(80)), str(warehouse), "c")
    proc = subprocess.Popen(
        [
            EXE,
            "score",
            "-c",
            "c",
            "-r",
            "llm-slop",
            "-w",
            str(warehouse),
            "--base-url",
            server.base_url,
            "--shard-size",
            "10",
            "--max-in-flight",
            "4",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    kill_once_answered(proc, server, 35)  # the flow and everything it started (its Prefect server too)
    landed_before = count_when_released(warehouse, "SELECT count(*) FROM completions")[0]
    assert 0 < landed_before < 80
    summary = score_corpus("c", "llm-slop", str(warehouse), {"base_url": server.base_url}, options={"shard_size": 10})
    assert summary["skipped_cells"] + summary["judged_cells"] + summary["recovered_cells"] >= 80
    assert count(
        warehouse, "SELECT count(*), count(DISTINCT cell_key), count(*) FILTER (WHERE status = 'ok') FROM completions"
    ) == (80, 80, 80)
    assert count(warehouse, "SELECT count(*), count(DISTINCT (cell_key, criterion_id)) FROM judgments") == (240, 240)
    assert count(warehouse, "SELECT count(*), min(coverage) FROM text_scores") == (80, 1.0)
    # every call the server answered either landed or was re-asked: at most the in-flight ones and
    # the next shard's unlanded answers twice
    bought_twice = server.stats()["answered"] - 80
    assert bought_twice <= 4 + 10, bought_twice  # the bound docs/operations.md states ("Crashes.")
    # N1: the re-run holds the same work's lock as the dead run; the dead run is still recognised
    # (by the run id in the lock), closed as interrupted, and its plan files are gone
    assert count(
        warehouse,
        "SELECT count(*) FILTER (WHERE status = 'interrupted'), count(*) FILTER (WHERE status = 'running') FROM runs",
    ) == (1, 0)
    assert not list(runs_root(warehouse).glob("*/plan/*.parquet"))


def test_shard_landed_but_not_loaded_is_recovered_without_new_calls(tmp_path, corpus, thread_judge_server):
    server = thread_judge_server()
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(corpus(10)), str(warehouse), "c")
    land_one_shard(tmp_path, server, warehouse, "crashed")
    assert server.stats()["requests"] == 10
    summary = score_corpus("c", "llm-slop", str(warehouse), {"base_url": server.base_url})
    assert summary["recovered_cells"] == 10 and summary["judged_cells"] == 0
    assert server.stats()["requests"] == 10
    assert count(warehouse, "SELECT count(*), count(DISTINCT cell_key) FROM completions") == (10, 10)
    assert not list(runs_root(warehouse).rglob("*.completions.parquet"))


def test_two_warehouses_in_one_folder_never_load_each_others_shards(tmp_path, corpus, thread_judge_server):
    """Found in CI: two warehouses in one folder shared runs/, and a run on one loaded (and deleted)
    the landed shards of the other's live run. Each warehouse now has a runs folder of its own."""
    server = thread_judge_server()
    a, b = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    for warehouse in (a, b):
        ingest_flow(str(corpus(10)), str(warehouse), "c")
    land_one_shard(tmp_path, server, a, "a-run")
    summary = score_corpus("c", "llm-slop", str(b), {"base_url": server.base_url})
    assert (summary["recovered_cells"], summary["judged_cells"]) == (0, 10)
    assert len(list(runs_root(a).rglob("*.completions.parquet"))) == 1  # still a's to load
    assert count(b, "SELECT count(*), count(DISTINCT cell_key) FROM completions") == (10, 10)
    assert score_corpus("c", "llm-slop", str(a), {"base_url": server.base_url})["recovered_cells"] == 10
    assert server.stats()["requests"] == 20


def test_a_shard_landed_in_the_runs_folder_of_before_is_still_recovered(tmp_path, corpus, thread_judge_server):
    """Upgrading moved a warehouse's runs from runs/<run id>/ to runs/<warehouse file>/<run id>/:
    a shard a crashed run left in the old place is loaded when the run is this warehouse's, and
    another warehouse's (a run this one never registered) is left alone."""
    server = thread_judge_server()
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(corpus(10)), str(warehouse), "c")
    land_one_shard(tmp_path, server, warehouse, "old-run")
    shutil.move(RunFolder.of(warehouse, "old-run").path, tmp_path / "runs" / "old-run")
    (tmp_path / "runs" / "someone-elses" / "landing").mkdir(parents=True)
    (tmp_path / "runs" / "someone-elses" / "landing" / "shard-00000.completions.parquet").write_bytes(b"theirs")
    bundle, config = Library().bundle("llm-slop"), JudgeConfig(base_url=server.base_url)
    with db.writer(warehouse) as con:
        steps.start_run(
            con, run="old-run", corpus="c", rubric=bundle.hash, judge=config.judge_hash(), model=config.model,
            strategy="holistic", samples=1, parameters="{}", planned=10, skipped=0, estimated_usd=None,
            budget_usd=None,
        )  # fmt: skip
    summary = score_corpus("c", "llm-slop", str(warehouse), {"base_url": server.base_url})
    assert (summary["recovered_cells"], summary["judged_cells"]) == (10, 0) and server.stats()["requests"] == 10
    assert not (tmp_path / "runs" / "old-run").exists()
    assert (
        tmp_path / "runs" / "someone-elses" / "landing" / "shard-00000.completions.parquet"
    ).read_bytes() == b"theirs"


def test_the_same_command_after_a_crash_loads_the_dead_runs_shards_and_buys_nothing_twice(
    tmp_path, corpus, thread_judge_server
):
    """N1: the re-run holds the very lock the dead run held (same corpus, rubric and judge), so a
    check of "is the lock held" took the dead run for live, skipped its landed shard and bought its
    cells again. The dead run is now known by the run id its lock names."""
    server = thread_judge_server()
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(corpus(10)), str(warehouse), "c")
    landed = land_one_shard(tmp_path, server, warehouse, "dead-run")
    RunFolder.of(warehouse, "dead-run").plan.mkdir()
    (RunFolder.of(warehouse, "dead-run").plan / "shard-00000.parquet").write_bytes(b"left behind")
    bundle, config = Library().bundle("llm-slop"), JudgeConfig(base_url=server.base_url)
    with db.writer(warehouse) as con:
        steps.start_run(
            con,
            run="dead-run",
            corpus="c",
            rubric=bundle.hash,
            judge=config.judge_hash(),
            model=config.model,
            strategy="holistic",
            samples=1,
            parameters="{}",
            planned=10,
            skipped=0,
            estimated_usd=None,
            budget_usd=None,
        )
    summary = score_corpus("c", "llm-slop", str(warehouse), {"base_url": server.base_url})
    assert (summary["recovered_cells"], summary["judged_cells"]) == (landed.cells, 0)
    assert server.stats()["requests"] == 10  # only the dead run's calls, none bought again
    assert count(warehouse, "SELECT status FROM runs WHERE run_id = 'dead-run'") == ("interrupted",)
    assert not RunFolder.of(warehouse, "dead-run").plan.exists()


def test_loading_the_same_shard_twice_changes_nothing(tmp_path, corpus, thread_judge_server):
    server = thread_judge_server()
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(corpus(6)), str(warehouse), "c")
    landed = land_one_shard(tmp_path, server, warehouse, "x")
    copy = tmp_path / "again"
    copy.mkdir()
    for f in RunFolder.of(warehouse, "x").landing.iterdir():
        shutil.copy(f, copy / f.name)
    with db.writer(warehouse) as con:
        steps.load_landed(con, RunFolder.of(warehouse, "x").landing / os.path.basename(landed.completions_file))
        steps.load_landed(con, copy / os.path.basename(landed.completions_file))
    assert count(warehouse, "SELECT count(*) FROM completions") == (6,)
    assert count(warehouse, "SELECT count(*) FROM judgments") == (18,)
