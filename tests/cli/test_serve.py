"""`rubricflow serve` says what each night did: a real serve process against a Prefect server, a
night run from its deployment by Prefect's runner, and exactly one line for it on serve's stdout."""

import os
import queue
import subprocess
import threading
import time

from prefect.client.orchestration import get_client

from rubricflow.cli.flow_start import start_flows
from rubricflow.tasks.runtime.processes import stop
from tests.conftest import EXE, write_corpus


def _lines(stream) -> queue.Queue:
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in stream], daemon=True).start()
    return lines


def _next_line(lines: queue.Queue, wanted: str, timeout_s: float) -> tuple[str, list[str]]:
    seen, deadline = [], time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        seen.append(line)
        if wanted in line:
            return line, seen
    raise AssertionError(f"no line with {wanted!r} within {timeout_s} s; serve printed: {seen}")


def test_serve_prints_one_line_per_night(tmp_path, thread_judge_server):
    start_flows()  # the shared Prefect server: its URL and secret reach the serve process by the environment
    server = thread_judge_server()
    source = write_corpus(tmp_path / "corpus.jsonl", 6)
    env = os.environ | {"PREFECT_RUNNER_POLL_FREQUENCY": "1", "RUBRICFLOW_SERVE_POLL_S": "0.5"}
    command = [EXE, "serve", "--source", str(source), "-c", "served", "-r", "llm-slop", "--canary", "0"]
    command += ["--max-canary-drift", "0.25"]
    command += ["--base-url", server.base_url, "-w", str(tmp_path / "w.duckdb")]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        lines = _lines(proc.stdout)
        _next_line(lines, "serving nightly scoring of served", 120)
        with get_client(sync_client=True) as client:
            deadline = time.monotonic() + 120
            while True:  # the runner registers its deployment once it starts
                try:
                    deployment = client.read_deployment_by_name("nightly-scoring/nightly-served")
                    break
                except Exception:
                    assert time.monotonic() < deadline, "serve never registered its deployment"
                    time.sleep(0.5)
            assert deployment.parameters["max_canary_drift"] == 0.25  # the drift event's threshold, from the CLI
            client.create_flow_run_from_deployment(deployment.id, parameters={"night": "2026-11-20"})
        line, _ = _next_line(lines, "night 2026-11-20 of served", 120)
        assert "Completed: night 2026-11-20 of served: llm-slop " in line and "coverage 100.0%, 6/6 texts" in line
        time.sleep(1.5)  # three more polls: the night is not said twice
        later = [lines.get_nowait() for _ in range(lines.qsize())]
        assert not [x for x in later if "2026-11-20" in x], later
    finally:
        stop(proc)
