"""Ctrl-C during a run's finish step (after the judging, while its end is recorded): the run is
recorded `interrupted`, as an interrupt during the judging records it; left `running`, a later run
recorded that its process had ended, which it had not."""

import pytest

import rubricflow.flows.score as scoring
from rubricflow.flows.ingest import ingest_flow
from tests.conftest import rows, write_corpus


def test_an_interrupt_during_the_finish_step_records_the_run_interrupted(tmp_path, judge_server, monkeypatch):
    server = judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 3)), warehouse, "c")

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt  # what Ctrl-C raises in the main thread as the finish step starts

    monkeypatch.setattr(scoring, "_close_run", ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        scoring.score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url})
    assert rows(warehouse, "SELECT status, message FROM runs") == [("interrupted", scoring.INTERRUPTED)]


def test_the_console_shows_no_traceback_for_an_interrupt():
    import logging

    from rubricflow.cli.flow_start import _RestatesOurError

    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        import sys

        record = logging.LogRecord("prefect.flow_runs", logging.ERROR, "", 0, "Crashed", None, sys.exc_info())
    assert not _RestatesOurError().filter(record)
