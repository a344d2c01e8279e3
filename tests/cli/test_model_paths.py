"""The fault matrix on every model path a command takes (#21: N2, N5, F30): judging (`score`),
drafting (`rubric generate`), review and goldens (`rubric review`, `rubric test`) against an
endpoint that echoes the request's headers (the API key among them) or answers a proxy's HTML page
with status 200. Reflection shares drafting's call (tests/tasks/judging/test_chat.py). The planted key
reaches no terminal output, no file and no Prefect record; no command ends in a traceback."""

import json
import os
import subprocess
import urllib.request

import pytest

from tests.conftest import EXE, ThreadServer, write_corpus

KEY = "sk-canary-model-paths-0123456789abcdef"


@pytest.fixture(params=["echo_headers", "echo_in_answer", "html_page"])
def hostile(request):
    server = ThreadServer(fault_rate=1, faults=(request.param,), fault_attempts=99)
    yield request.param, server
    server.stop()


def run(cwd, *args):
    env = {**os.environ, "OPENAI_API_KEY": KEY, "COLUMNS": "200"}
    return subprocess.run([EXE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def never_shown(done: subprocess.CompletedProcess, *folders) -> None:
    said = done.stdout + done.stderr
    assert KEY not in said and "Traceback" not in said, said[-3000:]
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file():
                assert KEY.encode() not in path.read_bytes(), path


def prefect_records_hold_no_key(cwd) -> None:
    """The shared Prefect server's flow runs and logs, read through its API with the owner's secret."""
    from rubricflow.tasks.runtime import prefect_server

    state = prefect_server.current()
    if state is None:
        return
    auth = "Basic " + __import__("base64").b64encode(prefect_server.auth_string().encode()).decode()
    for path in ("/flow_runs/filter", "/logs/filter", "/artifacts/filter"):
        request = urllib.request.Request(state.api_url + path, data=b"{}", method="POST")
        request.add_header("Authorization", auth)
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as response:
            assert KEY not in json.dumps(json.load(response)), path


def test_judging(tmp_path, hostile):
    fault, server = hostile
    write_corpus(tmp_path / "c.jsonl", 4)
    assert run(tmp_path, "ingest", "c.jsonl", "-c", "c", "-w", "w.duckdb").returncode == 0
    done = run(tmp_path, "score", "-c", "c", "-r", "writing-quality", "-w", "w.duckdb", "--base-url", server.base_url)
    assert done.returncode in (0, 1, 2)
    if fault == "html_page":  # never a "completed" run at 0% coverage (F30)
        assert done.returncode == 2 and "no usable answer" in " ".join(done.stderr.split())
    never_shown(done, tmp_path)
    prefect_records_hold_no_key(tmp_path)


def test_drafting(tmp_path, hostile):
    _, server = hostile
    (tmp_path / "policy.md").write_text("# Policy\n- Every number cites its source.\n- Replies are polite.\n")
    done = run(tmp_path, "rubric", "generate", "policy.md", "--id", "policy", "--base-url", server.base_url)
    assert done.returncode in (0, 1, 2)
    never_shown(done, tmp_path)


def test_review_and_goldens(tmp_path, hostile):
    """`rubric review` and `rubric test` share one call (goldens.judge_text): review stands for both."""
    _, server = hostile
    # one try per call: retries share the judging path's scrubbing (test_judging retries)
    done = run(tmp_path, "rubric", "review", "writing-quality", "--base-url", server.base_url, "--max-attempts", "1")
    assert done.returncode in (0, 1, 2)
    never_shown(done, tmp_path)
