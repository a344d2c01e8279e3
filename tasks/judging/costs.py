"""What judging costs: each model's price, the pre-run estimate, and the run's budget.

Prices are USD per million tokens (input, cached input, output). They come from, in order: a YAML
file (`--prices FILE` or $RUBRICFLOW_PRICES) of the form `{model: {input: 0.40, output: 1.60,
cached_input: 0.10}}`; the offline judge's zero price; the maintained `genai-prices` package (hundreds
of models across providers, with cached-input rates). The Batch API is billed at `BATCH_DISCOUNT`.
The warehouse keeps the price a run used (`model_prices`) so costs stay queryable in SQL.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

import yaml

from rubricflow.errors import InputError
from rubricflow.settings import settings
from rubricflow.tasks.judging.config import OFFLINE_MODEL
from rubricflow.tasks.runtime.lease import update_locked

BATCH_DISCOUNT = 0.5
CHARS_PER_TOKEN = 4  # the pre-run estimate's rule of thumb for English text (the budget uses TokenEstimator)
OUTPUT_TOKENS_PER_CRITERION = 80  # expected answer size before any completion of the rubric landed
USER_WRAPPER_CHARS = 120  # the user message's fence and labels around the text
RATE_PROBE_TOKENS = 1000  # a small request, below any provider's long-context price tier


class PriceError(InputError):
    """A price table that cannot be read, or a model with no price where one is needed."""


@dataclass(frozen=True)
class Price:
    model: str
    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None  # None: cached input costs what input costs
    source: str = "rubricflow"

    def __post_init__(self) -> None:
        rates = {
            "input": self.input_per_mtok,
            "output": self.output_per_mtok,
            "cached_input": self.cached_input_per_mtok,
        }
        bad = {name: rate for name, rate in rates.items() if rate is not None and not (0 <= rate < math.inf)}
        if bad:  # a NaN rate made every budget check pass; a negative one paid the budget back
            raise PriceError(
                f"{self.source}: model {self.model!r}: prices must be finite and >= 0 (USD per 1M tokens), got "
                + ", ".join(f"{name}={rate}" for name, rate in bad.items())
            )

    def cost(self, prompt_tokens: float, completion_tokens: float, cached_tokens: float = 0) -> float:
        """USD of one call; `cached_tokens` are the part of `prompt_tokens` served from the prefix cache.
        Counts an endpoint reports are not trusted to be sane: negative ones count as 0, and cached
        tokens as at most the prompt (a call never costs less than nothing)."""
        prompt_tokens, completion_tokens = max(0.0, prompt_tokens), max(0.0, completion_tokens)
        cached_tokens = min(max(0.0, cached_tokens), prompt_tokens)
        cached_rate = self.input_per_mtok if self.cached_input_per_mtok is None else self.cached_input_per_mtok
        fresh = prompt_tokens - cached_tokens
        return (
            fresh * self.input_per_mtok + cached_tokens * cached_rate + completion_tokens * self.output_per_mtok
        ) / 1e6


def price_table(path: str | Path | None = None) -> dict[str, Price]:
    """The prices that override the maintained source: the offline judge's, then the user's file."""
    table = {OFFLINE_MODEL: Price(OFFLINE_MODEL, 0.0, 0.0, 0.0)}
    path = path or settings().prices
    if path:
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise PriceError(f"{path}: cannot read the price table: {exc}") from None
        if not isinstance(data, dict):
            raise PriceError(f"{path}: expected a mapping of model -> {{input, output, cached_input}}")
        for model, entry in data.items():
            try:
                cached = entry.get("cached_input")
                table[str(model)] = Price(
                    str(model),
                    float(entry["input"]),
                    float(entry["output"]),
                    None if cached is None else float(cached),
                    source=str(path),
                )
            except PriceError:
                raise
            except (TypeError, KeyError, ValueError, AttributeError):
                raise PriceError(
                    f"{path}: model {model!r}: needs numeric `input` and `output` "
                    "(USD per 1M tokens; `cached_input` optional)"
                ) from None
    return table


def price_of(model: str, table: dict[str, Price]) -> Price | None:
    """A model's price: the table's (dated snapshots like gpt-4.1-mini-2025-04-14 fall back to their
    base name), else genai-prices', else None."""
    if model in table:
        return table[model]
    base = max((m for m in table if model.startswith(m + "-")), key=len, default=None)
    return table[base] if base else maintained_price(model)


@lru_cache(maxsize=64)
def maintained_price(model: str) -> Price | None:
    """The model's rates from genai-prices' bundled snapshot (no network), read off a small request."""
    from genai_prices import Usage, calc_price

    def usd(**usage: int) -> float:
        return float(calc_price(Usage(**usage), model).total_price)

    try:
        n = RATE_PROBE_TOKENS
        per_mtok = 1e6 / n
        return Price(
            model,
            usd(input_tokens=n) * per_mtok,
            usd(output_tokens=n) * per_mtok,
            usd(input_tokens=n, cache_read_tokens=n) * per_mtok,
            source=f"genai-prices {version('genai-prices')}",
        )
    except LookupError:
        return None


@dataclass(frozen=True)
class Estimate:
    cells: int
    prompt_tokens: int
    completion_tokens: int
    usd: float | None  # None: no price known for the model

    def describe(self, model: str) -> str:
        money = f"${self.usd:,.4f}" if self.usd is not None else "unknown (no price for this model; see --prices)"
        return (
            f"estimate for {self.cells:,} cells with {model}: ~{self.prompt_tokens:,} prompt + "
            f"~{self.completion_tokens:,} completion tokens, cost {money}"
        )


class TokenEstimator:
    """Prompt tokens of a request before it is sent, erring high: an ASCII character is a third of a
    token, any other character costs its UTF-8 bytes (a byte-level tokenizer never makes more
    tokens than bytes, so CJK, emoji and code are not under-reserved). Once the provider reports
    real counts, the estimate is scaled to the largest real/estimated ratio seen, plus 10%."""

    def __init__(self) -> None:
        self.ratio = 1.0
        self.observed = False

    @staticmethod
    def raw(text: str) -> int:
        ascii_chars = len(text.encode("ascii", "ignore"))
        return -(-ascii_chars // 3) + len(text.encode("utf-8")) - ascii_chars

    def estimate(self, raw_tokens: int) -> int:
        """The reservation for a prompt whose raw() count is `raw_tokens`."""
        return max(1, round(raw_tokens * self.ratio))

    def observe(self, raw_tokens: int, prompt_tokens: int) -> None:
        """Correct the scale with a provider's count for a prompt whose raw() count was `raw_tokens`."""
        seen = prompt_tokens / max(1, raw_tokens) * 1.1
        self.ratio = max(self.ratio, seen) if self.observed else seen
        self.observed = True


class Budget:
    """A run's spending cap, shared by every process that judges for the run through a small
    ledger file (flock): a call reserves its worst-case cost (estimated prompt + max_tokens) before
    it is sent and settles to its real cost after, so concurrent calls cannot overshoot."""

    def __init__(self, usd: float | None, price: Price | None, ledger: str | Path):
        self.usd, self.price, self.ledger = usd, price, Path(ledger)
        self.active = usd is not None and price is not None

    def reserve(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """The amount reserved, or None when this call could exceed the budget (then stop)."""
        if self.price is None or self.usd is None:
            return 0.0
        amount, cap = self.price.cost(prompt_tokens, completion_tokens), self.usd

        def take(state: dict) -> bool:
            if state["spent"] + state["reserved"] + amount > cap:
                return False
            state["reserved"] += amount
            return True

        if not update_locked(self.ledger, {"spent": 0.0, "reserved": 0.0}, take):
            return None
        return amount

    def settle(self, reserved: float, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> None:
        if self.price is not None and self.usd is not None:
            self.settle_amount(reserved, self.price.cost(prompt_tokens, completion_tokens, cached_tokens))

    def settle_amount(self, reserved: float, cost: float) -> None:
        """Release a reservation and record what the call cost."""
        if not self.active:
            return

        def pay(state: dict) -> None:
            state["reserved"] -= reserved
            state["spent"] += cost

        update_locked(self.ledger, {"spent": 0.0, "reserved": 0.0}, pay)


def answer_overrun(rubric, strategy: str, max_tokens: int) -> str | None:
    """A call unit whose expected answer (OUTPUT_TOKENS_PER_CRITERION per criterion) exceeds
    max_tokens would be cut off on every cell and paid for anyway; said before any call, naming the
    unit, its size and what to change. None when every unit fits."""
    from rubricflow.rubrics.render import call_units

    largest = max(call_units(rubric, strategy), key=lambda u: len(u.criteria))  # type: ignore[arg-type]
    expected = OUTPUT_TOKENS_PER_CRITERION * len(largest.criteria)
    if expected <= max_tokens:
        return None
    return (
        f"call unit {largest.id!r} asks for {len(largest.criteria)} criteria in one answer (~{expected:,} tokens at "
        f"~{OUTPUT_TOKENS_PER_CRITERION} per criterion), over --max-tokens {max_tokens:,}: its answers will be cut "
        "off; raise --max-tokens or split the calls with --strategy grouped or per_criterion"
    )


def estimate_cost(
    rubric, strategy: str, cells: int, text_chars: int, seen_completion_tokens: float | None, price: Price | None
) -> Estimate:
    """Tokens and cost of judging `cells` cells: the rendered system prompt of each call unit and
    the cells' text, at CHARS_PER_TOKEN; the output at the mean of earlier completions of the same
    rubric and judge, or OUTPUT_TOKENS_PER_CRITERION per criterion before there are any."""
    from rubricflow.rubrics.render import render

    rendered = render(rubric, strategy).of_genre(None)  # the system texts the judge will send
    units = [r.unit for r in rendered]
    if not units:  # every criterion is a check or scoped: no call of this run reads the texts
        return Estimate(0, 0, 0, 0.0 if price else None)
    system_chars = sum(len(r.system) for r in rendered) / len(rendered)
    prompt = int((text_chars + cells * (system_chars + USER_WRAPPER_CHARS)) / CHARS_PER_TOKEN)
    per_cell = seen_completion_tokens or OUTPUT_TOKENS_PER_CRITERION * sum(len(u.criteria) for u in units) / len(units)
    completion = int(cells * per_cell)
    return Estimate(cells, prompt, completion, price.cost(prompt, completion) if price else None)
