"""What flow commands leave running is named and stopped: `rubricflow demo` ends with the line that
names the background processes (PIDs, how to stop them), and `rubricflow stop` ends them. A real
process recorded as a warm worker stands in for one (a real worker's start costs seconds of imports)."""

import json
import subprocess
import sys

import pytest

from rubricflow.cli.stop import left_running, stop
from rubricflow.tasks.runtime import warm_worker


@pytest.fixture
def worker(tmp_path, monkeypatch):
    """A live process whose command line is a warm worker's, recorded in a state folder of its own."""
    monkeypatch.setenv("RUBRICFLOW_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("RUBRICFLOW_PREFECT_IDLE_S", "600")
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", warm_worker.WORKER_FLAG])
    (tmp_path / "state").mkdir()
    socket = tmp_path / "state" / "worker.sock"
    (tmp_path / "state" / "warm-worker-test.json").write_text(json.dumps({"pid": proc.pid, "socket": str(socket)}))
    yield proc
    proc.kill()
    proc.wait()


def test_nothing_left_running_is_said_as_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("RUBRICFLOW_STATE_DIR", str(tmp_path / "state"))
    assert left_running() is None


def test_the_demo_line_names_the_worker_and_rubricflow_stop_ends_it(worker, capsys):
    note = left_running()
    assert f"1 warm worker(s) (pid {worker.pid})" in note
    assert "after 600 s idle" in note and note.endswith("rubricflow stop")
    stop(force=False)
    assert worker.wait(timeout=10) is not None
    assert "stopped 0 local Prefect server(s) and 1 warm worker(s)" in capsys.readouterr().out
    assert left_running() is None and warm_worker.running() == []
