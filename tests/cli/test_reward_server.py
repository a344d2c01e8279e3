"""`rubricflow reward-server` as a process: a stop by SIGTERM (kill, timeout, systemd and docker stop
send it) lands every judgment it holds and closes its runs, as Ctrl-C does; a bind it cannot make is
one line; IPv6's loopback is served as loopback."""

import json
import os
import signal
import socket
import subprocess
import urllib.request

import duckdb
import pytest

from tests.conftest import EXE


def _start(tmp_path, *args: str) -> tuple[subprocess.Popen, str, str]:
    env = os.environ | {"RUBRICFLOW_STATE_DIR": str(tmp_path / "state")}
    command = [EXE, "reward-server", "--offline", "-r", "llm-slop", "--strategy", "holistic", *args]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert " on http" in line, (line, proc.stderr.read() if proc.poll() is not None else "")
        secret = (tmp_path / "state" / "reward-server.secret").read_text().strip()
    except BaseException:  # a start that went wrong leaves no server behind
        proc.kill()
        proc.wait(timeout=30)
        raise
    return proc, line.split(" on ", 1)[1].split(" ", 1)[0], secret


def _post(url: str, secret: str, body: dict) -> dict:
    request = urllib.request.Request(
        url + "/v1/rewards", data=json.dumps(body).encode(), headers={"Authorization": f"Bearer {secret}"}
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


def test_sigterm_lands_every_judgment_and_closes_the_run(tmp_path):
    """An outside probe: SIGTERM ended the server with nothing landed (400 judgments lost, the
    warehouse never made) and left runs `running`."""
    warehouse = tmp_path / "w.duckdb"
    proc, url, secret = _start(tmp_path, "--port", "0", "-w", str(warehouse))
    try:
        texts = [f"The ferry {i} leaves the east pier at noon on weekdays, the office said." for i in range(12)]
        rewards = _post(url, secret, {"rollouts": texts})["results"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    with duckdb.connect(str(warehouse), read_only=True) as con:
        statuses = con.execute("SELECT DISTINCT status FROM runs").fetchall()
        scores = con.execute("SELECT text_id, score FROM text_scores WHERE rubric_id = 'llm-slop'").fetchall()
    assert statuses == [("completed",)]
    assert sorted(s for _, s in scores) == pytest.approx(sorted(r["reward"] for r in rewards))


def test_a_port_it_cannot_listen_on_is_one_line(tmp_path):
    result = subprocess.run(
        [EXE, "reward-server", "--offline", "-r", "llm-slop", "--port", "99999"],
        env=os.environ | {"RUBRICFLOW_STATE_DIR": str(tmp_path / "state")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "cannot listen on 127.0.0.1:99999" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback(), reason="this machine has no IPv6 loopback")
def test_ipv6_loopback_is_served_without_tls(tmp_path):
    """An outside probe: `--host ::1` was refused as "beyond this machine" and `[::1]` failed to bind."""
    proc, url, secret = _start(tmp_path, "--port", "0", "--host", "::1")
    try:
        assert url.startswith("http://[::1]:")
        [result] = _post(url, secret, {"rollouts": ["The office opens at nine on weekdays, the sign says."]})["results"]
        assert result["reward"] is not None
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
