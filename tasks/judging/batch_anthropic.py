"""Anthropic's Message Batches as a batch wire (tasks/judging/batch.py): half the price of online
Messages calls, most batches end within the hour. One POST to /v1/messages/batches carries every
request (`custom_id` = cell key, `params` = the Messages request the online path sends, its
`cache_control` breakpoint on the shared block included) and buys the batch; GET
/v1/messages/batches/{id} reports `processing_status` (`in_progress`, `canceling`, `ended`) and, once
ended, a `results_url` serving JSONL lines {"custom_id", "result": {"type": "succeeded", "message"}
| {"type": "errored" | "expired" | "canceled", ...}}. Through the one hardened client, with the
Messages provider's headers (x-api-key, anthropic-version).
Spec: https://docs.anthropic.com/en/api/creating-message-batches"""

from __future__ import annotations

import uuid
from typing import Any, cast
from urllib.parse import urlsplit

import orjson
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion

from rubricflow.tasks.judging import providers
from rubricflow.tasks.judging.batch import BatchState, BatchWire, Staged, jsonl_rows, request_body
from rubricflow.tasks.judging.judge import Cell, Judge

MAX_REQUESTS = 100_000  # per batch, Anthropic's limit
MAX_BYTES = 256 * 1024 * 1024  # per batch's body, Anthropic's limit
STAGED_PREFIX = "msgbatch-staged-"  # a staged id: the requests exist only in the run that built them


class MessageBatches(BatchWire):
    def __init__(self) -> None:
        self.wire = providers.provider("anthropic")

    async def stage(self, client: AsyncOpenAI, judge: Judge, cells: list[Cell]) -> Staged:
        """The batch's body, built here; nothing is sent until `buy` (there is no file to upload)."""
        await judge.learn_request_form()
        requests = [{"custom_id": c.cell_key, "params": self.wire.request(request_body(judge, c))} for c in cells]
        body = orjson.dumps({"requests": requests})
        if len(requests) > MAX_REQUESTS or len(body) > MAX_BYTES:
            raise ValueError(
                f"a Message Batch takes at most {MAX_REQUESTS:,} requests and {MAX_BYTES // 2**20} MiB; this shard "
                f"has {len(requests):,} requests in {len(body) / 2**20:.0f} MiB: lower --shard-size"
            )
        return Staged(f"{STAGED_PREFIX}{uuid.uuid4().hex}", body)

    async def buy(self, client: AsyncOpenAI, staged: Staged) -> str:
        batch = cast(
            "dict[str, Any]",
            await client.post(
                "/messages/batches", content=staged.requests, cast_to=object, options={"headers": self._headers()}
            ),
        )
        return str(batch["id"])

    async def find_or_buy(self, client: AsyncOpenAI, staged_id: str) -> str | None:
        """None: the staged requests lived only in the run that was killed, and the API's batch list
        names no custom_id to find them by, so their cells are planned again. Only a kill in the
        instant between the POST and its record can leave a batch bought unrecorded."""
        return None

    async def state(self, client: AsyncOpenAI, batch_id: str) -> BatchState:
        batch = cast(
            "dict[str, Any]",
            await client.get(f"/messages/batches/{batch_id}", cast_to=object, options={"headers": self._headers()}),
        )
        status = str(batch.get("processing_status"))
        ended = status == "ended"
        return BatchState(batch_id, status, ended, batch.get("results_url") if ended else None)

    async def answers(self, client: AsyncOpenAI, batch: BatchState) -> list[tuple[str, Any]]:
        text = await client.get(_same_origin(client, batch), cast_to=str, options={"headers": self._headers()})
        answered = []
        for row in jsonl_rows(text):
            result = row.get("result") or {}
            if result.get("type") == "succeeded":  # errored, expired, canceled: the cell goes online
                answered.append((row.get("custom_id"), result.get("message")))
        return answered

    def read(self, body: Any) -> ChatCompletion:
        read = self.wire.response(body)
        if not isinstance(read, ChatCompletion):
            raise ValueError("a batch result's message is not a Messages API answer")
        return read

    def _headers(self) -> dict[str, Any]:
        return self.wire.request_headers()  # the key in x-api-key only


def _same_origin(client: AsyncOpenAI, batch: BatchState) -> str:
    """The batch's results_url when it is on the API's own host (the request carries the key);
    else the documented path under the base URL, so a forged URL never receives the key."""
    url, base = urlsplit(batch.results or ""), urlsplit(str(client.base_url))
    if (url.scheme, url.netloc) == (base.scheme, base.netloc):
        return batch.results or ""
    return f"/messages/batches/{batch.id}/results"
