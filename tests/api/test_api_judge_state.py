"""What an rf.Judge keeps (its engine, the model's price) lives as long as the object, keyed by what it
was read from."""

from __future__ import annotations

import gc
import weakref

import pytest

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.library import resolve
from rubricflow.tasks.standins.judge_server import RunningServer

BUNDLE = compile_or_raise(resolve("llm-slop"))
TEXT = "We leverage synergies to deliver a robust, seamless, best-in-class experience."


def test_an_rf_judge_gone_takes_its_engine_with_it():
    """rf.Judge's engine (prompts, limiter, retry budget, stop rule) lives as long as the rf.Judge:
    the process does not keep it after, and a later rf.Judge at the same address starts afresh."""
    import rubricflow as rf

    with RunningServer() as server:
        judge = rf.Judge(base_url=server.base_url)
        engine = weakref.ref(judge._engine(BUNDLE))
        assert judge._engine(BUNDLE) is engine()  # one per rubric for the object's life
        del judge
        gc.collect()
        assert engine() is None


def test_an_edited_price_file_prices_the_next_result(tmp_path):
    """rf.Judge's cost reads the price file as it is now: an rf.Judge kept in a notebook while the
    user corrects a rate must not go on pricing at the rate it read first."""
    import rubricflow as rf

    prices = tmp_path / "prices.yaml"
    prices.write_text("rubricflow-offline-judge: {input: 1.0, output: 1.0}\n")
    with RunningServer() as server:
        judge = rf.Judge(base_url=server.base_url, prices=str(prices))
        first = judge.evaluate(BUNDLE, TEXT).cost_usd
        prices.write_text("rubricflow-offline-judge: {input: 3.0, output: 3.0}\n")
        second = judge.evaluate(BUNDLE, TEXT).cost_usd
    assert first and second == pytest.approx(3 * first)  # the same calls (the offline judge is deterministic)
