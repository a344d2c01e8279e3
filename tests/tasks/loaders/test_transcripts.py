"""Transcripts (a `messages` list per row) ingest to a messages table keyed by (transcript, position),
bodies stored once by hash, and one rendered text per transcript (#51 item 1)."""

import json

import duckdb
import pyarrow.parquet as pq
import pytest

from rubricflow.api_frames import check_columns, table_of
from rubricflow.tasks.loaders.ingest import ingest_corpus
from rubricflow.warehouse import db, steps
from tests.conftest import ROOT

CHATS = ROOT / "tests" / "data" / "transcripts" / "agent_chats.jsonl"


def load(tmp_path, source, corpus="c"):
    report = ingest_corpus(source, tmp_path / "corpora" / corpus)
    warehouse = tmp_path / "rf.duckdb"
    with db.writer(warehouse) as con:
        steps.load_corpus(con, corpus, str(source), report.parquet, report.rows_ok, report.rows_quarantined)
    return report, duckdb.connect(str(warehouse), read_only=True)


def test_every_message_is_a_row_and_bodies_are_stored_once(tmp_path):
    lines = CHATS.read_text().splitlines()
    in_file = sum(len(json.loads(line)["messages"]) for line in lines)
    report, con = load(tmp_path, CHATS)
    assert report.transcripts == 2 and report.messages == in_file
    assert con.sql("SELECT count(*) FROM messages").fetchall() == [(in_file,)]
    # the shared system prompt and the tool schemas: one body each, however many transcripts repeat them
    assert con.sql("SELECT count(*) FROM message_bodies WHERE body = 'You are a travel agent.'").fetchall() == [(1,)]
    assert con.sql("SELECT count(DISTINCT tools_hash), count(*) FROM transcripts").fetchall() == [(1, 2)]
    assert con.sql(
        "SELECT message_id, role, content FROM messages WHERE transcript_id = 't1' AND position = 3"
    ).fetchall() == [("M3", "tool", "AF123 at 10:00")]


def test_a_tool_call_is_linked_to_its_result(tmp_path):
    _, con = load(tmp_path, CHATS)
    assert con.sql(
        "SELECT transcript_id, position, tool_name, arguments::JSON->>'to', result_position, result FROM tool_calls"
    ).fetchall() == [("t1", 2, "search_flights", "Paris", 3, "AF123 at 10:00")]


def test_the_transcript_is_a_text_rendered_with_message_ids(tmp_path):
    _, con = load(tmp_path, CHATS)
    [(text,)] = con.sql("SELECT text FROM texts WHERE text_id = 't1'").fetchall()
    assert text.splitlines() == [
        "[M0] system: You are a travel agent.",
        "[M1] user: Book me a flight to Paris",
        "[M2] assistant: ",
        '  -> call search_flights({"to": "Paris"}) #c1',
        "[M3] tool (result of search_flights #c1): AF123 at 10:00",
        "[M4] assistant: I found AF123 at 10:00.",
    ]


def test_a_malformed_transcript_is_quarantined_naming_the_message(tmp_path):
    src = tmp_path / "c.jsonl"
    good = {"id": "a", "messages": [{"role": "user", "content": "hi"}]}
    bad = {"id": "b", "messages": [{"role": "user", "content": "hi"}, {"content": "no role"}]}
    src.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    report = ingest_corpus(src, tmp_path / "out")
    assert report.rows_ok == 1 and report.rows_quarantined == 1
    [row] = map(json.loads, report.quarantine.read_text().splitlines())
    assert row["row"] == 2 and row["reason"].startswith("bad transcript: message 1: role None")


def test_a_re_ingest_as_plain_texts_leaves_no_messages(tmp_path):
    load(tmp_path, CHATS)[1].close()
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"id": "x", "text": "just a text"}\n')
    report, con = load(tmp_path, plain)
    assert report.transcripts == 0 and not (report.parquet.parent / "messages.parquet").exists()
    assert con.sql("SELECT count(*) FROM messages").fetchall() == [(0,)]


@pytest.mark.parametrize("kind", ["records", "pandas"])
def test_a_dataframe_with_a_messages_column_is_a_transcript_corpus(tmp_path, kind):
    rows = [json.loads(line) for line in CHATS.read_text().splitlines()]
    data = rows if kind == "records" else __import__("pandas").DataFrame(rows)
    table = table_of(data)
    assert check_columns(table, None, None, {}) is None  # no text column: the messages are the text
    source = tmp_path / "source.parquet"
    pq.write_table(table, source)
    report, con = load(tmp_path, source)
    assert report.transcripts == 2
    assert con.sql("SELECT count(*) FROM messages").fetchall() == [(8,)]


# The Anthropic Messages API's tool round trip, as anthropics/anthropic-sdk-typescript examples/tools.ts
# (@ 43e0dc14) sends it back: the user's turn, the assistant's content blocks (a text and a tool_use block,
# shaped as the API returns them), and a user turn of a tool_result block. Once read as "[tool_use]" and
# "[tool_result]": the judge saw neither the call nor its result.
ANTHROPIC = [
    {"role": "user", "content": "What is the weather in SF?"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look that up."},
            {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"location": "San Francisco, CA"}},
        ],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "The weather is 73f"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "It is 73F in San Francisco."}]},
]


def test_anthropic_tool_use_and_tool_result_blocks_are_calls_and_results(tmp_path):
    src = tmp_path / "claude.jsonl"
    failed = {"type": "tool_result", "tool_use_id": "toolu_02", "content": [{"type": "text", "text": "timeout"}]}
    retry = [
        *ANTHROPIC[:1],
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_02", "name": "get_weather", "input": {}}]},
        {
            "role": "user",
            "content": [{**failed, "is_error": True}, {"type": "text", "text": "Try once more?"}],
            "timestamp": "T2",
            "name": "ana",
        },
    ]
    wrong = [{"role": "user", "content": [{"type": "tool_use", "id": "x", "name": "get_weather", "input": {}}]}]
    # a nameless call after a turn of two results: named by its place in the row, not after the split (5)
    two = {"role": "user", "content": [{**failed, "tool_use_id": "toolu_01"}, failed]}
    nameless = [*ANTHROPIC[:2], two, {"role": "assistant", "content": [{"type": "tool_use", "id": "t3", "input": {}}]}]
    src.write_text(
        "\n".join(
            json.dumps({"id": i, "messages": m})
            for i, m in (("a", ANTHROPIC), ("b", retry), ("c", wrong), ("d", nameless))
        )
    )
    report, con = load(tmp_path, src)
    assert report.rows_ok == 2 and report.rows_quarantined == 2
    reasons = [json.loads(line)["reason"] for line in report.quarantine.read_text().splitlines()]
    assert reasons == [
        "bad transcript: message 0: tool_use blocks in a user message",
        "bad transcript: message 3: a tool_use block without a name",
    ]
    [(text,)] = con.sql("SELECT text FROM texts WHERE text_id = 'a'").fetchall()
    assert text.splitlines() == [
        "[M0] user: What is the weather in SF?",
        "[M1] assistant: Let me look that up.",
        '  -> call get_weather({"location": "San Francisco, CA"}) #toolu_01',
        "[M2] tool (result of get_weather #toolu_01): The weather is 73f",
        "[M3] assistant: It is 73F in San Francisco.",
    ]
    assert con.sql(
        "SELECT transcript_id, tool_name, arguments::JSON->>'location', result, result_is_error FROM tool_calls ORDER BY 1"
    ).fetchall() == [
        ("a", "get_weather", "San Francisco, CA", "The weather is 73f", None),
        ("b", "get_weather", None, "timeout", True),
    ]
    # the results come first in their turn (the API's order), the turn's own text after them
    assert con.sql(  # and the turn's timestamp stays on the result it held
        "SELECT position, role, content, timestamp, name FROM messages WHERE transcript_id = 'b' AND position >= 2"
    ).fetchall() == [(2, "tool", "timeout", "T2", None), (3, "user", "Try once more?", "T2", "ana")]  # a speaker's name


def test_an_error_flag_written_as_text_false_is_no_error(tmp_path):
    """`"is_error": "false"` was stored as a failed result (any non-empty text was true)."""
    from rubricflow.tasks.loaders.transcripts import parse_messages, transcript_of

    flags = ["false", "0", "", "False", "true", "timeout", True, False, None, 1]
    messages = [{"role": "tool", "content": "r", "is_error": f} for f in flags] + [{"role": "tool", "error": "boom"}]
    stored = transcript_of("t", parse_messages(messages)).columns["is_error"]
    assert stored == [None, None, None, None, True, True, True, None, None, True, True]
