"""The batch seam: what every provider's batch API shares, so the scoring pipeline (record, poll,
land, resume after a kill: tasks/pipeline/batch.py) is one for all of them. A `BatchWire` speaks one
provider's batch endpoints (batch_openai.py: OpenAI's Batch API; batch_anthropic.py: Anthropic's
Message Batches; the pipeline picks one by the provider's capabilities) and says what a batch is in neutral terms (`BatchState`); this module waits on a
batch, reads its answers back into Outcomes, verified like online ones, and leaves to the online
path whatever a batch did not answer usably."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion

from rubricflow.tasks.judging.answers import cached_tokens
from rubricflow.tasks.judging.judge import Cell, Judge, Outcome
from rubricflow.tasks.judging.verify import AnswerError


@dataclass(frozen=True)
class Staged:
    """A shard's requests made ready to buy: `id` is recorded in the warehouse before the purchase
    (OpenAI: the uploaded file's id; Anthropic: an id of rubricflow's own, the requests held here)."""

    id: str
    requests: Any = None


@dataclass(frozen=True)
class BatchState:
    """A batch as its provider reports it: `status` in the provider's words (it names the landed
    row: `landed (completed)`, `landed (ended)`), `final` once no answer will change, `results`
    where the answers are (an output file's id, a results URL), None when there are none."""

    id: str
    status: str
    final: bool
    results: str | None


class BatchWire:
    """One provider's batch endpoints. The pipeline stages a shard, records the staged id, buys the
    batch and records its id; a run killed in between finds the staged id still 'uploaded' and asks
    `find_or_buy`, so a batch is bought at most once."""

    async def stage(self, client: AsyncOpenAI, judge: Judge, cells: list[Cell]) -> Staged:
        """The cells' requests made ready (uploaded, or built); nothing is bought yet."""
        raise NotImplementedError

    async def buy(self, client: AsyncOpenAI, staged: Staged) -> str:
        """The batch of staged requests (this buys it); its id."""
        raise NotImplementedError

    async def find_or_buy(self, client: AsyncOpenAI, staged_id: str) -> str | None:
        """The batch of requests staged by a run that stopped before recording the batch: found at
        the provider, or bought now; None when it can be neither (the cells are planned again)."""
        raise NotImplementedError

    async def state(self, client: AsyncOpenAI, batch_id: str) -> BatchState:
        """The batch as the provider reports it now."""
        raise NotImplementedError

    async def answers(self, client: AsyncOpenAI, batch: BatchState) -> list[tuple[str, Any]]:
        """(custom_id, answer body) of each request the batch answered, in the provider's shape;
        lines that failed, expired or were canceled are left out (their cells go online)."""
        raise NotImplementedError

    def read(self, body: Any) -> ChatCompletion:
        """One answer body as a ChatCompletion; ValueError when it is not one."""
        raise NotImplementedError


def jsonl_rows(text: str) -> list[Any]:
    """A batch's results file, a JSON object a line (blank lines skipped): both APIs' shape."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def request_body(judge: Judge, cell: Cell) -> dict:
    """The chat request of one cell, as the online path would send it: in the parameter form the
    server takes (a reasoning model's max_completion_tokens with room to reason, no temperature)."""
    rendered = judge.rendering.unit(cell.unit_id, cell.genre)  # the user message as the online path renders it
    user = rendered.user(cell.text, cell.input or "", cell.context or "")
    return judge.form.apply(judge.request_body(rendered.system, rendered.schema, user, judge.mode, cell.sample))


async def wait(wire: BatchWire, client: AsyncOpenAI, batch_id: str, poll_s: float, timeout_s: float) -> BatchState:
    """The batch once it is final, or as it is at the timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        batch = await wire.state(client, batch_id)
        if batch.final or time.monotonic() >= deadline:
            return batch
        await asyncio.sleep(poll_s)


async def collect(
    wire: BatchWire, client: AsyncOpenAI, judge: Judge, batch: BatchState, cells: list[Cell]
) -> tuple[list[Outcome], list[Cell]]:
    """(outcomes of the lines answered usably, cells to judge online instead)."""
    by_key = {c.cell_key: c for c in cells}
    outcomes: list[Outcome] = []
    for custom_id, body in await wire.answers(client, batch) if batch.results else []:
        cell = by_key.get(custom_id)
        outcome = outcome_from_body(wire, judge, cell, body, batch.id) if cell is not None else None
        if outcome is not None:
            outcomes.append(outcome)
    answered = {o.completion["cell_key"] for o in outcomes}
    return outcomes, [c for c in cells if c.cell_key not in answered]


def outcome_from_body(wire: BatchWire, judge: Judge, cell: Cell, body: Any, batch_id: str) -> Outcome | None:
    """A batch answer as an Outcome, verified like an online one; None when it is unusable (the
    cell then goes online, where an unusable answer is asked again)."""
    unit, _, schema = judge.unit(cell.unit_id, cell.genre)
    row = judge.new_row(cell)
    try:
        response = wire.read(body)
        results, declared, warnings = judge.read_answer(response, unit, cell.text, row)
    except (AnswerError, ValueError):
        return None
    for r in results:
        r.warnings = warnings + r.warnings
    usage = response.usage
    row.update(
        model=response.model,
        system_fingerprint=response.system_fingerprint,
        response_id=response.id,
        output_mode=f"batch:{judge.sent_mode(schema, judge.mode)}",
        attempts=1,
        status="ok",
        declared_disqualifiers=declared,
        prompt_tokens=usage.prompt_tokens if usage else None,
        cached_tokens=cached_tokens(usage),  # a batch reads the prompt cache too (Anthropic: cache_read_input_tokens)
        completion_tokens=usage.completion_tokens if usage else None,
        latency_ms=None,
        created_at=time.time(),
        error=None,
        error_kind=None,
    )
    return Outcome(row, results)
