"""Many machines, with real parts: a Dask scheduler and workers as separate processes (each worker
in its own mount namespace with a tmpfs over the test's folder, where the test runs as root: they
share no filesystem with the flow), and a PostgreSQL started here holding each provider key's
rate limit."""

import subprocess
import threading

import pytest

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.tasks.judging.remote import HELD_ROUNDS
from rubricflow.tasks.standins.cluster import DaskCluster, Postgres, can_isolate, wait_until
from tests.conftest import EXE, rows, write_corpus
from tests.flows.test_dask import contents

CELLS = 600  # 200 texts x 3 criteria, judged per criterion

pytestmark = pytest.mark.skipif(
    not can_isolate(), reason="private mount namespaces need root and unshare (workers must share no filesystem)"
)


@pytest.fixture(scope="module")
def postgres():
    with Postgres() as pg:
        yield pg


def test_a_run_on_a_cluster_loses_and_repeats_nothing_when_a_worker_is_killed(
    tmp_path, judge_server, postgres, monkeypatch
):
    """600 cells over three workers that see none of the flow's files; one is killed -9 mid-run.
    Every cell lands once, the judgments equal a one-process run's, and the cells bought twice are
    at most the killed worker's unpublished answers and calls in flight. The judge wants a key
    only the workers' environment holds: none travels with the work."""
    monkeypatch.setenv("JUDGE_KEY", "sk-workers-own")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-workers-own")  # for the one-process run
    server = judge_server("--latency-ms", "20", "--require-key-env", "JUDGE_KEY")
    corpus = write_corpus(tmp_path / "c.jsonl", CELLS // 3)
    single, spread = str(tmp_path / "single.duckdb"), str(tmp_path / "cluster.duckdb")
    judge = {"base_url": server.base_url, "strategy": "per_criterion", "max_in_flight": 16}
    for warehouse in (single, spread):
        ingest_flow(str(corpus), warehouse, "c")
    score_corpus("c", "writing-quality", single, judge, options={"shard_size": 100})
    before = server.stats()["requests"]
    monkeypatch.delenv("OPENAI_API_KEY")  # the flow's process has no key now
    # no nannies: the kill ends the worker's whole process tree either way (a machine lost), and a
    # nanny-less worker is one process to start, not two (~1.3 s of CPU and seconds of wall each)
    workers_env = {"OPENAI_API_KEY": "sk-workers-own"}
    with DaskCluster(3, tmp_path / "dask", private=True, env=workers_env, nanny=False) as cluster:
        for variable, path in cluster.tls_env.items():
            monkeypatch.setenv(variable, path)
        killed_at: list[int] = []
        # the run cannot end while worker 0 is being killed (pgrep, SIGKILL: ~100 calls' time on a loaded
        # machine, and the watching thread shares this process with the flow): from its call 60 the judge
        # itself answers in 1 s, so three workers' 48 calls in flight cannot finish the ~540 cells left
        # meanwhile (>= 11 s); then 20 ms again
        server.set_latency(1000, from_request=before + CELLS // 10)
        killer = threading.Thread(target=_kill_when_busy, args=(cluster, server, before, killed_at))
        killer.start()
        run = score_corpus(
            "c",
            "writing-quality",
            spread,
            {**judge, "limits_url": postgres.url, "cluster": cluster.address},
            {"shard_size": 100},
        )
        killer.join()
    stats = server.stats()
    bought = stats["requests"] - before
    assert run["judged_cells"] == CELLS and run["ok_cells"] == CELLS
    assert rows(spread, "SELECT count(*), count(DISTINCT cell_key) FROM completions") == [(CELLS, CELLS)]
    a, b = contents(single), contents(spread)
    assert a[0] == b[0] and a[1] == b[1]
    print(f"\n{CELLS} cells on 3 workers, one killed -9 after {killed_at}: {bought - CELLS} calls bought twice")
    assert killed_at and killed_at[0] < CELLS  # killed mid-run
    # at most the killed worker's calls in flight and answers not yet published: it holds at most
    # HELD_ROUNDS x --max-in-flight of them (main: its peak rate over each half-second publish)
    assert 0 <= bought - CELLS <= HELD_ROUNDS * 16, bought
    assert not list((tmp_path / "dask").glob("**/*.parquet"))  # the workers wrote nothing the flow can see


def _kill_when_busy(cluster: DaskCluster, server, before: int, killed_at: list[int]) -> None:
    wait_until(lambda: server.stats()["requests"] - before >= CELLS // 10, timeout_s=120)
    cluster.kill(0)
    killed_at.append(server.stats()["requests"] - before)
    server.set_latency(20)


def test_two_runs_on_one_key_share_its_limit(tmp_path, judge_server, postgres):
    """Two `rubricflow score` processes on one key with --rpm 2400 and the limit in PostgreSQL: the
    judge counts no second over the limit (plus its half-second burst), no 429, and >= 97% of the
    limit used while both run."""
    rpm = 2400
    server = judge_server("--rpm", str(rpm))
    for name in ("a", "b"):  # both ingested before either scores: no second where one runs alone or none runs
        corpus = write_corpus(tmp_path / f"{name}.jsonl", 100)
        warehouse = tmp_path / f"{name}.duckdb"  # one folder: each warehouse has runs/<its name>/
        subprocess.run([EXE, "ingest", str(corpus), "-c", name, "-w", str(warehouse)], check=True, capture_output=True)
    procs = []
    for name in ("a", "b"):
        warehouse = tmp_path / f"{name}.duckdb"
        command = [
            EXE,
            "score",
            "-c",
            name,
            "-r",
            "writing-quality",
            "--strategy",
            "per_criterion",
            "-w",
            str(warehouse),
        ]
        command += ["--base-url", server.base_url, "--rpm", str(rpm), "--limits", postgres.url]
        procs.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    for proc in procs:
        assert proc.wait(timeout=300) == 0, proc.stdout.read()
    stats = server.stats()
    per_second = sorted((int(k), v) for k, v in stats["per_second"].items())
    assert stats["rate_limited"] == 0 and stats["requests"] == 600
    assert max(v for _, v in per_second) <= rpm / 60 * 1.5, per_second
    inner = per_second[1:-1]  # whole seconds: the first and last are partial
    used = sum(v for _, v in inner) / (len(inner) * rpm / 60)
    assert used >= 0.97, (used, per_second)
    print(f"\ntwo runs on one key at {rpm} rpm: {used:.3f} of the limit used, peak {max(v for _, v in per_second)}/s")


def test_a_password_in_the_limits_url_is_refused(tmp_path):
    result = subprocess.run(
        [
            EXE,
            "score",
            "-c",
            "x",
            "-r",
            "writing-quality",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--rpm",
            "60",
            "--limits",
            "postgresql://u:hunter2@127.0.0.1/db",
            "-w",
            str(tmp_path / "w.duckdb"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "PGPASSWORD" in result.stdout + result.stderr
    assert "hunter2" not in result.stdout + result.stderr
