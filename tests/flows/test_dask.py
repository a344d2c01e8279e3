"""Shards on a local Dask cluster of 2 worker processes: the same warehouse contents as a
single-process run, and rate limits that hold across the processes."""

import duckdb

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import scoring_flow
from tests.conftest import write_corpus

CONTENT = """SELECT c.cell_key, c.text_id, c.unit_id, c.sample, c.status, c.raw_response, j.criterion_id, j.value,
                    j.unit_score, j.rationale, j.evidence, j.status
             FROM completions c JOIN judgments j USING (cell_key) ORDER BY c.cell_key, j.criterion_id"""
VIEWS = "SELECT text_id, score, label, passed, coverage FROM text_scores ORDER BY text_id"


def contents(warehouse):
    con = duckdb.connect(warehouse, read_only=True)
    try:
        return (
            con.execute(CONTENT).fetchall(),
            con.execute(VIEWS).fetchall(),
            con.execute("SELECT count(DISTINCT run_id) FROM completions").fetchall(),
        )
    finally:
        con.close()


def test_dask_run_equals_single_process_run_and_limits_hold(tmp_path, thread_judge_server):
    server = thread_judge_server(rpm=900)  # the server answers 429 above 900 requests/min
    corpus = write_corpus(tmp_path / "c.jsonl", 20)
    single, spread = str(tmp_path / "single.duckdb"), str(tmp_path / "dask.duckdb")
    judge = {"base_url": server.base_url, "strategy": "per_criterion", "rpm": 900}
    for warehouse in (single, spread):
        ingest_flow(str(corpus), warehouse, "c")
    scoring_flow(0)("c", "writing-quality", single, judge, options={"shard_size": 10})
    limited_before = server.stats()["rate_limited"]
    run = scoring_flow(2)("c", "writing-quality", spread, judge, options={"shard_size": 10}, workers=2)
    assert run["judged_cells"] == 60 and run["ok_cells"] == 60
    # 2 processes, one shared 900 rpm quota (60 cells: ~4 s of calls, six shards of 10 over both workers).
    # A stray 429 where two leases meet (the server's bucket holds one second)
    # is retried like any other; a quota that did not hold across the processes (900 rpm each) draws dozens.
    assert limited_before == 0 and server.stats()["rate_limited"] <= 2
    a, b = contents(single), contents(spread)
    assert len(a[0]) == 60 and a[0] == b[0] and a[1] == b[1]
