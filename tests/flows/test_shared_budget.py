"""One --budget for the commands that score in several runs: a judge cascade (calibration sample,
levels) and a sequential A/B (batches) spend at most the budget in all, as `score` does, where each
run used to get the whole budget again; real score flows against the offline judge server."""

import pytest

from rubricflow.flows.cascade import cascade_flow
from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.sequential import sequential_compare_flow
from tests.conftest import ThreadServer, rows, write_corpus

STRONG, CHEAP = "rubricflow-offline-judge", "offline-cheap"
PRICES = f"{STRONG}: {{input: 1000, output: 2000}}\n{CHEAP}: {{input: 100, output: 200}}\n"  # USD per 1M tokens
BUDGET = 8.0  # a strong call reserves ~1.2 USD: the strong calibration alone would spend more


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("budget")
    (tmp / "prices.yaml").write_text(PRICES)
    server = ThreadServer()
    judge = {"base_url": server.base_url, "prices": str(tmp / "prices.yaml"), "max_tokens": 256, "budget_usd": BUDGET}
    try:
        yield tmp, judge
    finally:
        server.stop()


def corpus(tmp, name: str) -> str:
    warehouse = str(tmp / f"{name}.duckdb")
    ingest_flow(str(write_corpus(tmp / f"{name}.jsonl", 20)), warehouse, "c")
    return warehouse


def test_a_cascade_spends_one_budget_across_its_runs(judged):
    tmp, judge = judged
    warehouse = corpus(tmp, "cascade")
    # one call at a time: the budget then ends it within one call's reservation (~1.2 USD) of the whole, whatever
    # the timing (with 64 in flight, their worst-case reservations could stop it anywhere below)
    one_at_a_time = judge | {"max_in_flight": 1}
    result = cascade_flow("c", "llm-slop", warehouse, one_at_a_time, CHEAP, STRONG, 0.8, 0.2, 20)  # two runs
    [(spent, runs)] = rows(warehouse, "SELECT sum(usd), count(DISTINCT run_id) FROM run_costs")
    assert spent <= BUDGET and runs >= 2  # each run got only what the earlier ones left
    assert spent > 0.8 * BUDGET and result["unscored"] > 0  # the budget, not the corpus, ended it: run again


def test_a_sequential_ab_stops_when_its_budget_is_spent(judged):
    tmp, judge = judged
    warehouse = corpus(tmp, "sequential")
    result = sequential_compare_flow(
        "c", "llm-slop", "llm-slop", warehouse, judge | {"model": STRONG}, judge | {"model": CHEAP}, batch_size=10
    )
    [(spent, runs)] = rows(warehouse, "SELECT sum(usd), count(DISTINCT run_id) FROM run_costs")
    assert spent <= BUDGET and runs >= 2
    assert result["decision"] == "undecided" and result["texts_judged"] < 20  # stopped, to continue later
