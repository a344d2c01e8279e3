"""The whole flow against the offline judge server (on a thread of the test's process): real HTTP, real
DuckDB, Prefect ephemeral mode."""

import pytest

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.tasks.standins.judge_server import TRANSIENT_FAULTS, RunningServer, ServerConfig
from tests.conftest import ThreadServer, rows


def judgments(warehouse, run_filter=""):
    return rows(
        warehouse,
        f"SELECT text_id, criterion_id, sample, value, unit_score, status FROM judgments {run_filter} "
        "ORDER BY text_id, criterion_id, sample",
    )


def test_score_lands_everything_and_a_rerun_makes_no_calls(tmp_path, corpus, thread_judge_server):
    server = thread_judge_server()
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(corpus(30)), str(warehouse), "c")
    first = score_corpus("c", "llm-slop", str(warehouse), {"base_url": server.base_url}, options={"shard_size": 7})
    assert (first["planned_cells"], first["judged_cells"], first["ok_cells"], first["calls"]) == (30, 30, 30, 30)
    assert rows(warehouse, "SELECT count(*), count(DISTINCT cell_key) FROM completions") == [(30, 30)]
    assert rows(warehouse, "SELECT count(*) FROM judgments WHERE status = 'scored'") == [(90,)]
    assert rows(warehouse, "SELECT count(*), min(coverage) FROM text_scores") == [(30, 1.0)]
    assert rows(warehouse, "SELECT count(*) FROM completions WHERE raw_response IS NULL") == [(0,)]
    calls_before = server.stats()["requests"]
    again = score_corpus("c", "llm-slop", str(warehouse), {"base_url": server.base_url}, options={"shard_size": 7})
    assert (again["skipped_cells"], again["judged_cells"], again["calls"]) == (30, 0, 0)
    assert server.stats()["requests"] == calls_before
    # a changed judge setup is new work; samples multiply cells
    sampled = score_corpus(
        "c", "llm-slop", str(warehouse), {"base_url": server.base_url, "samples": 2, "temperature": 0.5}
    )
    assert sampled["judged_cells"] == 60


@pytest.fixture(scope="module")
def clean_judgments(tmp_path_factory):
    """Judgments of a clean run, the reference every fault run must reproduce."""
    from tests.conftest import write_corpus

    tmp = tmp_path_factory.mktemp("clean")
    server = ThreadServer()
    try:
        warehouse = tmp / "w.duckdb"
        ingest_flow(str(write_corpus(tmp / "c.jsonl", 12)), str(warehouse), "c")
        score_corpus("c", "writing-quality", str(warehouse), {"base_url": server.base_url})
        return judgments(warehouse)
    finally:
        server.stop()


@pytest.mark.parametrize("fault", TRANSIENT_FAULTS)
def test_each_transient_fault_ends_with_the_same_judgments(fault, tmp_path, thread_judge_server, clean_judgments):
    server = thread_judge_server(fault_rate=1, faults=(fault,), stall_s=2)
    warehouse = tmp_path / "w.duckdb"
    from tests.conftest import write_corpus

    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 12)), str(warehouse), "c")
    summary = score_corpus("c", "writing-quality", str(warehouse), {"base_url": server.base_url, "timeout_s": 1.0})
    assert server.stats()["faults"].get(fault) == 12
    assert summary["ok_cells"] == 12 and summary["failed_cells"] == 0
    assert judgments(warehouse) == clean_judgments
    retried = rows(warehouse, "SELECT count(*) FROM completions WHERE attempts > 1")[0][0]
    assert retried == (0 if fault == "drip" else 12)


def test_refusal_is_unscored_with_a_reason_not_retried(tmp_path, corpus, thread_judge_server):
    server = thread_judge_server(fault_rate=1, faults=("refusal",), fault_attempts=99)
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(corpus(5)), str(warehouse), "c")
    summary = score_corpus("c", "llm-slop", str(warehouse), {"base_url": server.base_url})
    assert summary["failed_cells"] == 5 and summary["calls"] == 5
    assert rows(warehouse, "SELECT DISTINCT status, error_kind FROM completions") == [("failed", "refusal")]
    reasons = rows(warehouse, "SELECT DISTINCT status, reason FROM judgments")
    assert len(reasons) == 1 and reasons[0][0] == "unscored" and reasons[0][1].startswith("refusal: the judge refused")
    assert rows(warehouse, "SELECT count(*), max(score), max(coverage) FROM text_scores") == [(5, None, 0.0)]
    # deterministic failures are final: a re-run does not ask again
    assert score_corpus("c", "llm-slop", str(warehouse), {"base_url": server.base_url})["calls"] == 0


def test_exhausted_retries_are_unscored_and_planned_again(tmp_path, corpus, thread_judge_server):
    server = thread_judge_server(fault_rate=1, faults=("503",), fault_attempts=99)
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(corpus(4)), str(warehouse), "c")
    from rubricflow.flows.score import EndpointRefused

    with pytest.raises(EndpointRefused, match="4 cells; InternalServerError 503"):  # no usable answer: a failed run
        score_corpus("c", "llm-slop", str(warehouse), {"base_url": server.base_url, "max_attempts": 2})
    assert rows(warehouse, "SELECT failed_cells, calls FROM run_summary") == [(4, 8)]
    assert rows(warehouse, "SELECT DISTINCT error_kind FROM completions") == [("transient",)]
    healthy = thread_judge_server()
    second = score_corpus("c", "llm-slop", str(warehouse), {"base_url": healthy.base_url})
    assert second["judged_cells"] == 4 and second["ok_cells"] == 4
    assert rows(warehouse, "SELECT count(*), count(DISTINCT cell_key), min(status) FROM completions") == [(4, 4, "ok")]


def test_structured_output_falls_back_to_tools_then_text(tmp_path, corpus, thread_judge_server):
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(corpus(6)), str(warehouse), "c")
    for supports, rubric in (("tools", "llm-slop"), ("text", "writing-quality")):
        server = thread_judge_server(supports=supports)
        summary = score_corpus("c", rubric, str(warehouse), {"base_url": server.base_url}, options={"shard_size": 2})
        assert summary["ok_cells"] == 6
        # the fallback is learned once per run, not again in every shard: at most the calls in flight
        # when it is learned are refused per step down (json_schema, json_object[, tools]): the first
        # shard's two and the next shard's two, begun while the first lands
        refused = server.stats()["requests"] - 6
        assert 1 <= refused <= 4 * (2 if supports == "tools" else 3)
    modes = rows(
        warehouse,
        "SELECT r.rubric_id, c.output_mode, count(*) FROM completions c JOIN rubrics r USING (rubric_hash) "
        "GROUP BY ALL ORDER BY 1",
    )
    assert modes == [("llm-slop", "tools", 6), ("writing-quality", "text", 6)]


def test_run_summary_matches_the_flow_and_records_the_model(tmp_path, corpus, thread_judge_server):
    server = thread_judge_server(fault_rate=0.5, faults=("500",))
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(corpus(20)), str(warehouse), "c")
    s = score_corpus("c", "llm-slop", str(warehouse), {"base_url": server.base_url, "seed": 7, "max_tokens": 300})
    summary = rows(
        warehouse,
        "SELECT planned_cells, landed_cells, ok_cells, calls, retries, prompt_tokens, coverage "
        "FROM run_summary WHERE run_id = ?",
        [s["run_id"]],
    )
    assert summary == [(20, 20, 20, s["calls"], s["calls"] - 20, s["prompt_tokens"], 1.0)]
    assert s["calls"] > 20
    assert rows(warehouse, "SELECT DISTINCT model, system_fingerprint FROM completions") == [
        ("rubricflow-offline-judge", "fp_rubricflow_offline")
    ]
    params = rows(warehouse, "SELECT parameters->>'seed', parameters->>'max_tokens' FROM runs")
    assert params == [("7", "300")]


def test_retry_budget_bounds_retries_across_the_run(tmp_path, corpus, thread_judge_server):
    server = thread_judge_server(fault_rate=1, faults=("503",))
    warehouse = tmp_path / "w.duckdb"
    ingest_flow(str(corpus(10)), str(warehouse), "c")
    s = score_corpus("c", "llm-slop", str(warehouse), {"base_url": server.base_url, "retry_budget": 4})
    assert s["calls"] == 14 and s["ok_cells"] == 4 and s["failed_cells"] == 6
    assert rows(warehouse, "SELECT count(*) FROM completions WHERE error_kind = 'transient'") == [(6,)]


def test_skip_disqualified_leaves_out_texts_a_pattern_already_fails(tmp_path, corpus, thread_judge_server):
    server = thread_judge_server()
    warehouse = tmp_path / "w.duckdb"
    path = corpus(9)
    with path.open("a") as fh:
        fh.write('{"id": "ai", "text": "As an AI language model I cannot browse the web."}\n')
    ingest_flow(str(path), str(warehouse), "c")
    s = score_corpus(
        "c", "llm-slop", str(warehouse), {"base_url": server.base_url}, options={"skip_disqualified": True}
    )
    assert s["judged_cells"] == 9 and s["planned_cells"] == 10
    assert rows(warehouse, "SELECT count(*) FROM completions WHERE text_id = 'ai'") == [(0,)]
    assert rows(warehouse, "SELECT disqualifier_id, kind FROM disqualifier_hits WHERE text_id = 'ai'") == [
        ("ai-self-disclosure", "pattern")
    ]
    assert rows(warehouse, "SELECT score, label, passed, coverage FROM text_scores WHERE text_id = 'ai'") == [
        (0.0, "disqualified", False, 0.0)
    ]


def test_logprob_weighted_scores_land_beside_the_sampled_ones_and_calibrate_reads_either(
    tmp_path, corpus, thread_judge_server
):
    """G-Eval: the offline judge returns top_logprobs that hesitate between neighbouring levels."""
    import duckdb

    from rubricflow.tasks.loaders.labels import import_labels
    from rubricflow.tasks.stats.calibration import calibration

    server = thread_judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(corpus(12)), warehouse, "c")
    score_corpus("c", "writing-quality", warehouse, {"base_url": server.base_url, "logprobs": True})
    recomputed = rows(
        warehouse,
        """
        SELECT any_value(j.weighted_unit_score), sum(e.value::DOUBLE * (e.key::DOUBLE - c.scale_min) / (c.scale_max - c.scale_min)),
               sum(e.value::DOUBLE), any_value(j.prob_mass), any_value(j.unit_score)
        FROM judgments j JOIN criteria c USING (rubric_hash, criterion_id), json_each(j.value_probs) e
        WHERE j.status = 'scored' GROUP BY j.cell_key, j.criterion_id""",
    )
    assert len(recomputed) == 36  # every scored judgment has a distribution
    for weighted, mean, total, mass, sampled in recomputed:
        assert weighted == pytest.approx(mean) and total == pytest.approx(1.0) and 0 < mass <= 1
        assert abs(weighted - sampled) < 1 / 3  # within a level of the sampled value
    assert sum(w != pytest.approx(s) for w, *_, s in recomputed) > 30  # and finer-grained than it
    assert rows(warehouse, "SELECT count(weighted_unit_score) FROM criterion_scores") == [(36,)]

    labels = tmp_path / "labels.csv"
    texts = [t for (t,) in rows(warehouse, "SELECT text_id FROM texts ORDER BY text_id")]
    labels.write_text(
        "text_id,criterion,score,rater\n" + "".join(f"{t},clarity,{1 + i % 4},ann\n" for i, t in enumerate(texts))
    )
    import_labels(labels, "c", warehouse)
    with duckdb.connect(warehouse, read_only=True) as con:
        sampled = calibration(con, "c", "", ["ann"], "writing-quality")
        weighted = calibration(con, "c", "", ["ann"], "writing-quality", score="weighted")
    assert weighted.judge == "judge:writing-quality:weighted" and weighted.rows[0].n == sampled.rows[0].n == 12
    assert weighted.rows[0].pearson != pytest.approx(sampled.rows[0].pearson)

    with RunningServer(ServerConfig(logprobs=False)) as refusing:  # an endpoint without logprobs: asked once, then not
        score_corpus("c", "llm-slop", warehouse, {"base_url": refusing.base_url, "logprobs": True})
        assert 12 < refusing.app.stats.requests <= 12 + 8  # the calls in flight when the first refusal came
    assert rows(
        warehouse,
        "SELECT count(*), count(weighted_unit_score) FROM judgments j JOIN rubrics r USING (rubric_hash) "
        "WHERE r.rubric_id = 'llm-slop' AND j.status = 'scored'",
    ) == [(36, 0)]
    score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url, "strategy": "per_criterion"})
    assert rows(
        warehouse,
        "SELECT count(*), count(weighted_unit_score) FROM judgments j JOIN runs r USING (run_id) "
        "WHERE r.strategy = 'per_criterion'",
    ) == [(36, 0)]  # off by default for a server on this machine
