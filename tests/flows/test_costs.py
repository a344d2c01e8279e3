"""Cost control: the pre-run estimate, the budget stop, and cost per run / rubric / criterion in SQL."""

import os
import subprocess

import pytest

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.tasks.costs import PriceError, price_of, price_table
from tests.conftest import EXE, rows, write_corpus

PRICES = "rubricflow-offline-judge: {input: 1000, output: 2000}\n"  # USD per 1M tokens: a dear offline judge


def test_price_table_overrides_and_dated_models(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(PRICES + "gpt-4.1-mini: {input: 0.5, output: 2}\n")
    table = price_table(path)
    assert price_of("rubricflow-offline-judge", table).input_per_mtok == 1000
    assert price_of("gpt-4.1-mini-2025-04-14", table).output_per_mtok == 2  # a dated snapshot of a priced model
    assert price_of("gpt-4.1-2025-04-14", table).input_per_mtok == 2.0  # the longest matching base, not gpt-4.1-mini
    assert price_of("someone-elses-model", table) is None
    path.write_text("gpt-x: {input: cheap}\n")
    with pytest.raises(PriceError, match=r"p.yaml: model 'gpt-x': needs numeric `input` and `output`"):
        price_table(path)


def test_budget_stops_before_exceeding_and_the_rest_is_judged_later(tmp_path, judge_server):
    server = judge_server()
    (tmp_path / "prices.yaml").write_text(PRICES)
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 20)), warehouse, "c")
    judge = {"base_url": server.base_url, "prices": str(tmp_path / "prices.yaml"), "max_tokens": 256}
    budget = 12.0  # one call reserves ~ (700 prompt + 256 output) tokens: about 1.2 USD at these prices
    run = score_corpus("c", "llm-slop", warehouse, {**judge, "budget_usd": budget})
    assert 0 < run["judged_cells"] < 20 and run["unjudged_cells"] == 20 - run["judged_cells"]
    assert server.stats()["requests"] == run["judged_cells"]  # nothing was sent beyond the budget
    (status, message), = rows(warehouse, "SELECT status, message FROM runs WHERE run_id = ?", [run["run_id"]])
    assert status == "stopped" and "budget $12.0000 reached" in message
    (spent, estimated, cap), = rows(warehouse, "SELECT usd, estimated_usd, budget_usd FROM run_costs WHERE run_id = ?",
                                    [run["run_id"]])
    assert spent <= budget and cap == budget and estimated > budget
    rest = score_corpus("c", "llm-slop", warehouse, judge)  # no budget: the cells left are judged now, once
    assert rest["judged_cells"] == 20 - run["judged_cells"] and rest["skipped_cells"] == run["judged_cells"]
    assert rows(warehouse, "SELECT count(*), count(DISTINCT cell_key) FROM completions") == [(20, 20)]


def test_estimate_is_printed_before_any_call_and_costs_add_up(tmp_path, judge_server):
    server = judge_server()
    (tmp_path / "prices.yaml").write_text(PRICES)
    env = {**os.environ, "COLUMNS": "200", "RUBRICFLOW_PRICES": str(tmp_path / "prices.yaml")}
    write_corpus(tmp_path / "c.jsonl", 12)
    assert subprocess.run([EXE, "ingest", "c.jsonl", "-c", "c", "-w", "w.duckdb"], cwd=tmp_path, env=env,
                          capture_output=True).returncode == 0
    result = subprocess.run([EXE, "score", "-c", "c", "-r", "writing-quality", "--base-url", server.base_url,
                             "--strategy", "per_criterion", "-w", "w.duckdb"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "estimate for 36 cells with rubricflow-offline-judge" in result.stderr
    warehouse = str(tmp_path / "w.duckdb")
    (usd, estimated, prompt, completion), = rows(warehouse, "SELECT usd, estimated_usd, prompt_tokens, completion_tokens FROM run_costs")
    assert usd == pytest.approx((prompt * 1000 + completion * 2000) / 1e6)
    assert estimated == pytest.approx(usd, rel=0.35)  # chars/4 and 80 output tokens per criterion: close, not exact
    by_criterion = rows(warehouse, "SELECT criterion_id, judgments, usd FROM criterion_costs ORDER BY criterion_id")
    assert [c for c, _, _ in by_criterion] == ["clarity", "economy", "structure"]
    assert all(n == 12 for _, n, _ in by_criterion)
    assert sum(u for _, _, u in by_criterion) == pytest.approx(usd)


CJK = "東京都議会は火曜日、道路予算を七対二で可決した。" * 40  # about 1,000 characters, ~1,000 tokens
EMOJI = "🚀✨🎉 " * 150


@pytest.mark.parametrize("text", [CJK, EMOJI], ids=["cjk", "emoji"])
def test_the_budget_holds_with_re_asks_and_text_that_is_not_english(tmp_path, text):
    """Finding 8: re-asks were not reserved, and 4 characters per token under-reserved CJK and
    emoji, so a $10 budget spent $13-17. Every attempt now reserves its worst case first."""
    import json

    from rubricflow.tasks.judge_server import RunningServer, ServerConfig

    (tmp_path / "prices.yaml").write_text(PRICES)
    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"id": f"t{i}", "text": f"{i} {text}"}) + "\n" for i in range(30)))
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(tmp_path / "c.jsonl"), warehouse, "c")
    budget = 40.0
    with RunningServer(ServerConfig(fault_rate=0.5, faults=("malformed",), fault_attempts=1)) as server:
        run = score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url, "prices": str(tmp_path / "prices.yaml"),
                                                        "max_tokens": 1024, "budget_usd": budget})
        reasked = server.app.stats.faults["malformed"]
    (spent,), = rows(warehouse, "SELECT usd FROM run_costs WHERE run_id = ?", [run["run_id"]])
    assert reasked > 0 and 0 < run["judged_cells"] < 30  # re-asks happened, and the budget stopped the run
    assert spent <= budget, f"spent ${spent:.2f} of ${budget:.2f}"
    assert spent > budget * 0.5  # and it was not needlessly timid


def test_a_budget_for_a_model_without_a_price_is_refused(tmp_path, judge_server):
    """A $0.000001 budget on a model the table does not know used to judge every cell (issue: real
    model servers). Refused before anything is planned or sent."""
    server = judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 5)), warehouse, "c")
    with pytest.raises(PriceError, match="--budget needs a price for model 'claude-sonnet-4-5'"):
        score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url, "model": "claude-sonnet-4-5",
                                                   "budget_usd": 0.000001})
    assert server.stats()["requests"] == 0
    assert rows(warehouse, "SELECT count(*) FROM runs") == [(0,)]
