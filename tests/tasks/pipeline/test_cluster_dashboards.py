"""#50 item 10: each scheduler and worker served a plain-HTTP dashboard on 0.0.0.0 under the TLS setup
(anyone who reached the machine saw the run's tasks). Every cluster rubricflow starts or documents runs
without one: the local cluster of `score --workers`, the stand-in the tests and benches start, and the
commands deploy/ gives."""

import re

from rubricflow.flows.score import scoring_flow
from tests.conftest import ROOT


def test_the_local_cluster_of_score_workers_has_no_dashboard():
    runner = scoring_flow(2).task_runner
    assert runner.cluster_kwargs["dashboard_address"] is None
    assert runner.cluster_kwargs["protocol"] == "tls://"


def test_every_documented_and_stand_in_scheduler_and_worker_runs_without_a_dashboard():
    starts = []
    for name in ("deploy/README.md", "deploy/compose.yaml", "tasks/standins/cluster.py"):
        text = (ROOT / name).read_text()
        starts += [
            (name, line) for line in text.splitlines() if re.search(r"dask (scheduler|worker) |cli\.dask_", line)
        ]
    assert len(starts) >= 6, starts
    standin = (ROOT / "tasks/standins/cluster.py").read_text()
    assert standin.count('"--no-dashboard"') == 2  # the stand-in's scheduler and each of its workers
    assert all("--no-dashboard" in line for name, line in starts if not name.endswith(".py")), starts
