"""The README's transcript example through the real commands (#51): `rubricflow ingest` of a chat
JSONL puts every message in the `messages` view, and `score` with trajectory checks beside a judged
criterion asks the judge only about the judged one, and a tool_call-scoped criterion once per call."""

import json
import shutil

from tests.conftest import ROOT, rows, run_cli


def test_ingest_and_score_a_chat_jsonl_with_checks(tmp_path, thread_judge_server):
    """~15 s unloaded: one ingest and one score process."""
    for name in ("agent_chats.jsonl", "agent-checks.yaml"):
        shutil.copy(ROOT / "examples" / name, tmp_path / name)
    lines = (tmp_path / "agent_chats.jsonl").read_text().splitlines()
    in_file = sum(len(json.loads(line)["messages"]) for line in lines)
    done = run_cli(tmp_path, "ingest", "agent_chats.jsonl", "--corpus", "c")
    assert done.returncode == 0, done.stderr
    assert rows(tmp_path / "w.duckdb", "SELECT count(*) FROM messages") == [(in_file,)]
    server = thread_judge_server()
    done = run_cli(tmp_path, "score", "-c", "c", "-r", "agent-checks.yaml", "--base-url", server.base_url)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    calls = sum(len(m.get("tool_calls") or []) for line in lines for m in json.loads(line)["messages"])
    # one call per transcript (the `helpful` criterion) and one per tool call (`calls-explained`, scoped)
    assert server.stats()["answered"] == len(lines) + calls
    scores = dict(
        rows(
            tmp_path / "w.duckdb",
            "SELECT text_id || '/' || criterion_id, unit_score FROM criterion_scores "
            "WHERE criterion_id IN ('searched-first', 'no-tool-errors')",
        )
    )
    assert scores == {
        "paris/searched-first": 1.0,
        "oslo/searched-first": 1.0,
        "rome/searched-first": 0.0,  # booked without searching
        "paris/no-tool-errors": 1.0,
        "oslo/no-tool-errors": 1.0,
        "rome/no-tool-errors": 0.0,  # its booking failed
    }
