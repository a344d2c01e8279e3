"""`rubric generate --from-paper`: a PaperBench tree from a Markdown paper that passes the seed's JSON
Schema, every leaf's quote checked against the paper (flagged when absent), and more than 20% flagged
leaves asking again, a bounded number of times; over real HTTP (the offline judge, and a scripted
server that misquotes)."""

import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jsonschema
import pytest

from rubricflow.tasks.improve.paper_rubric import SCHEMA, generate, leaves
from rubricflow.tasks.judging.config import JudgeConfig
from tests.conftest import EXE

PAPER = """# Sparse attention for long documents

## Method
We replace dense attention with a block-sparse pattern of width 64. The model is trained for 100k steps with AdamW.

## Evaluation
We report perplexity on the PG-19 test split. Our model reaches 33.2 perplexity against 35.1 for the dense baseline.
"""
QUOTES = [
    "We replace dense attention with a block-sparse pattern of width 64.",
    "We report perplexity on the PG-19 test split.",
]


def run(cwd, *args):
    return subprocess.run(
        [EXE, *args], cwd=cwd, capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"}
    )


def test_a_paper_gives_a_valid_tree_with_every_quote_in_the_paper(tmp_path, thread_judge_server):
    server = thread_judge_server()
    (tmp_path / "paper.md").write_text(PAPER)
    done = run(tmp_path, "rubric", "generate", "--from-paper", "paper.md", "--base-url", server.base_url)
    assert done.returncode == 0, done.stderr
    assert "wrote paper.rubric.json: 4 leaves, 0 flagged" in done.stdout and "1 round(s)" in done.stdout
    tree = json.loads((tmp_path / "paper.rubric.json").read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(tree)
    assert all(
        " ".join(leaf["rationale_from_paper"]["quote"].split()) in " ".join(PAPER.split())
        for leaf in leaves(tree["rubric"])
    )
    audit = run(
        tmp_path,
        "rubric",
        "generate",
        "--from-paper",
        "paper.md",
        "--venue",
        "paper_audit",
        "-o",
        "a.json",
        "--base-url",
        server.base_url,
    )
    assert audit.returncode == 0, audit.stderr
    axes = [n["requirements"] for n in json.loads((tmp_path / "a.json").read_text())["rubric"]["sub_tasks"]]
    assert axes[0] == "The paper documents its artifact availability."
    again = run(tmp_path, "rubric", "generate", "--from-paper", "paper.md", "--base-url", server.base_url)
    assert again.returncode == 2 and "exists" in again.stderr
    bad = run(tmp_path, "rubric", "generate", "--from-paper", "paper.md", "--venue", "journal", "-o", "b.json")
    assert bad.returncode == 2 and "--venue 'journal'" in bad.stderr


def _leaf(quote):
    return {
        "requirements": "The submission reproduces the claim.",
        "weight": 1,
        "sub_tasks": [],
        "task_category": "Code Development",
        "finegrained_task_category": "Method Implementation",
        "rationale_from_paper": {"section": "Method", "quote": quote},
    }


def scripted(answers):
    """A chat-completions server that answers each request with the next tree of `answers` (the last repeats)."""
    asked = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (the stdlib's name)
            asked.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
            tree = answers[min(len(asked), len(answers)) - 1]
            content = json.dumps(
                {"rubric": {"requirements": "The results are reproduced.", "weight": 1, "sub_tasks": tree}}
            )
            body = json.dumps(
                {
                    "id": "c",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "m",
                    "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
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

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, asked


@pytest.mark.parametrize(
    ("answers", "rounds", "flagged"),
    [
        (
            [[_leaf("We invented this sentence entirely."), _leaf(QUOTES[1])], [_leaf(QUOTES[0]), _leaf(QUOTES[1])]],
            2,
            0,
        ),
        ([[_leaf("A made-up quote, not in the paper."), _leaf(QUOTES[1])]], 3, 1),  # bounded: 3 rounds, kept flagged
    ],
)
def test_more_than_a_fifth_flagged_asks_again_a_bounded_number_of_times(tmp_path, answers, rounds, flagged):
    server, asked = scripted(answers)
    (tmp_path / "paper.md").write_text(PAPER)
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        config = JudgeConfig(base_url=url, model="m", system_prompt="system")  # it counts every request: no probes
        result = generate(config, tmp_path / "paper.md", "agent_benchmark")
    finally:
        server.shutdown()
    assert (result.rounds, result.flagged, len(asked)) == (rounds, flagged, rounds)
    if rounds > 1:
        assert "not in the paper" in asked[1]["messages"][1]["content"]  # the failed quotes are named
    marked = [leaf for leaf in leaves(result.envelope["rubric"]) if "no_paper_evidence" in leaf.get("flags", [])]
    assert len(marked) == flagged
    jsonschema.Draft202012Validator(SCHEMA).validate(result.envelope)
    broken = json.loads(json.dumps(result.envelope))
    broken["rubric"]["sub_tasks"][0]["task_category"] = "Writing"
    assert not jsonschema.Draft202012Validator(SCHEMA).is_valid(broken)  # the closed vocabulary holds
