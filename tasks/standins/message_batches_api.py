"""The offline judge server's Anthropic Message Batches (`/v1/messages/batches`), written from the
API's reference: POST a body {"requests": [{"custom_id", "params"}]} (1 to 100,000 requests, each
custom_id matching ^[a-zA-Z0-9_-]{1,64}$ and unique, each params a Messages request), poll GET
/v1/messages/batches/{id} until `processing_status` is `ended`, then GET its `results_url` for JSONL
lines {"custom_id", "result": {"type": "succeeded", "message"} | {"type": "errored", "error"} |
{"type": "expired"}}. Batches end after `delay_s`; a share of requests can error, or every request
expire (BatchConfig, shared with the OpenAI-shaped batch_api.py). It counts the batches created
(a resumed client must not create one again) and keeps every request's params as sent, with the
whether its shared block carried a `cache_control` breakpoint."""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from rubricflow.tasks.standins import messages_api
from rubricflow.tasks.standins.batch_api import BatchConfig

CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_REQUESTS = 100_000


@dataclass
class MessageBatchStore:
    config: BatchConfig
    answer: Callable[[dict], dict]  # one Messages request's params -> its Message
    batches: dict[str, dict] = field(default_factory=dict)
    requests: dict[str, list[dict]] = field(default_factory=dict)  # a batch's id -> its requests as sent
    shared_block_cached: dict[str, bool] = field(default_factory=dict)  # custom_id -> its shared block is a breakpoint
    created: int = 0  # batches created

    def create(self, body: Any) -> tuple[int, dict]:
        refused = _invalid(body)
        if refused:
            return 400, messages_api.error("invalid_request_error", refused)
        self.created += 1
        batch_id = f"msgbatch_{uuid.uuid4().hex[:24]}"
        now = datetime.now(UTC)
        self.requests[batch_id] = body["requests"]
        for r in body["requests"]:
            self.shared_block_cached[r["custom_id"]] = _shared_block_cached(r["params"])
        self.batches[batch_id] = {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "in_progress",
            "request_counts": {
                "processing": len(body["requests"]),
                "succeeded": 0,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
            "ended_at": None,
            "created_at": _stamp(now),
            "expires_at": _stamp(now + timedelta(hours=24)),
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": None,
            "_done_at": time.monotonic() + self.config.delay_s,
            "_results": None,
        }
        return 200, _public(self.batches[batch_id])

    def retrieve(self, batch_id: str, origin: str) -> tuple[int, dict]:
        batch = self.batches.get(batch_id)
        if batch is None:
            return 404, messages_api.error("not_found_error", f"no message batch {batch_id}")
        if batch["processing_status"] == "in_progress" and time.monotonic() >= batch["_done_at"]:
            self._end(batch, origin)
        return 200, _public(batch)

    def listed(self) -> tuple[int, dict]:
        """Every batch, newest first, on one page."""
        data = [_public(b) for b in reversed(self.batches.values())]
        first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
        return 200, {"data": data, "has_more": False, "first_id": first, "last_id": last}

    def results(self, batch_id: str) -> tuple[int, bytes | dict]:
        batch = self.batches.get(batch_id)
        if batch is None:
            return 404, messages_api.error("not_found_error", f"no message batch {batch_id}")
        if batch["_results"] is None:
            return 400, messages_api.error("invalid_request_error", f"message batch {batch_id} has not ended")
        return 200, batch["_results"]

    def _end(self, batch: dict, origin: str) -> None:
        lines, counts = [], {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for request in self.requests[batch["id"]]:
            result = self._result(request)
            counts[result["type"]] += 1
            lines.append(json.dumps({"custom_id": request["custom_id"], "result": result}))
        batch.update(
            processing_status="ended",
            request_counts=counts,
            ended_at=_stamp(datetime.now(UTC)),
            results_url=f"{origin}/v1/messages/batches/{batch['id']}/results",
            _results=("\n".join(lines) + "\n").encode(),
        )

    def _result(self, request: dict) -> dict:
        if self.config.expire:
            return {"type": "expired"}
        custom_id = request["custom_id"]
        if int(hashlib.sha256(custom_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < self.config.fail_rate:
            return {"type": "errored", "error": messages_api.error("api_error", "injected batch request failure")}
        return {"type": "succeeded", "message": self.answer(request["params"])}


def _invalid(body: Any) -> str | None:
    """Why the API would refuse this batch's body, else None."""
    requests = body.get("requests") if isinstance(body, dict) else None
    if not isinstance(requests, list) or not 1 <= len(requests) <= MAX_REQUESTS:
        return f"requests: a list of 1 to {MAX_REQUESTS:,} requests is required"
    seen: set[str] = set()
    for i, request in enumerate(requests):
        custom_id = request.get("custom_id") if isinstance(request, dict) else None
        if not isinstance(custom_id, str) or not CUSTOM_ID.match(custom_id) or custom_id in seen:
            return f"requests.{i}.custom_id: must match ^[a-zA-Z0-9_-]{{1,64}}$ and be unique"
        seen.add(custom_id)
        refused = messages_api.refusal(request.get("params"), {b"anthropic-version": b"-"}, None)
        if refused:
            return f"requests.{i}.params: {refused[1]['error']['message']}"
    return None


def _shared_block_cached(params: dict) -> bool:
    """Whether the prompt's first block, the one its calls share (the rubric as `system`, or
    text-first the fenced text), carries a cache_control breakpoint."""
    system = params.get("system")
    first = system[0] if isinstance(system, list) and system else None
    if first is None and params.get("messages"):
        content = params["messages"][0].get("content")
        first = content[0] if isinstance(content, list) and content else None
    return isinstance(first, dict) and bool(first.get("cache_control"))


def _stamp(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _public(batch: dict) -> dict:
    return {k: v for k, v in batch.items() if not k.startswith("_")}
