"""The offline judge server's Batch API (`/v1/files`, `/v1/batches`), enough of OpenAI's for
rubricflow's batch path and its tests: upload a JSONL of chat requests, create a batch, poll it,
download the output. Batches finish after `delay_s`; a share of lines can fail, or a whole batch
expire, so the client's fallback to online calls is exercised."""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class BatchConfig:
    delay_s: float = 0.0  # how long a batch stays in_progress
    fail_rate: float = 0.0  # share of lines answered with an error (chosen by custom_id)
    expire: bool = False  # batches end `expired` with no output


@dataclass
class BatchStore:
    config: BatchConfig
    answer: Callable[[dict], dict]  # one chat request body -> its completion
    refuse: Callable[[dict], dict | None] = lambda body: None  # a body's 400 error (a reasoning model's), or None
    files: dict[str, bytes] = field(default_factory=dict)
    uploads: dict[str, dict] = field(default_factory=dict)  # an uploaded file's id -> its file object
    batches: dict[str, dict] = field(default_factory=dict)
    created: int = 0  # batches created (a resumed client must not create them again)

    def upload(self, content_type: str, body: bytes) -> tuple[int, dict]:
        message = email.parser.BytesParser(policy=email.policy.default).parsebytes(
            b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body
        )
        parts = {p.get_param("name", header="content-disposition"): p for p in message.iter_parts()}
        if "file" not in parts:
            return 400, _error("multipart field `file` is missing")
        data = bytes(parts["file"].get_payload(decode=True))
        file_id = f"file-{uuid.uuid4().hex[:24]}"
        self.files[file_id] = data
        self.uploads[file_id] = {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": parts["file"].get_filename() or "batch.jsonl",
            "purpose": "batch",
        }
        return 200, self.uploads[file_id]

    def file(self, file_id: str) -> tuple[int, dict]:
        if file_id not in self.uploads:
            return 404, _error(f"no file {file_id}")
        return 200, self.uploads[file_id]

    def listed(self) -> tuple[int, dict]:
        """Every batch, newest first, on one page."""
        data = [self._public(b) for b in reversed(self.batches.values())]
        first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
        return 200, {"object": "list", "data": data, "first_id": first, "last_id": last, "has_more": False}

    def content(self, file_id: str) -> tuple[int, bytes | dict]:
        if file_id not in self.files:
            return 404, _error(f"no file {file_id}")
        return 200, self.files[file_id]

    def create(self, body: dict) -> tuple[int, dict]:
        if body.get("input_file_id") not in self.files:
            return 400, _error(f"no input file {body.get('input_file_id')!r}")
        self.created += 1
        batch_id = f"batch_{uuid.uuid4().hex[:24]}"
        now = int(time.time())
        self.batches[batch_id] = {
            "id": batch_id,
            "object": "batch",
            "endpoint": body.get("endpoint", "/v1/chat/completions"),
            "input_file_id": body["input_file_id"],
            "completion_window": body.get("completion_window", "24h"),
            "status": "in_progress",
            "created_at": now,
            "in_progress_at": now,
            "output_file_id": None,
            "error_file_id": None,
            "errors": None,
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
            "_done_at": time.monotonic() + self.config.delay_s,
        }
        return 200, self._public(self.batches[batch_id])

    def retrieve(self, batch_id: str) -> tuple[int, dict]:
        batch = self.batches.get(batch_id)
        if batch is None:
            return 404, _error(f"no batch {batch_id}")
        if batch["status"] == "in_progress" and time.monotonic() >= batch["_done_at"]:
            self._finish(batch)
        return 200, self._public(batch)

    def _finish(self, batch: dict) -> None:
        if self.config.expire:
            batch.update(status="expired", expired_at=int(time.time()))
            return
        out, errors, ok = [], [], 0
        for line in self.files[batch["input_file_id"]].decode().splitlines():
            if not line.strip():
                continue
            request = json.loads(line)
            custom_id = request["custom_id"]
            row = {"id": f"batch_req_{uuid.uuid4().hex[:16]}", "custom_id": custom_id}
            if int(hashlib.sha256(custom_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < self.config.fail_rate:
                errors.append(
                    json.dumps(
                        {
                            **row,
                            "response": None,
                            "error": {"code": "server_error", "message": "injected batch line failure"},
                        }
                    )
                )
                continue
            refused = self.refuse(request["body"])
            status, answer = (400, refused) if refused else (200, self.answer(request["body"]))
            out.append(
                json.dumps(
                    {
                        **row,
                        "response": {"status_code": status, "request_id": row["id"], "body": answer},
                        "error": None,
                    }
                )
            )
            ok += not refused  # OpenAI counts a line answered with a 400 as completed too; kept simple here
        batch["output_file_id"] = self._store("\n".join(out))
        batch["error_file_id"] = self._store("\n".join(errors)) if errors else None
        batch["request_counts"] = {"total": ok + len(errors), "completed": ok, "failed": len(errors)}
        batch.update(status="completed", completed_at=int(time.time()))

    def _store(self, text: str) -> str:
        file_id = f"file-{uuid.uuid4().hex[:24]}"
        self.files[file_id] = (text + "\n").encode() if text else b""
        return file_id

    @staticmethod
    def _public(batch: dict) -> dict:
        return {k: v for k, v in batch.items() if not k.startswith("_")}


def _error(message: str) -> dict:
    return {"error": {"message": message, "type": "invalid_request_error", "code": "invalid_request_error"}}
