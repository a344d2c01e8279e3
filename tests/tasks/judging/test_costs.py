"""What a call costs, whatever the endpoint reports (N13: cached tokens above the prompt and
negative usage gave negative costs, down to -$26M; a NaN price switched --budget off)."""

import math

import pytest
import yaml

from rubricflow.tasks.judging.costs import Budget, Price, PriceError, price_table

PRICE = Price("m", input_per_mtok=2.0, output_per_mtok=8.0, cached_input_per_mtok=0.5)


@pytest.mark.parametrize(
    ("prompt", "completion", "cached"),
    [(1000, 100, 5000), (-1000, 100, 0), (1000, -(10**9), 0), (1000, 100, -(10**9)), (-5, -5, -5)],
)
def test_a_call_never_costs_less_than_nothing_nor_less_than_its_sane_part(prompt, completion, cached):
    cost = PRICE.cost(prompt, completion, cached)
    assert cost >= 0
    sane_prompt, sane_completion = max(0, prompt), max(0, completion)
    # cached tokens count as at most the whole prompt, at the cached rate
    assert cost >= (sane_prompt * 0.5 + sane_completion * 8.0) / 1e6 - 1e-12


def test_cached_tokens_are_billed_at_their_own_rate():
    assert math.isclose(PRICE.cost(1000, 0, 400), (600 * 2.0 + 400 * 0.5) / 1e6)


@pytest.mark.parametrize("rate", [float("nan"), float("inf"), -1.0])
def test_a_price_that_is_not_finite_and_positive_is_refused(rate, tmp_path):
    with pytest.raises(PriceError, match="finite and >= 0"):
        Price("m", rate, 1.0)
    table = tmp_path / "prices.yaml"
    table.write_text(yaml.safe_dump({"m": {"input": rate, "output": 1.0}}))
    with pytest.raises(PriceError, match=f"{table}.*model 'm'"):
        price_table(table)


def test_the_budget_stops_a_run_whose_endpoint_reports_impossible_usage(tmp_path):
    budget = Budget(0.01, PRICE, tmp_path / "budget.json")
    for _ in range(200):  # each call reports a negative completion count: it was paying the budget back
        reserved = budget.reserve(1000, 100)
        if reserved is None:
            break
        budget.settle(reserved, 1000, -(10**9), cached_tokens=5000)
    else:
        pytest.fail("a budget of $0.01 covered 200 calls of >= $0.0013 each")


def test_a_call_unit_whose_answer_cannot_fit_max_tokens_is_said_before_any_call():
    """G17: a 10,000-criterion rubric validated, then every cell was cut off at max_tokens and paid for."""
    from rubricflow.tasks.judging.costs import answer_overrun
    from tests.rubrics.factories import rubric

    many = rubric(
        criteria=[{"id": f"c{i}", "description": f"criterion {i}", "scale": {"kind": "binary"}} for i in range(40)]
    )
    said = answer_overrun(many, "holistic", 1024)
    assert said and "40 criteria in one answer (~3,200 tokens" in said and "--max-tokens 1,024" in said
    assert answer_overrun(many, "per_criterion", 1024) is None  # one criterion per call fits
    assert answer_overrun(many, "holistic", 4096) is None
    assert answer_overrun(rubric(), "holistic", 1024) is None
