"""An answer's body is capped: a server that sends a body past the cap fails the cell with the
reason, final (300 MB bodies were read whole and the run reached ~3.1 GB)."""

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rubricflow.tasks.judging.answer_cap import MAX_ANSWER_BYTES
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.judge import Judge, RetryBudget, judge_all
from rubricflow.tasks.judging.providers import client_for
from rubricflow.tasks.judging.ratelimit import RateLimiter
from tests.tasks.judging.test_judge import BUNDLE, cells


class HugeAnswers(BaseHTTPRequestHandler):
    """A chat completion whose content is 9 MiB, with a Content-Length or chunked (none declared)."""

    chunked = False
    calls = 0

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        type(self).calls += 1
        content = "x" * (MAX_ANSWER_BYTES + 1024 * 1024)
        body = json.dumps(
            {
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ],
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        if self.chunked:
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for i in range(0, len(body), 65536):
                piece = body[i : i + 65536]
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("chunked", [False, True])
def test_an_answer_past_the_cap_fails_its_cell_with_the_reason(chunked):
    handler = type("Huge", (HugeAnswers,), {"chunked": chunked, "calls": 0})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        config = JudgeConfig(base_url=url, timeout_s=10, system_prompt="system")

        async def go():
            client = client_for(None, url, 10)  # the project's one client, as every call builds it
            judge = Judge(BUNDLE, config, client, RateLimiter(max_in_flight=2), RetryBudget(10), "run-1", "c")
            try:
                return await judge_all(judge, cells(2))
            finally:
                await client.close()

        outcomes = asyncio.run(go())
    finally:
        server.shutdown()
    assert len(outcomes) == 2
    for outcome in outcomes:
        row = outcome.completion
        assert row["status"] != "ok" and row["error_kind"] == "deterministic"
        assert "MiB cap on an answer" in row["error"] and row["attempts"] == 1  # final: not sent again
    assert handler.calls == 2
