"""The production layout docs/deployment.md describes, started for real: a Prefect server on
PostgreSQL (its own database, not SQLite), deploy/prefect.yaml deployed by `prefect deploy`, a worker
pulling from a process work pool. Ingesting a corpus emits `rubricflow.corpus.ingested`; the
score-on-ingest deployment trigger fires on it and the worker scores that corpus end to end."""

import base64
import json
import os
import secrets
import subprocess
import sys
import urllib.request
from pathlib import Path

import duckdb

from rubricflow.tasks.judging.config import OFFLINE_MODEL
from rubricflow.tasks.runtime.processes import stop
from rubricflow.tasks.standins.cluster import Postgres, free_port, wait_until
from tests.conftest import EXE, ROOT, write_corpus

PREFECT = [sys.executable, "-m", "prefect"]
# only the services this layout exercises: events stored, automations (triggers) evaluated
QUIET_SERVICES = ("SCHEDULER", "LATE_RUNS", "FOREMAN", "PAUSE_EXPIRATIONS", "REPOSSESSOR", "CANCELLATION_CLEANUP",
                  "DB_VACUUM", "CLEANUP_RECONCILER", "TASK_RUN_RECORDER", "EVENT_LOGGER")  # fmt: skip


def _prefect_env(tmp: Path, api_url: str, secret: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    return env | {
        "PREFECT_HOME": str(tmp / "prefect-home"),
        "PREFECT_API_URL": api_url,
        "PREFECT_API_AUTH_STRING": secret,  # the server serves its owner only
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "RUBRICFLOW_WARM_WORKER": "0",
    }


def _server(tmp: Path, pg: Postgres, env: dict, port: int) -> subprocess.Popen:
    server_env = (
        env
        | {
            "PREFECT_SERVER_DATABASE_CONNECTION_URL": pg.url.replace("postgresql://", "postgresql+asyncpg://"),
            "PREFECT_SERVER_API_AUTH_STRING": env["PREFECT_API_AUTH_STRING"],
            "PREFECT_UI_ENABLED": "0",
        }
        | {f"PREFECT_SERVER_SERVICES_{s}_ENABLED": "false" for s in QUIET_SERVICES}
    )
    command = [*PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    return subprocess.Popen(command, env=server_env, stdout=(tmp / "server.log").open("w"), stderr=subprocess.STDOUT)


def _flow_runs(env: dict) -> list[dict]:
    """The score-on-ingest deployment's flow runs, from the server's REST API (its owner's secret)."""
    request = urllib.request.Request(
        env["PREFECT_API_URL"] + "/flow_runs/filter",
        data=json.dumps({"deployments": {"name": {"any_": ["score-on-ingest"]}}}).encode(),
        headers={
            "Content-Type": "application/json",
            "Authorization": "Basic " + base64.b64encode(env["PREFECT_API_AUTH_STRING"].encode()).decode(),
        },
    )
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 (loopback)
        return [{"state": r["state_type"], "parameters": r["parameters"]} for r in json.load(response)]


def test_an_ingest_triggers_scoring_on_a_worker_of_a_prefect_server_on_postgresql(tmp_path, thread_judge_server):
    judge = thread_judge_server()
    port = free_port()
    env = _prefect_env(tmp_path, f"http://127.0.0.1:{port}/api", "rubricflow:" + secrets.token_urlsafe(16))
    deploy_env = env | {
        "RUBRICFLOW_HOME": str(ROOT),
        "RUBRICFLOW_RUBRIC": "llm-slop",
        "RUBRICFLOW_MODEL": OFFLINE_MODEL,
    }
    with Postgres() as pg:
        server = _server(tmp_path, pg, env, port)
        worker = None
        try:
            wait_until(lambda: _healthy(port), timeout_s=240, every_s=0.5)
            for command in (
                [*PREFECT, "work-pool", "create", "rubricflow", "--type", "process"],
                [
                    *PREFECT,
                    "--no-prompt",
                    "deploy",
                    "--name",
                    "score-on-ingest",
                    "--prefect-file",
                    "deploy/prefect.yaml",
                ],
            ):  # the documented commands, verbatim
                done = subprocess.run(command, cwd=ROOT, env=deploy_env, capture_output=True, text=True, timeout=240)
                assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
            worker_env = env | {"OPENAI_BASE_URL": judge.base_url, "PREFECT_WORKER_QUERY_SECONDS": "1"}
            worker = subprocess.Popen(
                [*PREFECT, "worker", "start", "--pool", "rubricflow"],
                cwd=tmp_path,
                env=worker_env,
                stdout=(tmp_path / "worker.log").open("w"),
                stderr=subprocess.STDOUT,
            )
            warehouse = tmp_path / "w.duckdb"
            source = write_corpus(tmp_path / "landed.jsonl", 8)
            done = subprocess.run([EXE, "ingest", str(source), "-c", "landed", "-w", str(warehouse)], env=env,
                                  capture_output=True, text=True, timeout=240)  # fmt: skip
            assert done.returncode == 0, done.stderr[-2000:]
            wait_until(lambda: [r["state"] for r in _flow_runs(env)] == ["COMPLETED"], timeout_s=300, every_s=1)
            [run] = _flow_runs(env)
            assert run["parameters"]["corpus_id"] == "landed"  # rendered from the event
            assert run["parameters"]["warehouse_path"] == str(warehouse.resolve())
            with duckdb.connect(str(warehouse), read_only=True) as con:
                scored = con.execute("SELECT count(DISTINCT text_id) FROM judgments WHERE corpus_id = 'landed'")
                assert scored.fetchone() == (8,)
            assert judge.stats()["requests"] >= 8  # judged by the worker's flow run, over HTTP
        finally:
            stop(worker)
            stop(server)


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2) as response:  # noqa: S310
            return response.status == 200
    except OSError:
        return False
