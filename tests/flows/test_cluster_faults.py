"""Faults of a run on a Dask cluster (G2, G3, G4, G21), each with real scheduler and worker
processes over TLS and a real `rubricflow score` process: a worker whose task fails (with an error
whose traceback cannot travel) costs a retry on another worker, not a hang or a traceback; a
worker on other prompt-rendering code is refused; a lost scheduler is one line; and the run leaves
no queue or variable on the scheduler."""

import os
import signal
import subprocess
import tempfile
import time

import duckdb
import pytest

from rubricflow.flows.ingest import ingest_flow
from rubricflow.tasks.standins.cluster import DaskCluster, wait_until
from tests.cli.test_full_disk import SCRIPT, TEXTS, fill_the_disk_while_scoring
from tests.conftest import EXE, rows, write_corpus

RECURSING = """
def dask_setup(worker):
    from rubricflow.tasks.judging import remote

    def recurse(n=0):
        return recurse(n + 1)

    remote.judge_all = lambda *args, **kwargs: recurse()  # every task on this worker: a RecursionError
"""
HANGING = """
def dask_setup(worker):
    import asyncio

    from rubricflow.tasks.judging import remote

    remote.judge_all = lambda *args, **kwargs: asyncio.sleep(3600)  # a call that never returns; heartbeats go on
"""
CANCELLED = """
def dask_setup(worker):
    import asyncio

    from rubricflow.tasks.judging import remote

    def cancelled(*args, **kwargs):
        raise asyncio.CancelledError("the worker's loop cancelled it")

    remote._publish_judged = cancelled  # after the attempt's start mark: the task ends in a CancelledError
"""
UNREADABLE = """
def dask_setup(worker):
    from rubricflow.tasks.judging import remote

    class Unreadable(BaseException):  # the worker's own, and no Exception: raised, it broke the flow's wait
        pass

    def fails(*args, **kwargs):
        raise Unreadable("only this worker knows this error")

    remote._publish_judged = fails
"""
OTHER_PROMPTS = """
def dask_setup(worker):
    from rubricflow.rubrics import render
    from rubricflow.tasks.judging import judge

    original = render.render_system_prompt
    render.render_system_prompt = judge.render_system_prompt = lambda *a: original(*a) + " Be lenient."
"""


# The cluster's processes give up a connection in 10 s, not Dask's 30: a worker whose scheduler was
# lost (the lost-scheduler test) ended ~30 s after it, not when asked to, and held the test that long.
QUICK_CONNECT = {"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "10s"}


def _cluster(workers: int, folder, preload: dict | None = None) -> DaskCluster:
    """Workers without nannies: every fault here is a task's or the scheduler's, and no test needs a
    worker process restarted (a worker catches what its task raises, BaseException too); a cluster
    of 2 took 2.8 s of CPU to start, not 5.4, and 4 s, not 14, at load 6."""
    return DaskCluster(workers, folder, env=QUICK_CONNECT, preload=preload, nanny=False)


def _start_score(warehouse, server, cluster, *extra, env=None) -> subprocess.Popen:
    command = [EXE, "score", "-c", "c", "-r", "writing-quality", "-w", str(warehouse), "--shard-size", "10"]
    command += ["--base-url", server.base_url, "--cluster", cluster.address, *extra]
    env = {**os.environ, **cluster.tls_env, **(env or {})}
    # files, not pipes: nothing reads a pipe while the run goes on, and a full one would stall the run
    out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
    process = subprocess.Popen(command, stdout=out, stderr=err, text=True, env=env)
    process.outputs = (out, err)
    return process


def _score(warehouse, server, cluster, *extra, timeout=300, env=None):
    process = _start_score(warehouse, server, cluster, *extra, env=env)
    return _ended(process, timeout)


def _ended(process: subprocess.Popen, timeout: float) -> subprocess.CompletedProcess:
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    stdout, stderr = (_read(f) for f in process.outputs)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _read(file) -> str:
    with file:
        file.seek(0)
        return file.read()


def _left_on_scheduler(cluster) -> list[str]:
    from distributed import Client

    def names(dask_scheduler):
        return [*dask_scheduler.extensions["queues"].queues, *dask_scheduler.extensions["variables"].variables]

    with Client(cluster.address, security=cluster.security(), timeout="20s") as client:
        return [n for n in client.run_on_scheduler(names) if n.startswith("rubricflow-")]


@pytest.fixture
def corpus_in(tmp_path):
    def make(cells: int) -> str:
        warehouse = str(tmp_path / "w.duckdb")
        ingest_flow(str(write_corpus(tmp_path / "c.jsonl", cells)), warehouse, "c")
        return warehouse

    return make


def test_a_worker_whose_tasks_fail_costs_a_retry_elsewhere_not_a_hang(tmp_path, judge_server, corpus_in):
    (tmp_path / "recursing.py").write_text(RECURSING)
    server = judge_server()
    warehouse = corpus_in(40)
    with _cluster(2, tmp_path / "dask", {0: tmp_path / "recursing.py"}) as cluster:
        result = _score(warehouse, server, cluster, timeout=240)  # main: waits forever on the first failed task
        left = _left_on_scheduler(cluster)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "RecursionError" in out and "trying again" in out and "Traceback" not in out
    assert rows(warehouse, "SELECT count(*), count(DISTINCT cell_key) FROM completions WHERE status = 'ok'") == [
        (40, 40)
    ]
    assert left == []  # G21: the run's queue and start marks are gone


def test_workers_whose_tasks_end_cancelled_or_unreadable_are_named_and_avoided(tmp_path, judge_server, corpus_in):
    """#50 item 10: such a task showed as "worker ?", was never avoided, took every attempt and failed the run
    (an error raised as a BaseException in the flow's wait hung it RESULT_WAIT_S and printed a traceback)."""
    (tmp_path / "cancelled.py").write_text(CANCELLED)
    (tmp_path / "unreadable.py").write_text(UNREADABLE)
    server = judge_server()
    warehouse = corpus_in(30)
    preload = {0: tmp_path / "cancelled.py", 1: tmp_path / "unreadable.py"}
    with _cluster(3, tmp_path / "dask", preload) as cluster:
        result = _score(warehouse, server, cluster, timeout=400)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "CancelledError" in out and "worker ?" not in out and "Traceback" not in out, out
    named = [line for line in out.splitlines() if "failed:" in line and "(worker tls://127.0.0.1:" in line]
    assert named, out
    assert rows(warehouse, "SELECT count(*), count(DISTINCT cell_key) FROM completions WHERE status = 'ok'") == [
        (30, 30)
    ]


def test_a_worker_rendering_other_prompts_is_refused(tmp_path, judge_server, corpus_in):
    (tmp_path / "other.py").write_text(OTHER_PROMPTS)
    server = judge_server()
    warehouse = corpus_in(10)
    with _cluster(1, tmp_path / "dask", {0: tmp_path / "other.py"}) as cluster:
        result = _score(warehouse, server, cluster)
    out = result.stdout + result.stderr
    assert result.returncode != 0 and "renders other prompts" in out, out
    assert "Traceback" not in out
    assert rows(warehouse, "SELECT count(*) FROM completions") == [(0,)]


def test_a_lost_scheduler_ends_the_run_in_one_line_and_the_rerun_buys_back_only_its_calls_in_flight(
    tmp_path, judge_server, corpus_in
):
    server = judge_server("--latency-ms", "100")
    warehouse = corpus_in(100)
    with _cluster(1, tmp_path / "dask") as cluster:
        first = _start_score(warehouse, server, cluster, "--max-in-flight", "4")
        # mid-run, however long the run takes to begin (a fixed 120 s, counted from before its process
        # started, ran out at load 12: the run then ended whole)
        wait_until(lambda: server.stats()["requests"] > 30 or first.poll() is not None, timeout_s=240)
        # the flow stalls (a loaded machine) while the worker goes on: what it put and the flow did not
        # take is lost with the scheduler (main bought on, ~20 calls a second, and lost 60)
        os.kill(first.pid, signal.SIGSTOP)
        time.sleep(2)
        cluster.kill_scheduler()
        os.kill(first.pid, signal.SIGCONT)
        result = _ended(first, timeout=240)
        landed = rows(warehouse, "SELECT count(*), count(DISTINCT cell_key) FROM completions")[0]
        cluster.restart()  # the user's fix: a scheduler and workers again
        # #41: the rerun's pieces queue for the worker's one thread, the last for ~8 s at 500 ms a call:
        # waiting for a thread is not silence (main gave each piece queued past the deadline up, and
        # sent it again to the back of the queue). 5 s: the restarted worker's first word comes in time
        # on a loaded machine too.
        server.set_latency(500)
        silence = {"RUBRICFLOW_CLUSTER_SILENCE_S": "5"}
        again = _score(warehouse, server, cluster, "--max-in-flight", "4", timeout=240, env=silence)
    out = result.stdout + result.stderr
    assert result.returncode == 2, out
    assert (
        "stopped answering" in out
        and "Traceback" not in out
        and "CommClosedError" not in out.replace("(CommClosedError)", "")
    )
    assert landed[0] == landed[1] and landed[0] < 100
    assert again.returncode == 0, again.stdout + again.stderr
    assert "no word from its worker" not in again.stdout + again.stderr
    judged = rows(warehouse, "SELECT count(*), count(DISTINCT cell_key) FROM completions WHERE status = 'ok'")
    assert judged == [(100, 100)]  # every cell judged, once
    stats = server.stats()
    print(f"bought twice after a lost scheduler: {stats['repeats_after_an_answer']} ({landed[0]} landed before)")
    # docs/operations.md: at most twice the worker's --max-in-flight, its calls in flight and answers the
    # flow has not taken (answers published every half second and bought on after the loss cost 20)
    assert stats["repeats_after_an_answer"] <= 2 * 4, stats


def test_a_hung_worker_is_given_up_and_a_run_past_its_deadline_fails_in_one_line(tmp_path, judge_server):
    """G2: heartbeats prove a task alive, not judging; a run has a deadline of its own."""
    (tmp_path / "hanging.py").write_text(HANGING)
    server = judge_server()
    stalled, late = (str(tmp_path / f"{name}.duckdb") for name in ("stalled", "late"))
    for warehouse in (stalled, late):
        ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 20)), warehouse, "c")
    with _cluster(2, tmp_path / "dask", {0: tmp_path / "hanging.py"}) as cluster:
        # main: the heartbeats keep the hung attempt alive, and the run waits forever
        result = _score(stalled, server, cluster, timeout=300, env={"RUBRICFLOW_CLUSTER_STALL_S": "8"})
        past = _score(late, server, cluster, timeout=300, env={"RUBRICFLOW_CLUSTER_DEADLINE_S": "0.01"})
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "no judged cell from its worker for 8 s" in out and "Traceback" not in out
    assert rows(stalled, "SELECT count(*), count(DISTINCT cell_key) FROM completions WHERE status = 'ok'") == [(20, 20)]
    out = past.stdout + past.stderr
    assert past.returncode == 2, out
    assert "passed its deadline of 0.01s" in out and "Traceback" not in out
    assert rows(late, "SELECT status FROM runs") == [("failed",)]


@pytest.mark.slow
def test_a_cluster_run_that_fills_the_flows_disk_ends_in_one_line_and_the_rerun_buys_nothing_twice(tmp_path):
    """docs/operations.md's "the flow's disk fills" row, on a cluster: a real full tmpfs under the
    flow's warehouse and run folder (tests/cli/test_full_disk.py), the worker on a disk of its own."""
    with _cluster(1, tmp_path / "dask") as cluster:
        more = f"--cluster {cluster.address}"
        stats, first_err = fill_the_disk_while_scoring(tmp_path, SCRIPT, 12, MORE=more, **cluster.tls_env)
    assert "Traceback" not in first_err and "stopped answering" not in first_err, first_err
    with duckdb.connect(str(tmp_path / "after.duckdb"), read_only=True) as con:
        ok = con.execute("SELECT count(*), count(DISTINCT cell_key) FROM completions WHERE status = 'ok'").fetchone()
    assert ok == (TEXTS, TEXTS)  # nothing lost
    assert stats["repeats_after_an_answer"] == 0 and stats["answered"] == TEXTS, stats  # nothing bought twice
