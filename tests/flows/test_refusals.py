"""An endpoint that refuses the run (a bad key, model or URL) does not poison the corpus: the run
stops sending after a few refusals, is recorded as failed with the endpoint's words, and once
the key is fixed the next run judges every cell (finding 7 of the reliability pass)."""

import pytest

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import EndpointRefused, score_corpus
from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig
from tests.conftest import rows, write_corpus


def test_a_bad_key_fails_the_run_and_a_fixed_key_judges_everything(tmp_path, monkeypatch):
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 20)), warehouse, "c")
    with RunningServer(ServerConfig(api_key="the-right-key-123")) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "a-wrong-key-456")
        with pytest.raises(
            EndpointRefused, match="refused, never answered or gave no usable answer to every call.*401"
        ):
            score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url, "max_in_flight": 1})
        assert server.app.stats.requests <= 3  # the run stopped sending after the first refusals
        [(status, message)] = rows(warehouse, "SELECT status, message FROM runs")
        assert status == "failed" and "401" in message and "a-wrong-key-456" not in message
        assert rows(warehouse, "SELECT count(*), count(*) FILTER (WHERE error_kind = 'setup') FROM completions") == [
            (20, 20)
        ]
        assert rows(warehouse, "SELECT max(coverage) FROM run_summary") == [(0.0,)]
        monkeypatch.setenv("OPENAI_API_KEY", "the-right-key-123")
        fixed = score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url})
    assert (fixed["judged_cells"], fixed["ok_cells"]) == (20, 20)
    assert rows(warehouse, "SELECT min(coverage) FROM text_scores") == [(1.0,)]
    assert rows(warehouse, "SELECT coverage FROM run_summary WHERE run_id = ?", [fixed["run_id"]]) == [(1.0,)]


def test_a_wrong_url_is_a_setup_failure_planned_again(tmp_path):
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 5)), warehouse, "c")
    with RunningServer() as server:
        with pytest.raises(EndpointRefused, match="404"):
            score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url.removesuffix("/v1") + "/wrong/v1"})
        fixed = score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url})
    assert fixed["ok_cells"] == 5


def test_an_endpoint_that_is_not_running_fails_the_run_with_its_reason(tmp_path):
    import socket

    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 30)), warehouse, "c")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    with pytest.raises(EndpointRefused, match="no usable answer to every call.*no connection to the endpoint"):
        score_corpus("c", "llm-slop", warehouse, {"base_url": dead, "max_attempts": 2, "max_in_flight": 1})
    assert rows(warehouse, "SELECT max(attempts), sum(attempts) FROM completions")[0][1] <= 3 * 2  # stopped sending
    with RunningServer() as server:
        assert score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url})["ok_cells"] == 30
