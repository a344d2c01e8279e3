"""Cost control: the pre-run estimate, the budget stop, and cost per run / rubric / criterion in SQL."""

import json
import os
import subprocess

import pytest

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.tasks.judging.costs import PriceError, price_of, price_table
from rubricflow.warehouse.locks import runs_root
from tests.conftest import EXE, rows, write_corpus

PRICES = "rubricflow-offline-judge: {input: 1000, output: 2000}\n"  # USD per 1M tokens: a dear offline judge


def test_price_table_overrides_and_dated_models(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(PRICES + "gpt-4.1-mini: {input: 0.5, output: 2, cached_input: 0.125}\n")
    table = price_table(path)
    assert price_of("rubricflow-offline-judge", table).input_per_mtok == 1000
    mini = price_of("gpt-4.1-mini-2025-04-14", table)  # a dated snapshot of a model the file prices
    assert (mini.output_per_mtok, mini.cached_input_per_mtok, mini.source) == (2, 0.125, str(path))
    assert mini.cost(1_000_000, 0, cached_tokens=400_000) == pytest.approx(0.6 * 0.5 + 0.4 * 0.125)
    assert price_of("someone-elses-model", table) is None
    path.write_text("gpt-x: {input: cheap}\n")
    with pytest.raises(PriceError, match=r"p.yaml: model 'gpt-x': needs numeric `input` and `output`"):
        price_table(path)


def test_models_the_file_does_not_price_come_from_genai_prices():
    """The maintained price source knows hundreds of models, cached-input rates included."""
    import genai_prices

    table = price_table()
    for model in ("gpt-4o-mini", "gpt-4.1-2025-04-14", "claude-sonnet-4-5"):
        price = price_of(model, table)
        assert price.source == f"genai-prices {genai_prices.__version__}"
        assert 0 < price.cached_input_per_mtok < price.input_per_mtok < price.output_per_mtok
        usage = genai_prices.Usage(input_tokens=3000, cache_read_tokens=1000, output_tokens=500)
        assert price.cost(3000, 500, cached_tokens=1000) == pytest.approx(
            float(genai_prices.calc_price(usage, model).total_price)
        )


def test_budget_stops_before_exceeding_and_the_rest_is_judged_later(tmp_path, thread_judge_server):
    server = thread_judge_server()
    (tmp_path / "prices.yaml").write_text(PRICES)
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 20)), warehouse, "c")
    judge = {"base_url": server.base_url, "prices": str(tmp_path / "prices.yaml"), "max_tokens": 256}
    budget = 12.0  # one call reserves ~ (700 prompt + 256 output) tokens: about 1.2 USD at these prices
    run = score_corpus("c", "llm-slop", warehouse, {**judge, "budget_usd": budget})
    assert 0 < run["judged_cells"] < 20 and run["unjudged_cells"] == 20 - run["judged_cells"]
    assert server.stats()["requests"] == run["judged_cells"]  # nothing was sent beyond the budget
    ((status, message),) = rows(warehouse, "SELECT status, message FROM runs WHERE run_id = ?", [run["run_id"]])
    assert status == "stopped" and "budget $12.0000 reached" in message
    ((spent, estimated, cap),) = rows(
        warehouse, "SELECT usd, estimated_usd, budget_usd FROM run_costs WHERE run_id = ?", [run["run_id"]]
    )
    assert spent <= budget and cap == budget and estimated > budget
    rest = score_corpus("c", "llm-slop", warehouse, judge)  # no budget: the cells left are judged now, once
    assert rest["judged_cells"] == 20 - run["judged_cells"] and rest["skipped_cells"] == run["judged_cells"]
    assert rows(warehouse, "SELECT count(*), count(DISTINCT cell_key) FROM completions") == [(20, 20)]


def test_estimate_is_printed_before_any_call_and_costs_add_up(tmp_path, thread_judge_server):
    server = thread_judge_server()
    (tmp_path / "prices.yaml").write_text(PRICES)
    env = {**os.environ, "COLUMNS": "200", "RUBRICFLOW_PRICES": str(tmp_path / "prices.yaml")}
    write_corpus(tmp_path / "c.jsonl", 12)
    assert (
        subprocess.run(
            [EXE, "ingest", "c.jsonl", "-c", "c", "-w", "w.duckdb"], cwd=tmp_path, env=env, capture_output=True
        ).returncode
        == 0
    )
    result = subprocess.run(
        [
            EXE,
            "score",
            "-c",
            "c",
            "-r",
            "writing-quality",
            "--base-url",
            server.base_url,
            "--strategy",
            "per_criterion",
            "-w",
            "w.duckdb",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "estimate for 36 cells with rubricflow-offline-judge" in result.stderr
    warehouse = str(tmp_path / "w.duckdb")
    ((usd, estimated, prompt, completion),) = rows(
        warehouse, "SELECT usd, estimated_usd, prompt_tokens, completion_tokens FROM run_costs"
    )
    assert usd == pytest.approx((prompt * 1000 + completion * 2000) / 1e6)
    assert estimated == pytest.approx(usd, rel=0.35)  # chars/4 and 80 output tokens per criterion: close, not exact
    by_criterion = rows(warehouse, "SELECT criterion_id, judgments, usd FROM criterion_costs ORDER BY criterion_id")
    assert [c for c, _, _ in by_criterion] == ["clarity", "economy", "structure"]
    assert all(n == 12 for _, n, _ in by_criterion)
    assert sum(u for _, _, u in by_criterion) == pytest.approx(usd)


def test_cached_input_is_priced_at_its_own_rate_in_the_budget_and_the_views(tmp_path, thread_judge_server):
    """The offline judge reports prefix-cache hits like OpenAI (usage.prompt_tokens_details); cells
    that share a system prompt run together, so most calls after the first are cache hits."""
    server = thread_judge_server()
    (tmp_path / "prices.yaml").write_text("rubricflow-offline-judge: {input: 1000, output: 2000, cached_input: 100}\n")
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 10)), warehouse, "c")
    score_corpus(
        "c",
        "writing-quality",
        warehouse,
        {
            "base_url": server.base_url,
            "strategy": "per_criterion",
            "prices": str(tmp_path / "prices.yaml"),
            "budget_usd": 1000.0,
        },
    )
    ((prompt, cached, completion),) = rows(
        warehouse, "SELECT sum(prompt_tokens), sum(cached_tokens), sum(completion_tokens) FROM completions"
    )
    assert 0 < cached < prompt
    ((usd,),) = rows(warehouse, "SELECT usd FROM run_costs")
    assert usd == pytest.approx(((prompt - cached) * 1000 + cached * 100 + completion * 2000) / 1e6)
    assert rows(warehouse, "SELECT cached_input_per_mtok, source FROM model_prices") == [
        (100, str(tmp_path / "prices.yaml"))
    ]
    (ledger,) = runs_root(warehouse).glob("*/budget.json")  # what the budget paid, call by call
    assert json.loads(ledger.read_text())["spent"] == pytest.approx(usd)


CJK = "東京都議会は火曜日、道路予算を七対二で可決した。" * 40  # about 1,000 characters, ~1,000 tokens
EMOJI = "🚀✨🎉 " * 150


@pytest.mark.parametrize("text", [CJK, EMOJI], ids=["cjk", "emoji"])
def test_the_budget_holds_with_re_asks_and_text_that_is_not_english(tmp_path, text):
    """Finding 8: re-asks were not reserved, and 4 characters per token under-reserved CJK and
    emoji, so a $10 budget spent $13-17. Every attempt now reserves its worst case first."""
    from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig

    (tmp_path / "prices.yaml").write_text(PRICES)
    (tmp_path / "c.jsonl").write_text(
        "".join(json.dumps({"id": f"t{i}", "text": f"{i} {text}"}) + "\n" for i in range(30))
    )
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(tmp_path / "c.jsonl"), warehouse, "c")
    budget = 40.0
    with RunningServer(ServerConfig(fault_rate=0.5, faults=("malformed",), fault_attempts=1)) as server:
        run = score_corpus(
            "c",
            "llm-slop",
            warehouse,
            {
                "base_url": server.base_url,
                "prices": str(tmp_path / "prices.yaml"),
                "max_tokens": 1024,
                "budget_usd": budget,
                "max_in_flight": 2,  # where the run stops does not hang on how many worst cases are reserved at once
            },
        )
        reasked = server.app.stats.faults["malformed"]
    ((spent,),) = rows(warehouse, "SELECT usd FROM run_costs WHERE run_id = ?", [run["run_id"]])
    assert reasked > 0 and 0 < run["judged_cells"] < 30  # re-asks happened, and the budget stopped the run
    assert spent <= budget, f"spent ${spent:.2f} of ${budget:.2f}"
    assert spent > budget * 0.5  # and it was not needlessly timid


def test_a_budget_for_a_model_without_a_price_is_refused(tmp_path, thread_judge_server):
    """A $0.000001 budget on a model the table does not know used to judge every cell (issue: real
    model servers). Refused before anything is planned or sent."""
    server = thread_judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 5)), warehouse, "c")
    with pytest.raises(PriceError, match="--budget needs a price for model 'someones-finetune'"):
        score_corpus(
            "c",
            "llm-slop",
            warehouse,
            {"base_url": server.base_url, "model": "someones-finetune", "budget_usd": 0.000001},
        )
    assert server.stats()["requests"] == 0
    assert rows(warehouse, "SELECT count(*) FROM runs") == [(0,)]
