"""The warm worker that flow commands run in: a command it serves gets the caller's arguments,
directory, environment and terminal, and its exit code and Ctrl-C pass through; a caller that dies
takes its command along; the worker holds no secrets, and a changed setup gets a new worker."""

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from rubricflow.tasks.runtime import prefect_server, warm_worker
from tests.conftest import EXE, rows, write_corpus


@pytest.fixture(scope="module")
def state_env(tmp_path_factory):
    """A caller's environment with a state folder of its own, for the module: one Prefect server
    (its start is most of a test's time), stopped with its workers at the end."""
    state = tmp_path_factory.mktemp("warm") / "state"
    environ = {**os.environ, "RUBRICFLOW_STATE_DIR": str(state), "OPENAI_API_KEY": "sk-canary-never-in-the-worker"}
    for name in ("PREFECT_API_URL", "RUBRICFLOW_WARM_WORKER", "RUBRICFLOW_PREFECT_SERVER", "RUBRICFLOW_WAREHOUSE"):
        environ.pop(name, None)
    yield environ
    subprocess.run([EXE, "prefect-server", "--stop"], env=environ, capture_output=True, timeout=60)


@pytest.fixture
def env(state_env, monkeypatch):
    """The module's caller environment, with the module's warm worker where an earlier test left one
    (a worker's start is seconds of CPU: tests that need none yet ask for `fresh_env`)."""
    monkeypatch.setenv("RUBRICFLOW_STATE_DIR", state_env["RUBRICFLOW_STATE_DIR"])
    return dict(state_env)


@pytest.fixture
def fresh_env(env):
    """The module's caller environment with no warm worker yet: the test's first command starts one
    (the module's Prefect server stays)."""
    warm_worker.stop_all()
    return env


def served(state: Path) -> list[str]:
    """The commands the workers of this state folder ran, from their logs (the newest log last)."""
    logs = sorted(state.glob("warm-worker-*.log"), key=lambda log: log.stat().st_mtime_ns)
    return [line for log in logs for line in log.read_text().splitlines() if ": runner " in line]


def worker_ready(state: Path, timeout_s: float = 120) -> dict:
    """The record of the state folder's live worker once it is ready."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for found in state.glob("warm-worker-*.json"):
            try:
                record = json.loads(found.read_text())
            except (OSError, ValueError):
                continue
            if record.get("ready") and prefect_server._alive(int(record["pid"])):
                return record
        time.sleep(0.2)
    raise AssertionError("no warm worker became ready")


def cli(env: dict, cwd: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, **kw)


def test_a_flow_command_runs_in_the_worker_with_the_callers_directory_environment_and_exit_code(
    fresh_env, tmp_path, judge_server
):
    env = fresh_env
    server = judge_server()
    state = Path(env["RUBRICFLOW_STATE_DIR"])
    seen = len(served(state))  # the commands earlier tests' workers ran
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        folder.mkdir()
        write_corpus(folder / "c.jsonl", 6)
    done = cli(env, first, "ingest", "c.jsonl", "-c", "c", "-w", "w.duckdb")  # no worker yet: runs here, starts one
    assert done.returncode == 0, done.stderr
    assert served(state)[seen:] == []
    record = worker_ready(state)
    assert len(record["threads"]) == 1 and len(os.listdir(f"/proc/{record['pid']}/task")) == 1  # safe to fork
    environ = Path(f"/proc/{record['pid']}/environ").read_bytes()
    assert b"RUBRICFLOW_STATE_DIR" in environ and b"sk-canary-never-in-the-worker" not in environ

    # Another folder, the warehouse named only by the caller's environment, relative to its directory.
    caller = {**env, "RUBRICFLOW_WAREHOUSE": "mine.duckdb"}
    done = cli(caller, second, "ingest", "c.jsonl", "-c", "c2")
    assert done.returncode == 0, done.stderr
    assert "corpus c2: 6 texts loaded" in done.stdout  # the runner printed on the caller's stdout
    done = cli(caller, second, "score", "-c", "c2", "-r", "llm-slop", "--base-url", server.base_url)
    assert done.returncode == 0, done.stderr
    assert "status completed" in done.stdout and "light slop" in done.stdout
    assert [line.split(":")[0] for line in served(state)[seen:]] == ["ingest", "score"]
    assert rows(second / "mine.duckdb", "SELECT count(*), count(DISTINCT text_id) FROM completions") == [(6, 6)]
    assert not (first / "mine.duckdb").exists()

    refused = cli(caller, second, "score", "-c", "no-such-corpus", "-r", "llm-slop", "--base-url", server.base_url)
    assert refused.returncode == 2
    assert "no-such-corpus" in refused.stderr and "Traceback" not in refused.stderr
    assert len(served(state)[seen:]) == 3  # the refusal came from the worker too
    usage = cli(caller, second, "score", "--no-such-option")  # Click's own refusal, from the worker too
    assert usage.returncode == 2 and len(served(state)[seen:]) == 4
    assert "Usage: rubricflow score [OPTIONS]" in usage.stderr, usage.stderr  # named as the user typed it
    off = cli({**caller, "RUBRICFLOW_WARM_WORKER": "0"}, second, "ingest", "c.jsonl", "-c", "c3")
    assert off.returncode == 0 and len(served(state)[seen:]) == 4


def test_ctrl_c_reaches_the_command_and_a_killed_caller_takes_its_command_along(env, tmp_path, judge_server):
    server = judge_server("--latency-ms", "200")
    state = Path(env["RUBRICFLOW_STATE_DIR"])
    write_corpus(tmp_path / "c.jsonl", 200)
    assert cli(env, tmp_path, "ingest", "c.jsonl", "-c", "c", "-w", "w.duckdb").returncode == 0
    worker_ready(state)

    def start_scoring(environ: dict) -> tuple[subprocess.Popen, int | None]:
        before, answered = len(served(state)), server.stats()["answered"]
        proc = subprocess.Popen(
            [
                EXE,
                "score",
                "-c",
                "c",
                "-r",
                "llm-slop",
                "--base-url",
                server.base_url,
                "-w",
                "w.duckdb",
                "--max-in-flight",
                "2",
            ],
            cwd=tmp_path,
            env=environ,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while server.stats()["answered"] < answered + 4 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()
        return proc, int(served(state)[-1].rsplit(" ", 1)[-1]) if len(served(state)) > before else None

    endings = []
    for environ in ({**env, "RUBRICFLOW_WARM_WORKER": "0"}, env):  # Ctrl-C ends a command alike with and without
        proc, runner = start_scoring(environ)
        proc.send_signal(signal.SIGINT)  # what Ctrl-C sends the caller
        proc.communicate(timeout=120)
        endings.append(
            (proc.returncode, rows(tmp_path / "w.duckdb", "SELECT status FROM runs ORDER BY started_at DESC")[0])
        )
    assert runner is not None and not prefect_server._alive(runner)
    assert endings[0] == endings[1] == (130, ("interrupted",))  # closed `interrupted`, what landed kept

    proc, runner = start_scoring(env)
    os.killpg(proc.pid, signal.SIGKILL)  # the caller dies without a word
    proc.wait()
    deadline = time.monotonic() + 30
    while prefect_server._alive(runner) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not prefect_server._alive(runner)
    assert rows(tmp_path / "w.duckdb", "SELECT count(*) < 600 FROM completions") == [(True,)]


def test_a_changed_setup_gets_its_own_worker_but_another_folder_does_not(tmp_path, monkeypatch):
    monkeypatch.setenv("RUBRICFLOW_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4200/api")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    key = warm_worker.setup_key()
    monkeypatch.chdir(tmp_path / "b")
    assert warm_worker.setup_key() == key  # commands from any folder share the worker
    (tmp_path / "b" / "prefect.toml").write_text("[logging]\nlevel = 'DEBUG'\n")
    assert warm_worker.setup_key() != key  # Prefect would read these settings: another worker
    monkeypatch.chdir(tmp_path / "a")
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4201/api")
    assert warm_worker.setup_key() != key
    key = warm_worker.setup_key()
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # N11: the caller's PYTHONPATH was ignored
    assert warm_worker.setup_key() != key
    key = warm_worker.setup_key()
    packages = tmp_path / "site"
    packages.mkdir()
    monkeypatch.syspath_prepend(str(packages))
    key = warm_worker.setup_key()
    time.sleep(0.01)
    (packages / "newly_installed-1.0.dist-info").mkdir()  # N11: pip install changed nothing for the worker
    assert warm_worker.setup_key() != key
    assert warm_worker.wanted(["--debug", "score", "-c", "x"]) and not warm_worker.wanted(["score", "--help"])
    assert not warm_worker.wanted(["rubric", "list"]) and not warm_worker.wanted(["query", "SELECT 1"])
    monkeypatch.setenv("RUBRICFLOW_WARM_WORKER", "0")
    assert not warm_worker.wanted(["score", "-c", "x"])


def test_an_offer_not_taken_is_withdrawn():
    """The worker's side of the hand-over: it runs a command only once its caller says go."""
    worker, caller = socket.socketpair()
    caller.close()  # the caller gave up before the offer came
    assert not warm_worker._taken(worker)
    worker, caller = socket.socketpair()
    caller.sendall(b"G")
    assert warm_worker._taken(worker) and caller.recv(100) == b'{"offer": true}\n'


def test_a_stalled_worker_is_passed_over_and_never_runs_the_command_as_well(fresh_env, tmp_path):
    """N8: a stalled worker made each command wait 120 s, then run here while the queued request ran
    there too. Now the caller waits a few seconds for the worker's offer, withdraws and runs the
    command itself (once: its output says so once), and retires the stalled worker."""
    env = fresh_env
    state = Path(env["RUBRICFLOW_STATE_DIR"])
    seen = len(served(state))
    write_corpus(tmp_path / "c.jsonl", 4)
    assert cli(env, tmp_path, "ingest", "c.jsonl", "-c", "a", "-w", "a.duckdb").returncode == 0
    record = worker_ready(state)
    os.kill(record["pid"], signal.SIGSTOP)
    try:
        started = time.monotonic()
        done = cli(
            {**env, "RUBRICFLOW_WARM_WORKER_WAIT_S": "1"}, tmp_path, "ingest", "c.jsonl", "-c", "b", "-w", "b.duckdb"
        )
        took = time.monotonic() - started
    finally:
        if prefect_server._alive(record["pid"]):
            os.kill(record["pid"], signal.SIGCONT)
    assert done.returncode == 0 and done.stdout.count("corpus b: 4 texts loaded") == 1, done.stdout + done.stderr
    assert took < 60 and not prefect_server._alive(record["pid"])  # passed over, then ended by its PID
    time.sleep(1)
    assert served(state)[seen:] == [] and rows(tmp_path / "b.duckdb", "SELECT count(*) FROM texts") == [(4,)]


@pytest.mark.slow
def test_concurrent_commands_never_hang_and_never_run_twice(env, tmp_path):
    """8 commands at once, ROUNDS times (RUBRICFLOW_STRESS_ROUNDS, 1 here, CI time: a round is 8 process
    starts; 25 in the closing note's run):
    every one ends in time, exits 0, and says its result exactly once."""
    rounds = int(os.environ.get("RUBRICFLOW_STRESS_ROUNDS", "1"))
    seen = len(served(Path(env["RUBRICFLOW_STATE_DIR"])))
    write_corpus(tmp_path / "c.jsonl", 3)
    assert cli(env, tmp_path, "ingest", "c.jsonl", "-c", "warm", "-w", "warm.duckdb").returncode == 0
    worker_ready(Path(env["RUBRICFLOW_STATE_DIR"]))
    for r in range(rounds):
        procs = [
            subprocess.Popen(
                [EXE, "ingest", "c.jsonl", "-c", f"c{r}x{i}", "-w", f"w{r}x{i}.duckdb"],
                cwd=tmp_path,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(8)
        ]
        for i, proc in enumerate(procs):
            out, err = proc.communicate(timeout=180)  # a hang fails here
            assert proc.returncode == 0 and out.count(f"corpus c{r}x{i}: 3 texts loaded") == 1, (out, err)
    to_worker = len(served(Path(env["RUBRICFLOW_STATE_DIR"]))[seen:])
    print(f"\n{to_worker} of {rounds * 8} commands went to the worker")
    assert to_worker >= rounds * 8 // 2  # most went to the worker


def test_the_callers_time_zone_reaches_the_command(env, tmp_path):
    """N11: a command run by the worker kept the worker's TZ (Prefect's log lines in its local time)."""
    import datetime as dt
    import re
    from zoneinfo import ZoneInfo

    seen = len(served(Path(env["RUBRICFLOW_STATE_DIR"])))
    write_corpus(tmp_path / "c.jsonl", 2)
    env = {**env, "PREFECT_LOGGING_LEVEL": "INFO"}  # a rubricflow error is said once, without Prefect's line
    assert cli(env, tmp_path, "ingest", "c.jsonl", "-c", "c", "-w", "w.duckdb").returncode == 0
    worker_ready(Path(env["RUBRICFLOW_STATE_DIR"]))
    zone = "Etc/GMT-14"  # UTC+14: no machine's own zone
    loud = {
        **env,
        "TZ": zone,
        "PREFECT_LOGGING_LEVEL": "INFO",
    }  # a rubricflow error is said once, without Prefect's line
    done = cli(loud, tmp_path, "ingest", "c.jsonl", "-c", "x", "-w", "w.duckdb")
    assert done.returncode == 0 and len(served(Path(env["RUBRICFLOW_STATE_DIR"]))[seen:]) >= 1
    logged = re.search(r"^(\d\d):(\d\d):\d\d\.\d+ \| INFO", done.stdout + done.stderr, re.M)
    assert logged, done.stdout + done.stderr
    now = dt.datetime.now(ZoneInfo(zone))
    minutes = int(logged.group(1)) * 60 + int(logged.group(2))
    assert (
        min(
            abs(minutes - (now.hour * 60 + now.minute)) % 1440,
            1440 - abs(minutes - (now.hour * 60 + now.minute)) % 1440,
        )
        <= 2
    )


def test_a_command_in_the_worker_sends_the_callers_prefect_auth_string(env, tmp_path):
    """A user's own Prefect server that wants a key: the worker imported Prefect under its own
    environment, which holds no secrets; the command's runner reads the caller's (was 401)."""
    state = Path(env["RUBRICFLOW_STATE_DIR"])
    seen = len(served(state))
    started = subprocess.run(
        [
            "python",
            "-c",
            "from rubricflow.tasks.runtime import prefect_server as p; print(p.use_shared_server()); "
            "print(p.auth_string())",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    url, auth = started.stdout.split()
    caller = {**env, "PREFECT_API_URL": url, "PREFECT_API_AUTH_STRING": auth}
    write_corpus(tmp_path / "c.jsonl", 3)
    assert cli(caller, tmp_path, "ingest", "c.jsonl", "-c", "a", "-w", "w.duckdb").returncode == 0
    worker_ready(state)
    done = cli(caller, tmp_path, "ingest", "c.jsonl", "-c", "b", "-w", "w.duckdb")
    assert done.returncode == 0 and "Unauthorized" not in done.stderr, done.stderr
    assert [line.split(":")[0] for line in served(state)[seen:]] == ["ingest"]
    refused = cli({**caller, "PREFECT_API_AUTH_STRING": "rubricflow:wrong"}, tmp_path, "ingest", "c.jsonl", "-c", "d")
    assert refused.returncode != 0  # the server does check the string


def test_the_worker_prewarms_every_flow_commands_own_module():
    """The worker imports each flow command's CLI module, found from the CLI's own command table: a
    flow command renamed in one place and not the other would run, importing its module per run."""
    from rubricflow.cli import COMMANDS
    from rubricflow.launch import prewarm
    from rubricflow.tasks.runtime.flow_commands import FLOW_COMMANDS

    names = {name for name, _, _ in COMMANDS}
    assert FLOW_COMMANDS <= names, FLOW_COMMANDS - names
    modules = set(prewarm())
    assert {"rubricflow.cli.score", "rubricflow.cli.ingest", "rubricflow.cli.demo"} <= modules
    assert all(f"rubricflow.cli.{module}" in modules for name, module, _ in COMMANDS if name in FLOW_COMMANDS)
