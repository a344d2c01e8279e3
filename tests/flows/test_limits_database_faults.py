"""G5/G6: the shared rate-limit database failing mid-run. A PostgreSQL stopped mid-run (or
stalled) fails the cells that need a lease, and the run says so: failed, exit non-zero, the
database named once, never "completed" with a third of its cells failed; retries never negative."""

import os
import signal
import subprocess

from rubricflow.flows.ingest import ingest_flow
from rubricflow.tasks.standins.cluster import Postgres, wait_until
from tests.conftest import EXE, rows, write_corpus


def _score(tmp_path, server, url):
    warehouse = tmp_path / "w.duckdb"
    corpus = write_corpus(tmp_path / "c.jsonl", 60)
    ingest_flow(str(corpus), str(warehouse), "c")  # in-process: the `score` process is the one under test
    command = [EXE, "score", "-c", "c", "-r", "writing-quality", "--strategy", "per_criterion", "-w", str(warehouse)]
    command += ["--base-url", server.base_url, "--rpm", "1200", "--limits", url, "--max-in-flight", "4"]
    return warehouse, subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _check_failed_run(warehouse, out: str, returncode: int) -> None:
    assert returncode != 0, out
    assert "rate-limit" in out and "Traceback" not in out, out
    assert rows(str(warehouse), "SELECT status FROM runs") == [("failed",)]
    assert rows(str(warehouse), "SELECT min(retries) >= 0 FROM run_summary") == [(True,)]


def test_a_limits_database_stopped_mid_run_fails_the_run(tmp_path, thread_judge_server):
    server = thread_judge_server(latency_ms=20)
    with Postgres() as pg:
        warehouse, proc = _score(tmp_path, server, pg.url)
        wait_until(lambda: server.stats()["requests"] > 40, timeout_s=120)
        pg._run("pg_ctl", "-D", str(pg.folder / "data"), "-m", "immediate", "-w", "stop")
        out = proc.communicate(timeout=300)[0]
        options = f"-c listen_addresses=127.0.0.1 -p {pg.port} -k {pg.folder}"
        pg._run("pg_ctl", "-D", str(pg.folder / "data"), "-o", options, "-l", str(pg.folder / "pg2.log"), "-w", "start")
    assert server.stats()["requests"] < 180  # the cells after the stop were not judged
    _check_failed_run(warehouse, out, proc.returncode)


def test_a_stalled_limits_database_fails_the_run_instead_of_hanging(tmp_path, thread_judge_server):
    server = thread_judge_server(latency_ms=20)
    with Postgres() as pg:
        warehouse, proc = _score(tmp_path, server, pg.url)
        wait_until(lambda: server.stats()["requests"] > 40, timeout_s=120)
        postmaster = int((pg.folder / "data" / "postmaster.pid").read_text().split()[0])
        children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True).stdout.split()
        stalled = [postmaster, *map(int, children)]
        for pid in stalled:
            os.kill(pid, signal.SIGSTOP)
        try:
            out = proc.communicate(timeout=180)[0]  # main: the run waits forever on the lease
        finally:
            for pid in stalled:
                os.kill(pid, signal.SIGCONT)
    _check_failed_run(warehouse, out, proc.returncode)
