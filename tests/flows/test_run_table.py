"""Each scoring run leaves its criteria table as a Prefect table artifact and a
`rubricflow.run.completed` event with its figures, both read back from the Prefect server the flow
reported to."""

import json
import threading
import time

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

from rubricflow.cli.flow_start import start_flows
from tests.conftest import rows, write_corpus
from tests.prefect_events import wait_for_event


def test_a_run_leaves_its_criteria_as_a_table_artifact_and_its_progress_while_it_runs(
    tmp_path, thread_judge_server, monkeypatch
):
    start_flows()
    from rubricflow.flows.ingest import ingest_flow
    from rubricflow.flows.score import score_corpus

    monkeypatch.setenv("RUBRICFLOW_PROGRESS_EVERY_S", "0.1")
    server = thread_judge_server(slots=1, latency_ms=80)  # one answer at a time: about 1 s of judging
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 12)), str(warehouse), "table-test")
    seen: list[float] = []
    stop, watching = threading.Event(), threading.Event()
    key = "score-progress-table-test-llm-slop"
    watcher = threading.Thread(target=_watch_progress, args=(key, seen, stop, watching))
    watcher.start()
    assert watching.wait(60)  # its client is connected before the run starts
    try:
        summary = score_corpus("table-test", "llm-slop", str(warehouse), {"base_url": server.base_url})
    finally:
        stop.set()
        watcher.join()
    assert seen[-1] == 100.0 and seen == sorted(seen)
    assert any(0 < p < 100 for p in seen), seen  # updated while the run judged, not only at its end
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
    ingested = wait_for_event("rubricflow.corpus.ingested", "rubricflow.corpus.table-test")  # deploy's trigger event
    assert ingested.payload["rows_ok"] == 12 and ingested.payload["warehouse_path"] == str(warehouse.resolve())
    event = wait_for_event("rubricflow.run.completed", f"rubricflow.run.{summary['run_id']}")
    assert event.payload["coverage"] == 1.0 and event.payload["ok_cells"] == 12
    assert event.payload["rubric"] == "llm-slop@1.0.0" and event.related[0].id == "rubricflow.corpus.table-test"


def _watch_progress(key: str, seen: list[float], stop: threading.Event, watching: threading.Event) -> None:
    """Every value the run's progress artifact takes on the Prefect server, read while the run judges."""
    with get_client(sync_client=True) as client:
        while True:
            done = stop.is_set()
            found = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key])), limit=1)
            watching.set()
            if found and found[0].type == "progress" and (not seen or seen[-1] != float(found[0].data)):
                seen.append(float(found[0].data))
            if done:
                return
            time.sleep(0.05)
