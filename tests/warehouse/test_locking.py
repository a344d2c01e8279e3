"""Concurrent access (finding 9 of the reliability pass): a writer waits for a reader's hold
instead of failing, the same work cannot run twice at once, and a run whose process died is
recognised as stale."""

import re
import subprocess
import sys
import time

import pytest

from rubricflow.warehouse import db, locks, steps

HOLD = (
    "import duckdb, sys, time; c = duckdb.connect(sys.argv[1], read_only=sys.argv[2] == 'r'); "
    "print('held', flush=True); time.sleep(float(sys.argv[3]))"
)


def hold(path, mode: str, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path), mode, str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


@pytest.fixture
def warehouse(tmp_path):
    path = tmp_path / "w.duckdb"
    with db.writer(path):
        pass
    return path


def test_a_writer_waits_for_a_reader_instead_of_failing(warehouse, monkeypatch, capfd):
    monkeypatch.setenv("RUBRICFLOW_LOCK_WAIT_S", "30")
    reader = hold(warehouse, "r", 1.5)
    started = time.monotonic()
    with db.writer(warehouse) as con:
        con.execute("INSERT INTO labels VALUES ('c', 't', 'x', 'human', 1.0, NULL)")
    assert time.monotonic() - started >= 0.5  # it waited for the reader, then wrote
    reader.wait(timeout=30)
    reader.stdout.close()  # its pipe, not left to the collector (a ResourceWarning in a later test)
    said = capfd.readouterr().err
    assert f"waiting for {warehouse}: held by process {reader.pid}" in said and said.count("waiting for") == 1


def test_a_hold_longer_than_the_wait_is_a_clear_transient_error(warehouse, monkeypatch):
    monkeypatch.setenv("RUBRICFLOW_LOCK_WAIT_S", "0.5")
    holder = hold(warehouse, "w", 5)
    try:
        with pytest.raises(db.WarehouseLocked, match=r"locked by another process .*waited 0.5 s") as caught:
            with db.writer(warehouse):
                pass
        assert caught.value.transient and caught.value.exit_code == 2
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


def test_the_same_work_cannot_run_twice_at_once(tmp_path):
    w = tmp_path / "w.duckdb"
    with locks.run_lock(w, "c", "r1", "j1", "run-a"):
        assert locks.is_held(w, "c", "r1", "j1")
        with pytest.raises(locks.RunInProgress, match=r"run run-a \(pid \d+\) is already scoring corpus 'c'"):
            with locks.run_lock(w, "c", "r1", "j1", "run-b"):
                pass
        with locks.run_lock(w, "c", "r2", "j1", "run-c"):  # another rubric version is other work
            pass
    assert not locks.is_held(w, "c", "r1", "j1")


def test_a_run_whose_process_died_is_closed_as_interrupted(warehouse, tmp_path):
    code = (
        "import sys, time; from rubricflow.warehouse.locks import run_lock; "
        "cm = run_lock(sys.argv[1], 'c', 'r', 'j', 'dead'); cm.__enter__(); print('locked', flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(warehouse)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    with db.writer(warehouse) as con:
        for run_id, rubric in (("dead", "r"), ("alive", "r2")):
            con.execute(
                "INSERT INTO runs (run_id, corpus_id, rubric_hash, judge_hash, model, strategy, samples, "
                "parameters, status, started_at) VALUES (?, 'c', ?, 'j', 'm', 'holistic', 1, '{}', 'running', now())",
                [run_id, rubric],
            )
        with locks.run_lock(warehouse, "c", "r2", "j", "alive"):
            assert steps.close_stale_runs(con, warehouse) == []  # both processes live
            proc.kill()
            proc.wait()
            proc.stdout.close()
            assert steps.close_stale_runs(con, warehouse) == ["dead"]
        status = dict(con.execute("SELECT run_id, status FROM runs").fetchall())
    assert status == {"dead": "interrupted", "alive": "running"}


def test_a_short_wait_says_its_own_seconds(warehouse, capfd):
    """A call with its own wait (the viewer's) said "waited 60 s", the default, and a fraction of a
    second showed as "waiting up to 0 s"."""
    holder = hold(warehouse, "w", 5)
    try:
        with pytest.raises(db.WarehouseLocked, match=r"\(waited 0.4 s;"):
            db.connect(warehouse, read_only=True, wait_s=0.4)
        assert re.search(r"waiting up to (0\.[1-4]|0) s", capfd.readouterr().err)  # 0: a machine that slow
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    assert db.seconds(0.04) == "0.1 s" and db.seconds(12.0) == "12 s" and db.seconds(1.55) == "1.6 s"


def test_a_second_thread_of_the_process_waits_for_the_same_work(tmp_path):
    """#50 item 13: Warehouse.score from two threads at once failed one call (RunInProgress naming
    its own process); the second thread now waits for the first, then finds the cells landed."""
    import threading

    w = tmp_path / "w.duckdb"
    order: list[str] = []
    first_holds, failures = threading.Event(), []

    def second() -> None:
        first_holds.wait()
        try:
            with locks.run_lock(w, "c", "r1", "j1", "run-b"):
                order.append("second")
        except Exception as exc:  # noqa: BLE001 - what the thread met, asserted below
            failures.append(exc)

    thread = threading.Thread(target=second)
    thread.start()
    with locks.run_lock(w, "c", "r1", "j1", "run-a"):
        first_holds.set()
        time.sleep(0.3)  # the second thread is waiting now
        order.append("first")
    thread.join(timeout=10)
    assert failures == [] and order == ["first", "second"]
