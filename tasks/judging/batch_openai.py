"""OpenAI's Batch API as a batch wire (tasks/judging/batch.py): about half the price of online
calls, answers within the batch window. Cells go out as an uploaded JSONL of chat requests (the
same bodies the online path sends, `custom_id` = cell key), then `/v1/batches` buys the batch; the
output file's lines are chat completions.
Spec: https://platform.openai.com/docs/api-reference/batch"""

from __future__ import annotations

import io
import json
from typing import Any

from openai import AsyncOpenAI, NotFoundError
from openai.types.chat import ChatCompletion

from rubricflow.tasks.judging.batch import BatchState, BatchWire, Staged, jsonl_rows, request_body
from rubricflow.tasks.judging.judge import Cell, Judge

FINAL = ("completed", "failed", "expired", "cancelled")


class OpenAIBatches(BatchWire):
    async def stage(self, client: AsyncOpenAI, judge: Judge, cells: list[Cell]) -> Staged:
        return Staged(await upload(client, judge, cells))

    async def buy(self, client: AsyncOpenAI, staged: Staged) -> str:
        return await create(client, staged.id)

    async def find_or_buy(self, client: AsyncOpenAI, staged_id: str) -> str | None:
        return await find_or_create(client, staged_id)

    async def state(self, client: AsyncOpenAI, batch_id: str) -> BatchState:
        batch = await client.batches.retrieve(batch_id)
        output = batch.output_file_id if batch.status == "completed" else None
        return BatchState(batch.id, batch.status, batch.status in FINAL, output)

    async def answers(self, client: AsyncOpenAI, batch: BatchState) -> list[tuple[str, Any]]:
        text = (await client.files.content(batch.results or "")).text
        answered = []
        for row in jsonl_rows(text):
            response = row.get("response") or {}
            if not row.get("error") and response.get("status_code") == 200:
                answered.append((row.get("custom_id"), response.get("body")))
        return answered

    def read(self, body: Any) -> ChatCompletion:
        return ChatCompletion.model_validate(body)  # a ValidationError is a ValueError


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
