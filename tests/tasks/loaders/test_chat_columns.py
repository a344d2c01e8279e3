"""A chat JSONL file ingested by DuckDB (warehouse/chat_files.py) gives the files the row-by-row path
gives (tasks/loaders/transcripts.py), and a file that path would read differently goes that way (#51)."""

import json

import pyarrow.parquet as pq

from rubricflow.tasks.loaders.ingest import ingest_corpus
from rubricflow.warehouse.chat_files import normalise_chat_jsonl
from tests.conftest import ROOT

CHATS = ROOT / "tests" / "data" / "transcripts" / "agent_chats.jsonl"
EXAMPLE = ROOT / "examples" / "agent_chats.jsonl"


def rows(folder, name, columns=None):
    table = pq.read_table(folder / f"{name}.parquet", columns=columns)
    return sorted(table.to_pylist(), key=lambda r: json.dumps(r, sort_keys=True, default=str))


def both_ways(tmp_path, source):
    """(DuckDB's folder, the row-by-row path's): `limit` sends a file the row-by-row way."""
    fast, slow = tmp_path / "fast", tmp_path / "slow"
    fast.mkdir()
    assert normalise_chat_jsonl(source, fast, 1_000_000) is not None
    ingest_corpus(source, slow, limit=10**9)
    return fast, slow


def test_both_paths_write_the_same_transcripts(tmp_path):
    source = tmp_path / "chats.jsonl"
    lines = CHATS.read_text().splitlines() + EXAMPLE.read_text().splitlines()
    extra = json.loads(lines[0]) | {"id": "with-extras", "customer": {"tier": "gold"}, "genre": "support"}
    extra["messages"][1] = {**extra["messages"][1], "name": "ana", "timestamp": "2026-01-01T00:00:00Z"}
    # a tool call whose id is an object (the row-by-row path spaced its JSON text, DuckDB does not)
    odd_id = {"id": "object-id", "messages": [
        {"role": "assistant", "content": "x", "tool_calls": [{"id": {"a": 1, "b": [1, 2]}, "function": {"name": "f"}}]},
        {"role": "tool", "tool_call_id": {"a": 1, "b": [1, 2]}, "content": "r"},
    ]}  # fmt: skip
    # a failed result, and a message flagged with no call to answer: the judge is told of each failure
    failed = {"id": "failed", "messages": [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "function": {"name": "book", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "503 Service Unavailable", "is_error": True},
        {"role": "tool", "content": "no such tool", "error": "unknown tool"},
        {"role": "tool", "tool_call_id": "c1", "content": "ok", "is_error": False},
    ]}  # fmt: skip
    # read alike both ways: an error flag as text in any case, an empty call id, an object id, a zero timestamp
    alike = [
        {"id": "flags", "messages": [
            {"role": "tool", "tool_call_id": "c1", "content": "a", "error": "False"},
            {"role": "tool", "tool_call_id": "c1", "content": "b", "error": " FALSE "},
            {"role": "tool", "tool_call_id": "c1", "content": "c", "is_error": 0.0},
            {"role": "tool", "tool_call_id": "c1", "content": "d", "error": "0.0"},
            {"role": "tool", "tool_call_id": "c1", "content": "e", "error": "false\n"},
            {"role": "tool", "tool_call_id": "c1", "content": "f", "error": "\tFalse\r\n"},
        ]},
        {"id": "empty-id", "messages": [
            {"role": "assistant", "content": "", "tool_calls": [{"id": "", "function": {"name": "f", "arguments": ""}}]},
            {"role": "tool", "tool_call_id": "", "content": "r", "timestamp": 0},
            {"role": "user", "content": "u", "timestamp": "", "created_at": "2024-01-01"},
        ]},
        {"id": {"run": 1, "k": "a"}, "messages": [{"role": "user", "content": "object id"}]},
        # a tool whose parameters are named content and arguments: the file went row by row whole
        {"id": "writer", "tools": [{"type": "function", "function": {"name": "write", "parameters": {
            "type": "object", "properties": {"content": {"type": "string"}, "arguments": {"type": "object"}}}}}],
         "messages": [{"role": "user", "content": "Write it."}]},
    ]  # fmt: skip
    records = [*lines, json.dumps(extra, ensure_ascii=False), json.dumps(odd_id), json.dumps(failed)]
    records += [json.dumps(r) for r in alike]
    source.write_text("\n".join(records) + "\n")
    fast, slow = both_ways(tmp_path, source)
    text_columns = ["text_id", "text", "sha256", "genre", "metadata"]
    assert rows(fast, "texts", text_columns) == rows(slow, "texts", text_columns)
    [rendered] = [r["text"] for r in rows(fast, "texts", text_columns) if r["text_id"] == "failed"]
    assert rendered.splitlines()[2:] == [
        "[M1] tool (result of book #c1, failed): 503 Service Unavailable",
        "[M2] tool (failed): no such tool",
        "[M3] tool (result of book #c1): ok",
    ]
    for name in ("messages", "bodies", "transcripts"):
        assert rows(fast, name) == rows(slow, name), name


def test_a_file_the_columns_would_read_differently_is_left_to_the_row_by_row_path(tmp_path):
    record = json.loads(CHATS.read_text().splitlines()[0])
    parts = {**record, "id": "parts", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    bad_role = {**record, "id": "bad", "messages": [{"role": "robot", "content": "beep"}]}
    spaced = json.dumps(parts, separators=(", ", " : "))  # JSON's space before a colon: parts all the same
    named = {**record, "id": "named", "messages": [{"role": "user", "content": "hi", "name": 123}]}
    truth = {**record, "id": True}
    flagged = {**record, "id": "flagged", "messages": [{"role": "tool", "content": "x", "is_error": "false"}]}
    refused = {**record, "id": "refused", "messages": [{"role": "assistant", "content": None, "refusal": "No."}]}
    # words outside `content`, and a call's namespace: only the row-by-row path reads them
    thought = {
        **record,
        "id": "thought",
        "messages": [{"role": "assistant", "content": "4", "reasoning_content": "2+2"}],
    }
    spoken = {
        **record,
        "id": "spoken",
        "messages": [{"role": "assistant", "content": None, "audio": {"transcript": "Hi"}}],
    }
    call = {"id": "c", "function": {"name": "shell", "namespace": "box", "arguments": "{}"}}
    spaced_name = {**record, "id": "ns", "messages": [{"role": "assistant", "content": "", "tool_calls": [call]}]}
    others = [json.dumps(o) for o in (named, truth, flagged, refused, thought, spoken, spaced_name)]
    for number, odd in enumerate((json.dumps(parts), json.dumps(bad_role), spaced, *others, json.dumps(record))):
        source = tmp_path / f"odd{number}.jsonl"  # the last: a duplicated id
        source.write_text(json.dumps(record) + "\n" + odd + "\n")
        assert normalise_chat_jsonl(source, tmp_path, 1_000_000) is None
        assert not (tmp_path / "messages.parquet").exists()
    report = ingest_corpus(tmp_path / "odd1.jsonl", tmp_path / "corpus")
    assert (report.rows_ok, report.rows_quarantined) == (1, 1)  # the row-by-row path quarantined it, by name


def test_ingest_takes_the_columnar_path_for_a_chat_file(tmp_path):
    report = ingest_corpus(CHATS, tmp_path / "corpus")
    assert report.transcripts == 2 and report.messages == sum(
        len(json.loads(line)["messages"]) for line in CHATS.read_text().splitlines()
    )
    assert pq.read_table(tmp_path / "corpus" / "texts.parquet").column("row").null_count == 2  # DuckDB's rows
    assert (tmp_path / "corpus" / "quarantine.jsonl").read_text() == ""
