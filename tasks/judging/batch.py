"""The OpenAI Batch API path: about half the price of online calls, answers within the batch
window. Cells go out as a JSONL of chat requests (the same bodies the online path sends), the
batch and its request ids are recorded in the warehouse before anything waits on it, and a run
that finds unfinished batches of its rubric and judge polls them instead of submitting again.
Lines that failed, and every line of a failed or expired batch, are judged online instead."""

from __future__ import annotations

import asyncio
import io
import json
import time

from openai import AsyncOpenAI, NotFoundError
from openai.types.chat import ChatCompletion

from rubricflow.rubrics.render import render_user_message
from rubricflow.tasks.judging.judge import Cell, Judge, Outcome
from rubricflow.tasks.judging.verify import AnswerError

FINAL = ("completed", "failed", "expired", "cancelled")


def request_body(judge: Judge, cell: Cell) -> dict:
    """The chat request of one cell, as the online path would send it: in the parameter form the
    server takes (a reasoning model's max_completion_tokens with room to reason, no temperature)."""
    unit, system, schema = judge.unit(cell.unit_id, cell.genre)
    user = render_user_message(cell.text, cell.input or "", cell.context or "")
    return judge.form.apply(judge.request_body(system, schema, user, judge.mode, cell.sample))


async def upload(client: AsyncOpenAI, judge: Judge, cells: list[Cell]) -> str:
    """The cells' requests as one uploaded JSONL file; its id. Nothing is bought yet."""
    await judge.learn_request_form()  # else a reasoning model refuses every line, and every cell goes online
    lines = "".join(
        json.dumps(
            {"custom_id": c.cell_key, "method": "POST", "url": "/v1/chat/completions", "body": request_body(judge, c)}
        )
        + "\n"
        for c in cells
    )
    uploaded = await client.files.create(file=("rubricflow-batch.jsonl", io.BytesIO(lines.encode())), purpose="batch")
    return uploaded.id


async def create(client: AsyncOpenAI, input_file_id: str, window: str = "24h") -> str:
    """The batch of an uploaded file (this buys it); its id."""
    batch = await client.batches.create(
        input_file_id=input_file_id,
        endpoint="/v1/chat/completions",
        completion_window=window,  # type: ignore[arg-type]  # servers take other windows than 24h
    )
    return batch.id


async def find_or_create(client: AsyncOpenAI, input_file_id: str) -> str | None:
    """The batch of a file uploaded by a run that stopped before it recorded the batch: the one the
    provider holds for that file (listed newest first, back to the file's upload), else a new one;
    None if the provider no longer has the file. A run killed between buying a batch and recording
    it must not make the next run buy it again."""
    try:
        uploaded_at = (await client.files.retrieve(input_file_id)).created_at
    except NotFoundError:
        return None
    async for batch in client.batches.list(limit=100):
        if batch.input_file_id == input_file_id:
            return batch.id
        if batch.created_at < uploaded_at:
            break
    return await create(client, input_file_id)


async def wait(client: AsyncOpenAI, batch_id: str, poll_s: float, timeout_s: float):
    """The batch once it is final (completed, failed, expired, cancelled), or as it is at the timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        batch = await client.batches.retrieve(batch_id)
        if batch.status in FINAL or time.monotonic() >= deadline:
            return batch
        await asyncio.sleep(poll_s)


async def collect(client: AsyncOpenAI, judge: Judge, batch, cells: list[Cell]) -> tuple[list[Outcome], list[Cell]]:
    """(outcomes of the lines answered usably, cells to judge online instead)."""
    by_key = {c.cell_key: c for c in cells}
    outcomes: list[Outcome] = []
    if batch.status == "completed" and batch.output_file_id:
        text = (await client.files.content(batch.output_file_id)).text
        for line in text.splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            cell = by_key.get(row.get("custom_id"))
            response = row.get("response") or {}
            if cell is None or row.get("error") or response.get("status_code") != 200:
                continue
            outcome = outcome_from_body(judge, cell, response["body"], batch.id)
            if outcome is not None:
                outcomes.append(outcome)
    answered = {o.completion["cell_key"] for o in outcomes}
    return outcomes, [c for c in cells if c.cell_key not in answered]


def outcome_from_body(judge: Judge, cell: Cell, body: dict, batch_id: str) -> Outcome | None:
    """A batch answer as an Outcome, verified like an online one; None when it is unusable (the
    cell then goes online, where an unusable answer is asked again)."""
    unit, _, _ = judge.unit(cell.unit_id, cell.genre)
    row = judge.new_row(cell)
    try:
        response = ChatCompletion.model_validate(body)
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
        output_mode=f"batch:{judge.mode}",
        attempts=1,
        status="ok",
        declared_disqualifiers=declared,
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        latency_ms=None,
        created_at=time.time(),
        error=None,
        error_kind=None,
    )
    return Outcome(row, results)
