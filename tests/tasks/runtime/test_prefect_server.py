"""The local Prefect server flow commands share: started once, reused, stopped by its PID, gone
by itself when idle, and never used when the user points PREFECT_API_URL elsewhere."""

import base64
import json
import os
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from rubricflow.errors import InputError
from rubricflow.tasks.runtime import prefect_server


@pytest.fixture
def state(tmp_path, monkeypatch):
    """A state folder of the test's own; the variables `use_shared_server` sets (PREFECT_API_URL and
    its auth string) are undone after the test, so no later test in this process talks to the server
    this test stopped (monkeypatch only undoes what it set itself)."""
    saved = dict(os.environ)
    monkeypatch.setenv("RUBRICFLOW_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.delenv("RUBRICFLOW_PREFECT_SERVER", raising=False)
    yield tmp_path / "state"
    prefect_server.stop()
    os.environ.clear()
    os.environ.update(saved)


def test_started_once_by_concurrent_commands_then_reused_and_stopped(state, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-for-the-prefect-server")
    starters = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from rubricflow.tasks.runtime import prefect_server as p; print(p.use_shared_server())",
            ],
            stdout=subprocess.PIPE,
            text=True,
            env=os.environ,
        )
        for _ in range(3)
    ]
    urls = {p.communicate(timeout=180)[0].strip() for p in starters}
    assert len(urls) == 1 and next(iter(urls)).startswith("http://127.0.0.1:")  # one server for all three
    recorded = json.loads(prefect_server.state_file().read_text())
    started = time.perf_counter()
    assert prefect_server.use_shared_server() == next(iter(urls))  # found, not started again
    assert time.perf_counter() - started < 8  # a start takes longer (and would change the pid, below)
    assert os.environ["PREFECT_API_URL"] == next(iter(urls))
    assert prefect_server.current().pid == recorded["pid"]
    environ = open(f"/proc/{recorded['pid']}/environ", "rb").read()  # the server outlives the command: no secrets
    assert b"PREFECT_HOME" in environ and b"sk-canary-for-the-prefect-server" not in environ
    monkeypatch.setenv("XDG_CACHE_HOME", str(state / "cache"))  # where a new home's empty database is kept
    monkeypatch.setenv("PREFECT_HOME", str(state / "another-home"))  # another Prefect database: another server
    monkeypatch.delenv("PREFECT_API_URL")
    other = prefect_server.use_shared_server()
    assert other != next(iter(urls))
    prefect_server.stop()
    kept = prefect_server.kept_database()  # kept by that server, from its new, empty database
    assert block_types(kept) == block_types(state / "another-home" / "prefect.db") != []
    assert sqlite3.connect(kept).execute("SELECT count(*) FROM configuration").fetchone() == (0,)
    monkeypatch.setenv("PREFECT_HOME", str(state / "third-home"))  # a new home starts from the kept copy
    monkeypatch.delenv("PREFECT_API_URL")
    assert prefect_server.use_shared_server() not in (other, None)
    prefect_server.stop()
    assert block_types(state / "third-home" / "prefect.db") == block_types(kept)  # the same rows, not new ones
    monkeypatch.undo()
    monkeypatch.setenv("RUBRICFLOW_STATE_DIR", str(state))
    stopped = prefect_server.stop()
    assert stopped.pid == recorded["pid"] and prefect_server.current() is None
    with pytest.raises(ProcessLookupError):
        os.kill(recorded["pid"], 0)


def block_types(database) -> list[tuple]:
    """Prefect's registered block types (ids made at random when a database is migrated and registered)."""
    con = sqlite3.connect(database)
    try:
        return con.execute("SELECT id, slug FROM block_type ORDER BY slug").fetchall()
    finally:
        con.close()


def test_an_idle_server_stops_itself(state, monkeypatch):
    monkeypatch.setenv("RUBRICFLOW_PREFECT_IDLE_S", "2")
    prefect_server.use_shared_server()
    pid = prefect_server.current().pid
    deadline = time.monotonic() + 60
    while prefect_server._alive(pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not prefect_server._alive(pid)
    assert prefect_server.current() is None


@pytest.fixture
def answering_url():
    """An HTTP server on 127.0.0.1 that answers every GET (as a user's Prefect server's /health would)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Healthy(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Healthy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/api"
    server.shutdown()
    server.server_close()


def test_the_users_prefect_api_url_or_ephemeral_mode_is_left_alone(state, monkeypatch, answering_url):
    monkeypatch.setenv("PREFECT_API_URL", answering_url)
    assert prefect_server.use_shared_server() is None
    assert os.environ["PREFECT_API_URL"] == answering_url
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # G15: nothing answers there
    with pytest.raises(InputError, match="the Prefect API at http://127.0.0.1:9/api .* does not answer"):
        prefect_server.use_shared_server()
    monkeypatch.delenv("PREFECT_API_URL")
    monkeypatch.setenv("RUBRICFLOW_PREFECT_SERVER", "ephemeral")
    assert prefect_server.use_shared_server() is None and "PREFECT_API_URL" not in os.environ
    assert not prefect_server.state_file().exists()


def test_commands_that_run_no_flow_never_start_a_server(state, tmp_path):
    from tests.conftest import EXE

    for args in (["rubric", "list"], ["query", "SELECT 1", "-w", str(tmp_path / "w.duckdb")], ["prefect-server"]):
        subprocess.run([EXE, *args], capture_output=True, text=True, env=os.environ, timeout=120)
    assert prefect_server.current() is None and not prefect_server.state_file().exists()


def _call(url: str, method: str = "POST", headers: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=b"{}" if method == "POST" else None, method=method)
    for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers)


def test_the_shared_server_serves_its_owner_only(state, monkeypatch, tmp_path):
    """#21 N3: another local user, or a web page, read flow parameters and forged artifacts. #50
    item 15: under umask 022 its database, home and log were readable by every local user."""
    home = tmp_path / "prefect-home"
    home.mkdir()
    home.chmod(0o755)  # made before, by `prefect` itself under umask 022; its database by the server
    monkeypatch.setenv("PREFECT_HOME", str(home))
    before = os.umask(0o022)
    try:
        api = prefect_server.use_shared_server()
    finally:
        os.umask(before)
    for path, wanted in ((home, 0o700), (home / "prefect.db", 0o600), (prefect_server.log_file(), 0o600)):
        assert path.stat().st_mode & 0o777 == wanted, (path, oct(path.stat().st_mode))
    loose = [p for p in home.glob("prefect.db*") if p.is_file()]  # the database and SQLite's companions
    for path in loose:
        path.chmod(0o644)  # loosened (or made by an older rubricflow) while the server runs
    assert prefect_server.use_shared_server() == api  # the running server, its state tightened again
    for path in loose:
        assert path.stat().st_mode & 0o777 == 0o600, (path, oct(path.stat().st_mode))
    auth = os.environ["PREFECT_API_AUTH_STRING"]
    assert (state / "prefect-server.secret").stat().st_mode & 0o777 == 0o600
    assert auth.split(":", 1)[1] == (state / "prefect-server.secret").read_text()
    owner = {"Authorization": "Basic " + base64.b64encode(auth.encode()).decode()}
    assert _call(f"{api}/flow_runs/filter")[0] == 401  # no secret: nothing read
    assert _call(f"{api}/artifacts/", headers={"Authorization": "Basic " + base64.b64encode(b"x:y").decode()})[0] == 401
    assert _call(f"{api}/flow_runs/filter", headers=owner)[0] == 200
    rebound = _call(f"{api}/flow_runs/filter", headers={**owner, "Host": "evil.example"})
    assert rebound[0] == 403
    preflight = {"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}
    status, headers = _call(f"{api}/flow_runs/filter", "OPTIONS", preflight)
    assert "access-control-allow-origin" not in {k.lower() for k in headers}, headers
    assert _call(f"{api}/health", "GET")[0] == 200  # the health check alone is open (it says nothing)


def test_a_prefect_profiles_or_settings_files_api_url_is_left_alone(state, tmp_path, monkeypatch, answering_url):
    """#21 N12: a profile's PREFECT_API_URL (`prefect config set`) was replaced by the local server;
    G15: one that nothing answers is one line naming it."""
    profiles = tmp_path / "profiles.toml"
    profiles.write_text(
        f'active = "team"\n[profiles.team]\nPREFECT_API_URL = "{answering_url}"\n[profiles.ephemeral]\n'
    )
    monkeypatch.setenv("PREFECT_PROFILES_PATH", str(profiles))
    monkeypatch.chdir(tmp_path)
    assert prefect_server.use_shared_server() is None and "PREFECT_API_URL" not in os.environ
    profiles.write_text('active = "team"\n[profiles.team]\nPREFECT_API_URL = "http://127.0.0.1:9/api"\n')
    with pytest.raises(InputError, match="the Prefect API at http://127.0.0.1:9/api"):
        prefect_server.use_shared_server()
    monkeypatch.setenv("PREFECT_PROFILE", "ephemeral")  # the profile chosen by variable decides
    (tmp_path / "prefect.toml").write_text('[api]\nurl = "http://127.0.0.1:4998/api"\n')
    assert prefect_server.users_api_url() == "http://127.0.0.1:4998/api"
    (tmp_path / "prefect.toml").unlink()
    (tmp_path / ".env").write_text("PREFECT_API_URL='http://127.0.0.1:4997/api'\n")
    assert prefect_server.users_api_url() == "http://127.0.0.1:4997/api"
    (tmp_path / ".env").unlink()
    assert prefect_server.users_api_url() is None
    assert not prefect_server.state_file().exists()


@pytest.mark.slow
def test_stopping_the_server_under_a_running_command_is_refused_by_name(tmp_path, judge_server):
    """N9: `prefect-server --stop` during a `score` hung the command ~4 min, printed 125 KB of
    errors and exited 1. Now --stop names the commands using the server and leaves it running."""
    from tests.conftest import EXE, write_corpus

    env = {**os.environ, "RUBRICFLOW_STATE_DIR": str(tmp_path / "state"), "RUBRICFLOW_WARM_WORKER": "0"}
    env.pop("PREFECT_API_URL", None)
    slow = judge_server("--latency-ms", "400")
    write_corpus(tmp_path / "c.jsonl", 12)
    run = [EXE, "ingest", "c.jsonl", "-c", "c", "-w", "w.duckdb"]
    assert subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, timeout=300).returncode == 0
    score = subprocess.Popen(
        [
            EXE,
            "score",
            "-c",
            "c",
            "-r",
            "llm-slop",
            "-w",
            "w.duckdb",
            "--base-url",
            slow.base_url,
            "--max-in-flight",
            "1",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        users = tmp_path / "state" / "flow-commands"
        deadline = time.monotonic() + 120
        while not (users.is_dir() and any(users.iterdir())) and time.monotonic() < deadline:
            time.sleep(0.1)
        stop = subprocess.run([EXE, "prefect-server", "--stop"], env=env, capture_output=True, text=True, timeout=60)
        assert stop.returncode == 1 and f"{score.pid} (score -c)" in stop.stderr.replace("\n", " "), stop.stderr
        slow.set_latency(0)  # refused while the score ran: the rest of it at full speed
        out, err = score.communicate(timeout=300)
        assert score.returncode == 0 and "status completed" in out, err[-2000:]
    finally:
        score.kill()
    stop = subprocess.run([EXE, "prefect-server", "--stop"], env=env, capture_output=True, text=True, timeout=60)
    assert stop.returncode == 0 and "stopped the local Prefect server" in stop.stdout
