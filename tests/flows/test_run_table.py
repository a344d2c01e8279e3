"""Each scoring run leaves its criteria table as a Prefect table artifact and a
`rubricflow.run.completed` event with its figures, both read back from the Prefect server the flow
reported to."""

import json
import time

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

from rubricflow.cli.common import start_flows
from tests.conftest import rows, write_corpus


def test_a_run_leaves_its_criteria_as_a_table_artifact(tmp_path, judge_server):
    start_flows()
    from rubricflow.flows.ingest import ingest_flow
    from rubricflow.flows.score import score_corpus

    server = judge_server()
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 9)), str(warehouse), "table-test")
    summary = score_corpus("table-test", "llm-slop", str(warehouse), {"base_url": server.base_url})
    with get_client(sync_client=True) as client:
        [artifact] = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["score-table-table-test-llm-slop"])), limit=1
        )
    assert artifact.type == "table"
    table = json.loads(artifact.data) if isinstance(artifact.data, str) else artifact.data
    assert {r["criterion_id"] for r in table} == {"puffery", "scaffolding", "meta-talk"}
    assert all(r["run_id"] == summary["run_id"] and r["coverage"] == 1.0 for r in table)
    means = dict(rows(warehouse, "SELECT criterion_id, avg(unit_score) FROM judgments GROUP BY ALL"))
    for r in table:
        assert abs(r["mean_unit_score"] - means[r["criterion_id"]]) < 1e-9
    event = _completed_event(summary["run_id"])
    assert event.payload["coverage"] == 1.0 and event.payload["ok_cells"] == 9
    assert event.payload["rubric"] == "llm-slop@1.0.0" and event.related[0].id == "rubricflow.corpus.table-test"


def _completed_event(run_id: str):
    """The run's `rubricflow.run.completed` event as the Prefect server stored it (events are sent
    in the background: wait for it)."""
    from prefect.events.filters import EventFilter, EventNameFilter, EventResourceFilter

    wanted = EventFilter(
        event=EventNameFilter(name=["rubricflow.run.completed"]),
        resource=EventResourceFilter(id=[f"rubricflow.run.{run_id}"]),
    )
    deadline = time.monotonic() + 60
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            found = client.read_events(filter=wanted, limit=5).events
            if found:
                return found[0]
            time.sleep(1)
    raise AssertionError(f"no rubricflow.run.completed event for {run_id} reached the Prefect server")
