"""The fault matrix: every fault the judge server can inject, crashes while landing and loading,
a locked warehouse and a full disk. After each: every planned cell is scored or unscored with a
reason, no cell twice, every raw completion kept, and the run summary counts them."""

import os
import subprocess
import sys
import time

import duckdb
import pytest

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.tasks.judging import shard as shard_module
from rubricflow.tasks.standins.judge_server import TRANSIENT_FAULTS
from rubricflow.warehouse import db, steps
from rubricflow.warehouse.locks import runs_root
from tests.conftest import EXE, land_one_shard, rows, write_corpus


def q(warehouse, query):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def invariants(warehouse, planned_texts, criteria):
    """Nothing lost, nothing twice, every raw completion kept, every unscored judgment has a reason."""
    assert q(warehouse, "SELECT count(*), count(DISTINCT cell_key) FROM completions") == [
        (planned_texts, planned_texts)
    ]
    assert q(warehouse, "SELECT count(*), count(DISTINCT (cell_key, criterion_id)) FROM judgments") == [
        (planned_texts * criteria, planned_texts * criteria)
    ]
    assert q(warehouse, "SELECT count(*) FROM judgments WHERE status = 'unscored' AND reason IS NULL") == [(0,)]
    assert q(warehouse, "SELECT count(*) FROM completions WHERE status = 'ok' AND raw_response IS NULL") == [(0,)]


@pytest.fixture
def corpus_warehouse(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 40)), str(warehouse), "c")
    return warehouse


def test_all_faults_mixed_lose_nothing_and_match_a_clean_run(tmp_path, corpus_warehouse, thread_judge_server):
    clean_server = thread_judge_server()
    clean = tmp_path / "clean.duckdb"
    ingest_flow(str(write_corpus(tmp_path / "c2.jsonl", 40)), str(clean), "c")
    score_corpus("c", "llm-slop", str(clean), {"base_url": clean_server.base_url})
    faulty = thread_judge_server(fault_rate=0.7, faults=TRANSIENT_FAULTS, fault_attempts=2, stall_s=2)
    summary = score_corpus(
        "c",
        "llm-slop",
        str(corpus_warehouse),
        {"base_url": faulty.base_url, "timeout_s": 1.0},
        options={"shard_size": 9},
    )
    injected = sum(faulty.stats()["faults"].values())
    print(
        f"\nfault matrix: {injected} faults injected ({faulty.stats()['faults']}), {summary['planned_cells']} cells "
        f"planned, {summary['ok_cells']} ok, lost 0, duplicates 0, bought twice "
        f"{faulty.stats()['repeats_after_an_answer']}, calls {summary['calls']}"
    )
    assert injected >= 40 and summary["ok_cells"] == 40
    assert faulty.stats()["repeats_after_an_answer"] == 0  # no answered request sent again: nothing bought twice
    invariants(corpus_warehouse, 40, 3)
    pick = "SELECT text_id, criterion_id, value, unit_score, status FROM judgments ORDER BY 1, 2"
    assert q(corpus_warehouse, pick) == q(clean, pick)
    run = q(corpus_warehouse, "SELECT planned_cells, landed_cells, ok_cells, retries FROM run_summary")[0]
    assert run[:3] == (40, 40, 40) and run[3] == summary["calls"] - 40


def test_hostile_answers_mixed_lose_nothing_and_leak_no_key(
    tmp_path, corpus_warehouse, thread_judge_server, monkeypatch
):
    """The fault matrix's hostile half (reliability pass, finding 3): deep JSON, missing or null
    usage, a text/plain body, a null message, content as parts or a number, an endpoint echoing
    the Authorization header, a slow drip. Each costs at most its own cell's re-ask."""
    from rubricflow.tasks.standins.judge_server import HOSTILE_FAULTS

    canary = "sk-canary-hostile-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", canary)
    clean = tmp_path / "clean.duckdb"
    ingest_flow(str(write_corpus(tmp_path / "c2.jsonl", 40)), str(clean), "c")
    score_corpus("c", "llm-slop", str(clean), {"base_url": thread_judge_server().base_url})
    hostile = thread_judge_server(fault_rate=0.8, faults=HOSTILE_FAULTS, fault_attempts=1, fault_cycle=True)
    summary = score_corpus(
        "c",
        "llm-slop",
        str(corpus_warehouse),
        {"base_url": hostile.base_url, "timeout_s": 2.0},
        options={"shard_size": 9},
    )
    injected = hostile.stats()["faults"]
    print(
        f"\nhostile fault matrix: {sum(injected.values())} faults injected ({injected}), {summary['planned_cells']} "
        f"cells planned, {summary['ok_cells']} ok, lost 0, duplicates 0"
    )
    assert len(injected) == len(HOSTILE_FAULTS) and summary["ok_cells"] == 40
    assert hostile.stats()["repeats_after_an_answer"] == 0
    invariants(corpus_warehouse, 40, 3)
    pick = "SELECT text_id, criterion_id, value, unit_score, status FROM judgments ORDER BY 1, 2"
    assert q(corpus_warehouse, pick) == q(clean, pick)
    for folder in (corpus_warehouse.parent,):  # the warehouse and the landing files hold no key
        for path in folder.rglob("*"):
            if path.is_file():
                assert canary.encode() not in path.read_bytes(), path


def test_a_proxy_answering_html_fails_the_run_and_a_rerun_after_the_fix_judges_everything(
    corpus_warehouse, thread_judge_server
):
    """F30: a 200 with an HTML page (a proxy's) was final: the run "completed" at 0% coverage, exit
    0, and the run after the proxy was fixed judged nothing."""
    from rubricflow.flows.score import EndpointRefused

    proxy = thread_judge_server(fault_rate=1, faults=("html_page",), fault_attempts=99)
    with pytest.raises(
        EndpointRefused, match="no usable answer to every call .40 cells; NotAChatCompletion: the endpoint answered str"
    ):
        score_corpus("c", "writing-quality", str(corpus_warehouse), {"base_url": proxy.base_url, "max_attempts": 2})
    assert q(corpus_warehouse, "SELECT status FROM runs") == [("failed",)]
    assert q(corpus_warehouse, "SELECT DISTINCT error_kind FROM completions") == [("transient",)]
    fixed = thread_judge_server()
    summary = score_corpus("c", "writing-quality", str(corpus_warehouse), {"base_url": fixed.base_url})
    assert summary["ok_cells"] == 40 and summary["calls"] == 40 and fixed.stats()["answered"] == 40
    assert q(corpus_warehouse, "SELECT count(*) FROM completions WHERE status = 'ok'") == [(40,)]
    runs = runs_root(corpus_warehouse)  # F31/F32: no run leaves its folders behind, the failed one included
    assert sorted(p.name for p in runs.iterdir()) == ["locks"], [str(p) for p in runs.rglob("*")]


@pytest.mark.parametrize("retry_after", [True, False])
def test_429_with_and_without_retry_after(corpus_warehouse, thread_judge_server, retry_after):
    server = thread_judge_server(fault_rate=1, faults=("429",), retry_after=retry_after)
    summary = score_corpus("c", "writing-quality", str(corpus_warehouse), {"base_url": server.base_url})
    assert summary["ok_cells"] == 40 and summary["calls"] == 80
    invariants(corpus_warehouse, 40, 3)


def test_a_crash_mid_load_rolls_back_and_the_shard_loads_later(tmp_path, corpus_warehouse, thread_judge_server):
    server = thread_judge_server()
    score_corpus("c", "llm-slop", str(corpus_warehouse), {"base_url": server.base_url})
    before = q(corpus_warehouse, "SELECT count(*) FROM completions")
    # a second rubric's shard lands; its judgments file is cut short, as by a crash while writing
    landed = land_one_shard(tmp_path, server, corpus_warehouse, "r2", rubric="writing-quality")
    completions = os.path.abspath(landed.completions_file)
    judgments = completions.replace(".completions.", ".judgments.")
    good = open(judgments, "rb").read()
    open(judgments, "wb").write(good[: len(good) // 2])
    with db.writer(corpus_warehouse) as con, pytest.raises(duckdb.Error):
        steps.load_landed(con, __import__("pathlib").Path(completions))
    assert q(corpus_warehouse, "SELECT count(*) FROM completions") == before  # rolled back: nothing half-loaded
    assert os.path.exists(completions)  # kept for the next run
    open(judgments, "wb").write(good)
    summary = score_corpus("c", "writing-quality", str(corpus_warehouse), {"base_url": server.base_url})
    assert summary["recovered_cells"] == 40 and summary["judged_cells"] == 0
    assert q(corpus_warehouse, "SELECT count(*), count(DISTINCT cell_key) FROM completions") == [(80, 80)]


def test_locked_warehouse_gives_a_clear_error_and_no_corruption(tmp_path, corpus_warehouse, thread_judge_server):
    server = thread_judge_server()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('locked', flush=True); sys.stdin.read()",
            str(corpus_warehouse),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        result = subprocess.run(
            [EXE, "score", "-c", "c", "-r", "llm-slop", "-w", str(corpus_warehouse), "--base-url", server.base_url],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "RUBRICFLOW_LOCK_WAIT_S": "1"},
        )
        assert result.returncode == 2
        assert "is locked by another process (DuckDB allows one writer, or readers only) (waited 1 s" in " ".join(
            result.stderr.split()
        )
        assert server.stats()["requests"] == 0
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    summary = score_corpus("c", "llm-slop", str(corpus_warehouse), {"base_url": server.base_url})
    assert summary["ok_cells"] == 40
    invariants(corpus_warehouse, 40, 3)


def test_full_disk_while_landing(tmp_path, corpus_warehouse, thread_judge_server, monkeypatch):
    server = thread_judge_server()
    real_write = shard_module.pq.write_table
    failed = []

    def failing_write(table, where, **kw):  # the 3rd shard's first file hits a full disk (once)
        if "shard-00002" in str(where) and not failed:
            failed.append(str(where))
            raise OSError(28, "No space left on device")
        return real_write(table, where, **kw)

    monkeypatch.setattr(shard_module.pq, "write_table", failing_write)
    with pytest.raises(OSError, match="No space left on device"):
        score_corpus("c", "llm-slop", str(corpus_warehouse), {"base_url": server.base_url}, options={"shard_size": 10})
    loaded = q(corpus_warehouse, "SELECT count(*) FROM completions")[0][0]
    assert 10 <= loaded <= 20  # the shards before it loaded (the 2nd too, unless the failure met its wait)
    assert q(corpus_warehouse, "SELECT status, message LIKE '%No space left%' FROM runs") == [("failed", True)]
    assert not [p for p in runs_root(corpus_warehouse).rglob("*.tmp")]  # no partial file left
    monkeypatch.setattr(shard_module.pq, "write_table", real_write)
    summary = score_corpus(
        "c", "llm-slop", str(corpus_warehouse), {"base_url": server.base_url}, options={"shard_size": 10}
    )
    # what the failed run's calls answered was landed on the retry (the failed write's cells included)
    # and is loaded now, not bought again: whatever the timing of the parts, every cell is bought once
    assert summary["recovered_cells"] >= 10  # at least the failed shard's own cells
    assert server.stats()["answered"] == 40 and server.stats()["repeats_after_an_answer"] == 0
    invariants(corpus_warehouse, 40, 3)


def test_two_scores_of_the_same_work_never_judge_a_cell_twice(tmp_path, corpus_warehouse, thread_judge_server):
    """Finding 9: two `score` commands on one warehouse judged the same cells (177 calls for 157)
    and the loser's run stayed "running" forever. The second is refused before it plans."""
    from rubricflow.rubrics.library import Library
    from rubricflow.tasks.judging.config import JudgeConfig
    from rubricflow.warehouse import locks

    server = thread_judge_server(latency_ms=1000)  # the first run would last ~40 s: far longer than the second's start
    command = [
        EXE,
        "score",
        "-c",
        "c",
        "-r",
        "llm-slop",
        "-w",
        str(corpus_warehouse),
        "--base-url",
        server.base_url,
        "--max-in-flight",
        "1",
    ]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    key = (corpus_warehouse, "c", Library().bundle("llm-slop").hash, JudgeConfig().judge_hash())
    deadline = time.monotonic() + 120
    while not locks.is_held(*key) and time.monotonic() < deadline:
        time.sleep(0.1)
    second = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert first.poll() is None, "the first run ended before the second started: lengthen it"
    assert second.returncode == 2 and "is already scoring corpus 'c'" in " ".join(second.stderr.split())
    server.set_latency(0)  # refused: the first run now ends at full speed
    assert first.wait(timeout=300) == 0, first.stderr.read()
    assert server.stats()["requests"] == 40  # every cell once
    assert rows(corpus_warehouse, "SELECT status FROM runs") == [("completed",)]  # the refused run left no row
