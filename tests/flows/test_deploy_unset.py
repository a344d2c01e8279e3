"""deploy/prefect.yaml deployed by the real `prefect deploy` CLI with RUBRICFLOW_SOURCE unset (it
templates twice: the placeholder becomes ''), then that deployment's flow run executed as a process
worker executes it (`python -m prefect.engine`): it fails in one line naming the variable, having
ingested and judged nothing (an empty source was the current folder: the repository, `.venv` included)."""

import asyncio
import os
import subprocess
import sys
import time

from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import WorkPoolCreate
from prefect.deployments import run_deployment

from rubricflow.api_warehouse import start_flows
from rubricflow.tasks.judging.config import OFFLINE_MODEL
from tests.conftest import ROOT


def test_a_deployment_whose_source_was_unset_fails_in_one_line_having_done_nothing(tmp_path):
    start_flows()  # this session's shared Prefect server: PREFECT_API_URL and its secret in os.environ
    warehouse = tmp_path / "w.duckdb"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUBRICFLOW_") or k == "RUBRICFLOW_STATE_DIR"}
    env |= {
        "RUBRICFLOW_HOME": str(ROOT),
        "RUBRICFLOW_WAREHOUSE": str(warehouse),
        "RUBRICFLOW_RUBRIC": "llm-slop",
        "RUBRICFLOW_MODEL": OFFLINE_MODEL,
    }  # fmt: skip  (RUBRICFLOW_SOURCE unset)
    asyncio.run(_work_pool())
    deploy = [sys.executable, "-m", "prefect", "--no-prompt", "deploy", "--name", "nightly"]
    done = subprocess.run([*deploy, "--prefect-file", "deploy/prefect.yaml"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    run = run_deployment("nightly-scoring/nightly", timeout=0)
    assert run.parameters["source"] == ""  # what the real CLI deployed
    started = time.monotonic()
    engine = subprocess.run([sys.executable, "-m", "prefect.engine"], cwd=tmp_path, capture_output=True, text=True,
                            env=env | {"PREFECT__FLOW_RUN_ID": str(run.id)}, timeout=120)  # fmt: skip
    print(f"deployment run took {time.monotonic() - started:.1f} s")
    state = asyncio.run(_final_state(run.id))
    assert state.is_failed()
    assert "parameter source is empty" in state.message and "export RUBRICFLOW_SOURCE" in state.message
    assert "\n" not in state.message and "export RUBRICFLOW_SOURCE" in engine.stderr
    assert not warehouse.exists() and not (tmp_path / "corpora").exists()  # nothing ingested or judged


async def _work_pool() -> None:
    async with get_client() as client:
        if "rubricflow" not in {p.name for p in await client.read_work_pools()}:
            await client.create_work_pool(WorkPoolCreate(name="rubricflow", type="process"))


async def _final_state(flow_run_id):
    async with get_client() as client:
        return (await client.read_flow_run(flow_run_id)).state
