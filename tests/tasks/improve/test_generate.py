"""`rubric generate`'s draft keeps the user's id whatever id the model wrote (N7), over real HTTP to a
small OpenAI-compatible server on 127.0.0.1 that always drafts a rubric named as it likes."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rubricflow.tasks.improve.generate import draft
from rubricflow.tasks.judging.config import JudgeConfig

DRAFT = {
    "metadata": {"id": "the-models-own-choice", "version": "1.0.0"},
    "goal": "Replies cite their sources.",
    "criteria": [{"id": "cites", "description": "Every number names its source.", "scale": {"kind": "binary"}}],
}


class Drafter(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (the stdlib's name)
        self.rfile.read(int(self.headers["content-length"]))
        body = json.dumps(
            {
                "id": "c1",
                "object": "chat.completion",
                "created": 0,
                "model": "drafter",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": json.dumps(DRAFT)},
                    }
                ],
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def drafter():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Drafter)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_the_draft_keeps_the_users_id_not_the_models(tmp_path, drafter):
    source = tmp_path / "house-style.md"
    source.write_text("- Every number cites its source.\n")
    config = JudgeConfig(base_url=drafter, model="drafter")
    assert draft(config, source, "house").bundle.rubric.metadata.id == "house"
    assert draft(config, source).bundle.rubric.metadata.id == "house-style"  # the source's name by default
