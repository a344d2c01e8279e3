import json
import os
import shutil
import subprocess
import tempfile
import urllib.request
from pathlib import Path

import pytest

# One BLAS thread per process, set before numpy loads OpenBLAS: two xdist workers and the processes they
# start share two cores, and OpenBLAS's own threads spin against them (a three-system Bradley-Terry fit
# took 0.40 s with its threads and 0.05 s without, at load 15). Processes the tests start inherit it.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

# Prefect runs in ephemeral mode against a throwaway home; set before anything imports prefect.
# Each pytest-xdist worker gets its own (the controller's would be shared, and the first worker to
# finish would stop the Prefect server the other still uses).
if os.environ.get("PYTEST_XDIST_WORKER"):
    for name, prefix in (("PREFECT_HOME", "rubricflow-prefect-"), ("RUBRICFLOW_STATE_DIR", "rubricflow-state-")):
        os.environ[name] = tempfile.mkdtemp(prefix=f"{prefix}{os.environ['PYTEST_XDIST_WORKER']}-")
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="rubricflow-prefect-"))
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ["DO_NOT_TRACK"] = "1"
# No pydantic plugin is installed here; pydantic would look for one in every installed distribution's entry
# points in each process the tests start (~20-70 ms of CPU each, some thousands of processes).
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
# `rubricflow` processes share one local Prefect server (tasks/runtime/prefect_server.py): the session's own,
# stopped at the end (see stop_the_shared_prefect_server).
os.environ.setdefault("RUBRICFLOW_STATE_DIR", tempfile.mkdtemp(prefix="rubricflow-state-"))

# Prefect's root settings are read from the environment once, when prefect is first imported: import
# it now, from this clean environment, not inside whichever test first runs a flow (a test that points
# PREFECT_API_URL at a server it then stops would otherwise leave every later in-process flow of this
# process talking to that dead server; the order of files differs between pytest-xdist's processes).
import prefect.settings  # noqa: E402, F401

# A new Prefect home starts from the user's kept copy of an empty database, as the shared server's does
# (tasks/runtime/prefect_database.py): the flows tests call in this process run on Prefect's own per-process
# server, which would migrate this worker's new home again (~14 s of CPU).
from rubricflow.tasks.runtime import prefect_database, prefect_server  # noqa: E402

prefect_database.seed(Path(os.environ["PREFECT_HOME"]) / "prefect.db", prefect_server.kept_database())

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("RUBRICFLOW_SHARED", ROOT.parent / "shared")) / "data"
SHARED_RUBRICS = SHARED / "rubrics"
TEST_DATA = Path(__file__).parent / "data"


# Tests under these folders run Prefect flows or `rubricflow` processes (each pays Prefect's start):
# they are marked slow, and `pytest -m "not slow"` is the quick subset.
# So are the modules that start servers and workers as processes, and tests marked one by one (real
# back-off waits and timeouts).
SLOW_FOLDERS = ("cli", "flows")
SLOW_MODULES = ("test_prefect_server.py", "test_warm_worker.py", "test_benches.py")


# The modules that take longest in CI (its --durations), longest first. pytest-xdist hands out one file
# at a time (--dist loadfile) in collection order (--no-loadscope-reorder); a long file handed out last
# keeps one worker busy while the other idles, so these go first and the short ones fill the tail.
# Seconds: its tests over 16 s in the last CI's --durations, summed, less this round's cuts (estimated).
LONGEST_FIRST = (
    "test_benches.py",  # 205 in 7 smokes before, and 12 shorter ones: cluster.py's smoke ~15 s less now
    "flows/test_local_model.py",  # 306 before: the logprob and pairwise calls' answers are shorter now
    "flows/test_cluster_faults.py",  # 184
    "test_readme.py",  # every docs shell block in turn on one warehouse (~22 blocks): ~1,500 s at load 15-20
    "tasks/runtime/test_warm_worker.py",  # 240 before: one Prefect server for the module, one stress round
    "flows/test_evolve.py",  # 85
    "flows/test_cluster.py",  # 90 before: the killed-worker test judges 600 cells, not 1,200 (~25 s less)
    "flows/test_sequential.py",  # 61
    "tasks/runtime/test_prefect_server.py",  # 56
    "flows/test_rubric_status.py",  # 75 before: three processes less
    "cli/test_full_disk.py",  # 44
    "cli/test_estimate.py",  # 44
    "flows/test_faults.py",  # 39
    "flows/test_production_layout.py",  # 39
    "cli/test_label_studio.py",  # 44 before: its six commands no longer import the openai SDK (~1 s each)
    "flows/test_dask.py",  # 48 before: 60 cells at the 900 rpm quota, not 120 (~8 s less)
    "flows/test_labelling.py",  # 53 before: 37 key presses where it took 55
    "flows/test_evolve_coevolve.py",  # 22
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        parts = Path(str(item.fspath)).relative_to(Path(__file__).parent).parts
        if parts[0] in SLOW_FOLDERS or parts[-1] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
    items.sort(key=_longest_first)


def _longest_first(item) -> int:
    module = Path(str(item.fspath)).relative_to(Path(__file__).parent).as_posix()
    return LONGEST_FIRST.index(module) if module in LONGEST_FIRST else len(LONGEST_FIRST)


def _environment_restored():
    """A test or module that runs a flow in this process (the Python API, start_flows) points it at the
    shared Prefect server through its environment (PREFECT_API_URL and its secret), as a notebook's
    process should be; the `rubricflow` processes later tests start must not inherit it (their Prefect
    state would land in this session's server, not under the PREFECT_HOME they were given)."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


# Both scopes: a module-scoped fixture (tests/cli/test_best_of.py's `judged` calls the Python API) runs
# before any test's own fixture is set up, so only a module-scoped restore takes its changes back.
each_modules_environment_stays_in_that_module = pytest.fixture(
    scope="module", autouse=True, name="each_modules_environment_stays_in_that_module"
)(_environment_restored)
each_tests_environment_stays_in_that_test = pytest.fixture(
    autouse=True, name="each_tests_environment_stays_in_that_test"
)(_environment_restored)


@pytest.fixture(scope="session", autouse=True)
def stop_the_shared_prefect_server():
    yield
    from rubricflow.tasks.runtime import prefect_server, warm_worker

    warm_worker.stop_all()
    prefect_server.stop_all()


def shared_rubric_files() -> list[Path]:
    """Every rubric-ish file the shared folder holds (licenses aside)."""
    if not SHARED_RUBRICS.is_dir():
        raise RuntimeError(f"shared data not found at {SHARED_RUBRICS}; set RUBRICFLOW_SHARED")
    return sorted(p for p in SHARED_RUBRICS.rglob("*") if p.is_file() and not p.name.upper().startswith("LICENSE"))


def user_rubric_files() -> list[Path]:
    """Every rubric file a user might bring that the tests hold: the shared third-party files and
    the files written here in other tools' formats (tests/data/rubrics)."""
    from rubricflow.rubrics.formats import FOLDER_DOCUMENTS

    ours = sorted(
        p for p in (TEST_DATA / "rubrics").rglob("*") if p.is_file() and not p.name.upper().startswith(FOLDER_DOCUMENTS)
    )
    return shared_rubric_files() + ours


EXE = shutil.which("rubricflow")


def run_cli(cwd: Path, *args: str, timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
    """`rubricflow ARGS -w w.duckdb` run for real in `cwd`, output captured, tables 250 columns wide
    (so a row's cells are not cut), `env` added to this process's environment."""
    return subprocess.run(
        [EXE, *args, "-w", "w.duckdb"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "250", **env},
    )


def rows(warehouse, sql: str, params=()) -> list[tuple]:
    """The rows of a query on a warehouse file, opened read-only for just this query."""
    import duckdb

    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def land_one_shard(tmp_path, server, warehouse, run_id: str, rubric: str = "llm-slop"):
    """What a run that crashed before loading leaves behind: a plan and one landed shard in its folder."""
    from rubricflow.rubrics.library import Library
    from rubricflow.tasks.judging.config import JudgeConfig
    from rubricflow.tasks.judging.run import Run
    from rubricflow.tasks.judging.run_options import RunOptions
    from rubricflow.tasks.judging.shard import run_shard
    from rubricflow.warehouse import db, steps

    bundle = Library().bundle(rubric)
    config = JudgeConfig(base_url=server.base_url)
    with db.writer(warehouse) as con:
        db.register_rubric(con, bundle)
        options = RunOptions(shard_size=100).model_dump()
        plan = steps.plan_cells(con, "c", bundle, config.judge_hash(), "holistic", 1, tmp_path / "plan", options)
    return run_shard(plan.files[0], Run(run_id, "c", str(warehouse), rubric, bundle, config))


def kill_once_answered(proc: subprocess.Popen, server, answered: int, timeout_s: float = 120) -> None:
    """SIGKILL a command's whole process group (started with start_new_session: the flow and all it
    started) once the judge server has answered `answered` calls: a run killed mid-way, at a moment
    it did not choose."""
    import signal
    import time

    deadline = time.monotonic() + timeout_s
    while server.stats()["answered"] < answered and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, ("the run ended before it could be killed", proc.communicate())
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


class ServerProcess:
    """`rubricflow judge-server` in its own process, on a free port of 127.0.0.1."""

    def __init__(self, *options: str):
        assert EXE, "the rubricflow console script is not installed"
        self.proc = subprocess.Popen(
            [EXE, "judge-server", "--port", "0", *options], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        line = self.proc.stdout.readline()
        assert "listening on" in line, line + self.proc.stdout.read() if self.proc.poll() is not None else line
        self.base_url = line.strip().rsplit(" ", 1)[-1]

    def stats(self) -> dict:
        with urllib.request.urlopen(self.base_url.removesuffix("/v1") + "/stats") as response:
            return json.load(response)

    def set_latency(self, ms: float, from_request: int = 0) -> None:
        """The server's latency from its next request on, or from its judge call number `from_request`
        (POST /latency)."""
        switch = {"ms": ms, "from_request": from_request}
        request = urllib.request.Request(
            self.base_url.removesuffix("/v1") + "/latency", data=json.dumps(switch).encode(), method="POST"
        )
        with urllib.request.urlopen(request) as response:
            answer = json.load(response)
        assert answer == {"latency_ms": ms} or answer["then"] == switch, answer

    def stop(self) -> None:
        from rubricflow.tasks.runtime.processes import stop

        stop(self.proc)


class ThreadServer(ServerProcess):
    """The offline judge server on a thread of this process, over real HTTP on 127.0.0.1, with
    ServerProcess's face (base_url, stats(), set_latency(), stop()): for tests about a flow, not about
    the server's process (a `rubricflow judge-server` process costs ~1 s of CPU in imports, ~3 s
    without bytecode caches). Configured by ServerConfig's fields."""

    def __init__(self, **config):
        from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig

        self.running = RunningServer(ServerConfig(**config)).__enter__()
        self.base_url = self.running.base_url

    def stop(self) -> None:
        self.running.__exit__(None, None, None)


@pytest.fixture
def thread_judge_server():
    """Start ThreadServers (ServerConfig's fields); each stops when the test ends."""
    started: list[ThreadServer] = []

    def start(**config) -> ThreadServer:
        server = ThreadServer(**config)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def judge_server():
    started: list[ServerProcess] = []

    def start(*options: str) -> ServerProcess:
        server = ServerProcess(*options)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def write_corpus(path: Path, n: int, slop_every: int = 3) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            if i % slop_every == 0:
                text = f"Certainly! Nestled in the heart of town {i}, this vibrant place plays a vital role. Moreover, I hope this helps."
            else:
                text = f"The council met on day {i} and approved the road budget by seven votes to two."
            fh.write(json.dumps({"id": f"t{i:04d}", "text": text}) + "\n")
    return path


@pytest.fixture
def corpus(tmp_path):
    return lambda n=20, **kw: write_corpus(tmp_path / "corpus.jsonl", n, **kw)
