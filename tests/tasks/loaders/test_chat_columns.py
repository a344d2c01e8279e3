"""A chat JSONL file ingested by DuckDB (warehouse/chat_files.py) gives the files the row-by-row path
gives (tasks/loaders/transcripts.py), and a file that path would read differently goes that way (#51)."""

import json

import pyarrow.parquet as pq

from rubricflow.api_frames import table_of
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
    details = {  # OpenRouter's reasoning, as verifiers sends a provider's signed thinking
        **record,
        "id": "details",
        "messages": [
            {"role": "assistant", "content": "4", "reasoning_details": [{"type": "reasoning.text", "text": "2+2"}]}
        ],
    }
    reasoned = {**record, "id": "reasoned", "messages": [{"role": "assistant", "content": "4", "reasoning": "2+2"}]}
    others = [json.dumps(o) for o in (named, truth, flagged, refused, thought, spoken, spaced_name, details, reasoned)]
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


def api_and_file(tmp_path, lines):
    """The texts of the same records ingested from a JSONL file (DuckDB's path where it takes the
    file) and as Python dicts (`rf.Warehouse.ingest`'s path: `table_of`, its Parquet, the ingest)."""
    tmp_path.mkdir(exist_ok=True)
    source = tmp_path / "chats.jsonl"
    source.write_text("\n".join(lines) + "\n")
    data = tmp_path / "source.parquet"
    pq.write_table(table_of([json.loads(line) for line in lines]), data)
    ingest_corpus(source, tmp_path / "file")
    ingest_corpus(data, tmp_path / "api")
    columns = ["text_id", "text", "sha256", "metadata"]
    return source, rows(tmp_path / "file", "texts", columns), rows(tmp_path / "api", "texts", columns)


def test_a_key_given_twice_reads_as_pythons_json_reads_it_whichever_path(tmp_path):
    """DuckDB's reader kept a key's first value, Python's json (the row-by-row path, data handed to the
    API) its last: the same line was judged on "first" from a .jsonl file, on "last" from dicts (or a
    .jsonl.gz), under another text hash. The last wins on both paths, as Python's json has it."""
    call = '{"id":"c1","id":"c2","function":{"name":"first","name":"last","arguments":"{}","arguments":"{\\"a\\":2}"}}'
    lines = [
        '{"id":"content","messages":[{"role":"user","content":"first","content":"last"}]}',
        '{"id":"role","messages":[{"role":"system","role":"user","content":"x"}]}',
        '{"id":"first","id":"last","messages":[{"role":"user","content":"x"}]}',
        '{"id":"messages","messages":[{"role":"user","content":"first"}],"messages":[{"role":"user","content":"y"}]}',
        '{"id":"call","messages":[{"role":"assistant","content":"","tool_calls":[' + call + "]},"
        '{"role":"tool","tool_call_id":"c1","tool_call_id":"c2","content":"r","is_error":true,"is_error":false}]}',
    ]
    source, from_file, from_api = api_and_file(tmp_path / "lines", lines)
    assert from_file == from_api
    assert normalise_chat_jsonl(source, tmp_path, 1_000_000) is None  # left to the row-by-row path
    texts = {r["text_id"]: r["text"] for r in from_file}
    assert texts["content"] == "[M0] user: last" and texts["role"] == "[M0] user: x" and "last" in texts
    assert texts["messages"] == "[M0] user: y"
    assert texts["call"].splitlines()[1:] == ['  -> call last({"a":2}) #c2', "[M1] tool (result of last #c2): r"]
    extra = '{"id":"extra","k":1,"k":2,"messages":[{"role":"user","content":"x"}]}'  # DuckDB kept both in metadata
    source, from_file, from_api = api_and_file(tmp_path / "extra", [extra])
    assert from_file == from_api and from_file[0]["metadata"] == '{"k":2}'
    assert normalise_chat_jsonl(source, tmp_path, 1_000_000) is None


def test_numbers_read_alike_whichever_path(tmp_path):
    """DuckDB wrote an id 1e20 as "100000000000000000000.0" and 1e-05 as "0.00001" where Python writes
    "1e+20" and "1e-05" (another text_id), a content 1e400 as "1e400" where Python reads Infinity, and a
    schema's 1e20 in full (another tools body): such a line goes the row-by-row way. Numbers both write
    alike (1, 1.0, 0.1, -0.0, 2**53 + 1), and any inside a string, keep a file on DuckDB's path."""
    alike = [
        {"id": f"n{k}", "messages": [{"role": "user", "content": c}, {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "function": {"name": "f", "arguments": '{"n": 1e20, "m": 1e-05, "a": 1, "a": 2}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": '{"score": 1e-05, "big": 1e400}'}]}
        for k, c in enumerate((1, 1.0, 0.1, -0.0, 2**53 + 1))
    ]  # fmt: skip
    alike_lines = [json.dumps(r) for r in alike]
    source, from_file, from_api = api_and_file(tmp_path / "alike", alike_lines)
    assert normalise_chat_jsonl(source, tmp_path / "alike", 1_000_000) is not None
    assert from_file == from_api
    firsts = {r["text_id"]: r["text"].splitlines()[0] for r in from_file}
    assert firsts == {f"n{k}": f"[M0] user: {c}" for k, c in enumerate(("1", "1.0", "0.1", "-0.0", "9007199254740993"))}
    assert from_file[0]["text"].splitlines()[2] == '  -> call f({"n": 1e20, "m": 1e-05, "a": 1, "a": 2}) #c1'
    tools = '[{"type":"function","function":{"name":"f","parameters":{"minimum":1e-05,"maximum":1e20}}}]'
    other = {
        "1e+20": '{"id":1e20,"messages":[{"role":"user","content":"a"}]}',
        "1e-05": '{"id":1e-05,"messages":[{"role":"user","content":"b"}]}',
        "1.2345678901234568e+16": '{"id":12345678901234567.0,"messages":[{"role":"user","content":"c"}]}',
        "inf": '{"id":"inf","messages":[{"role":"user","content":1e400}]}',
        "meta": '{"id":"meta","messages":[{"role":"user","content":"d"}],"extra":{"big":1e20}}',
        "tools": '{"id":"tools","tools":' + tools + ',"messages":[{"role":"user","content":"e"}]}',
    }
    for text_id, line in other.items():
        folder = tmp_path / text_id
        _, from_file, from_api = api_and_file(folder, [line])
        assert from_file == from_api and from_file[0]["text_id"] == text_id, line
        assert rows(folder / "file", "bodies") == rows(folder / "api", "bodies"), line  # the tools body too
        source.write_text("\n".join([*alike_lines, line]) + "\n")
        assert normalise_chat_jsonl(source, tmp_path / "alike", 1_000_000) is None, line
    assert from_api[0]["text"] == "[M0] user: e"
    _, from_file, _ = api_and_file(tmp_path / "inf-text", [other["inf"]])
    assert from_file[0]["text"] == "[M0] user: Infinity"
