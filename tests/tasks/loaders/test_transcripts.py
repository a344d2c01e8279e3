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


def test_a_call_answered_twice_shows_its_first_result_and_that_results_own_flag(tmp_path):
    """The first result carries no error flag, a retry's second does: the view shows the first
    result with ITS flag (NULL), not the first flag DuckDB's arg_min finds (the second's True)."""
    src = tmp_path / "twice.jsonl"
    call = {"id": "c1", "type": "function", "function": {"name": "book", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "Book it."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "booked"},
        {"role": "tool", "tool_call_id": "c1", "content": "503", "is_error": True},
    ]
    src.write_text(json.dumps({"id": "t", "messages": messages}) + "\n")
    _, con = load(tmp_path, src)
    assert con.sql("SELECT result_position, result, result_is_error FROM tool_calls").fetchall() == [
        (2, "booked", None)
    ]


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
        "SELECT position, role, content, timestamp, name FROM messages WHERE transcript_id = 'b' AND position >= 2 ORDER BY 1"
    ).fetchall() == [(2, "tool", "timeout", "T2", None), (3, "user", "Try once more?", "T2", "ana")]  # a speaker's name


# An assistant turn with a server tool (web search) and a client tool, the response of
# BerriAI/litellm tests/test_litellm/llms/anthropic/chat/test_anthropic_chat_transformation.py
# (@ d81c008a, "Simulating actual Anthropic API response with web search"), with a thinking block before it.
SERVER_TOOLS = {
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "I should look the weight up.", "signature": "sig"},
        {"type": "server_tool_use", "id": "srvtoolu_01ABC123", "name": "web_search",
         "input": {"query": "average weight african elephant kg"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01ABC123", "content": [
            {"type": "web_search_result", "url": "https://example.com/elephants", "title": "African Elephant Facts",
             "encrypted_content": "encrypted_data_here", "page_age": "2024-01-15",
             "snippet": "Adult African elephants weigh between 4,000-6,000 kg..."}]},
        {"type": "text", "text": "Based on my search, African elephants weigh around 5,000 kg."},
        {"type": "tool_use", "id": "toolu_01XYZ789", "name": "add_numbers", "input": {"a": 5000, "b": 100}},
    ],
}  # fmt: skip


def test_server_tool_blocks_are_calls_and_results_where_they_stand():
    """A server tool's call and result were `[server_tool_use]` and `[web_search_tool_result]`, and a
    thinking block `[thinking]`: the judge saw neither the search, what it found, nor the reasoning."""
    from rubricflow.tasks.loaders.transcripts import parse_messages, transcript_of
    from rubricflow.tasks.reward.rollouts import read_rollout

    errors = {"role": "assistant", "content": [
        {"type": "server_tool_use", "id": "s2", "name": "web_search", "input": {"query": "x"}},
        {"type": "web_search_tool_result", "tool_use_id": "s2",
         "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}},
        {"type": "mcp_tool_use", "id": "m1", "name": "echo", "server_name": "docs", "input": {"q": 1}},
        {"type": "mcp_tool_result", "tool_use_id": "m1", "is_error": False, "content": [{"type": "text", "text": "1"}]},
        {"type": "redacted_thinking", "data": "opaque"},
    ]}  # fmt: skip
    messages = [{"role": "user", "content": "How heavy is an elephant, plus 100?"}, SERVER_TOOLS, errors]
    transcript = transcript_of("t", parse_messages(messages))
    assert transcript.rendering.splitlines() == [
        "[M0] user: How heavy is an elephant, plus 100?",
        "[M1] assistant: [thinking] I should look the weight up.",
        '  -> call web_search({"query": "average weight african elephant kg"}) #srvtoolu_01ABC123',
        "[M2] tool (result of web_search #srvtoolu_01ABC123): African Elephant Facts <https://example.com/elephants>",
        "[M3] assistant: Based on my search, African elephants weigh around 5,000 kg.",
        '  -> call add_numbers({"a": 5000, "b": 100}) #toolu_01XYZ789',
        "[M4] assistant: ",
        '  -> call web_search({"query": "x"}) #s2',
        "[M5] tool (result of web_search #s2, failed): max_uses_exceeded",
        "[M6] assistant: ",
        '  -> call docs.echo({"q": 1}) #m1',
        "[M7] tool (result of docs.echo #m1): 1",
        "[M8] assistant: [redacted_thinking]",
    ]
    # judged as a reply, the turn is its answer, not the thoughts before it
    reply = read_rollout(0, {"completion": [SERVER_TOOLS]}, "last_reply")
    assert reply.text == "Based on my search, African elephants weigh around 5,000 kg."


def test_words_outside_content_are_what_the_judge_reads_of_a_turn(tmp_path):
    """OpenAI's `refusal` (a message field, or a content part), a `reasoning_content`, an audio reply's
    transcript, the Assistants API's text object: the turn was empty, or `[refusal]`, or `[text]`."""
    src = tmp_path / "refused.jsonl"
    refused = [
        {"role": "user", "content": "Help me pick a lock."},
        {"role": "assistant", "content": None, "refusal": "I can't help with that."},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "Nor that."}]},
        {
            "role": "user",
            "content": [
                {"type": "image", "image": "data:image/png;base64,iVBORw0KGgo="},
                {"type": "image", "url": "data:image/png;base64,iVBORw0KGgo="},
            ],
        },
        # words kept outside `content`: a reasoning model's, an audio reply's, the Assistants API's text
        {"role": "assistant", "content": "4", "reasoning_content": "2 and 2 make 4."},
        {"role": "assistant", "content": None, "audio": {"id": "a1", "transcript": "Hello there."}},
        {"role": "assistant", "content": [{"type": "text", "text": {"value": "It is 4.", "annotations": []}}]},
    ]
    src.write_text(json.dumps({"id": "r", "messages": refused}) + "\n")
    report, con = load(tmp_path, src)
    [(text,)] = con.sql("SELECT text FROM texts").fetchall()
    assert text.splitlines()[1:] == [
        "[M1] assistant: [refusal] I can't help with that.",
        "[M2] assistant: [refusal] Nor that.",
        "[M3] user: [image]",  # an image's data, under its type's name or as a LangChain block's url, is no text
        "[image]",
        "[M4] assistant: [reasoning] 2 and 2 make 4.",
        "4",
        "[M5] assistant: Hello there.",
        "[M6] assistant: It is 4.",
    ]


def test_reasoning_is_read_however_its_provider_keeps_it():
    """An outside probe: verifiers sends a provider's signed thinking as `reasoning_details`
    (OpenRouter's), which was not read: the same reasoning judged under one provider, not another."""
    from rubricflow.tasks.loaders.transcripts import message_text

    kept = [
        {"reasoning_content": "2 and 2 make 4."},
        {"reasoning": "2 and 2 make 4."},
        {"reasoning_details": [{"type": "reasoning.text", "text": "2 and 2 make 4."}]},
        {"reasoning_details": [{"type": "reasoning.summary", "summary": "2 and 2 make 4."}]},
        {"reasoning_details": [{"type": "reasoning.encrypted", "data": "gAAA"}, {"type": "reasoning.text", "text": "2 and 2 make 4."}]},
    ]  # fmt: skip
    for fields in kept:
        message = {"role": "assistant", "content": "4", **fields}
        assert message_text(message) == "[reasoning] 2 and 2 make 4.\n4", fields
        assert message_text(message, reasoning=False) == "4"
    assert (
        message_text(
            {"role": "assistant", "content": "4", "reasoning_details": [{"type": "reasoning.encrypted", "data": "x"}]}
        )
        == "4"
    )


@pytest.mark.parametrize("via", ["parquet", "frame"])
def test_a_call_read_from_arrow_keeps_its_own_arguments(tmp_path, via):
    """Arrow holds every row's `input` objects as one struct: each call showed the other calls'
    argument names as nulls, `get_weather({"location": ..., "query": null})`."""
    import pyarrow as pa

    from rubricflow.tasks.loaders.transcripts import unmerged

    ask = {"role": "user", "content": [{"type": "text", "text": "What is the weather in SF?"}]}
    search = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "s1", "name": "search", "input": {"query": "x"}}],
    }
    rows = [{"id": "a", "messages": [ask, *ANTHROPIC[1:]]}, {"id": "b", "messages": [ask, search]}]
    table = pa.Table.from_pylist(rows)
    assert table.to_pylist()[1]["messages"][1]["content"][0]["input"] == {"location": None, "query": "x"}
    if via == "frame":  # a DataFrame's rows: the messages column is JSON text before the ingest
        table = table_of(table)
    source = tmp_path / "calls.parquet"
    pq.write_table(table, source)
    report, con = load(tmp_path, source)
    assert con.sql("SELECT transcript_id, tool_name, arguments FROM tool_calls ORDER BY 1").fetchall() == [
        ("a", "get_weather", '{"location": "San Francisco, CA"}'),
        ("b", "search", '{"query": "x"}'),
    ]
    assert unmerged(
        {"messages": [{"role": "assistant", "tool_calls": [{"function": {"arguments": {"a": None}}}]}]}
    ) == {"messages": [{"role": "assistant", "tool_calls": [{"function": {"arguments": {}}}]}]}


def test_an_error_flag_written_as_text_false_is_no_error(tmp_path):
    """`"is_error": "false"` was stored as a failed result (any non-empty text was true)."""
    from rubricflow.tasks.loaders.transcripts import parse_messages, transcript_of

    flags = ["false", "0", "", "False", "true", "timeout", True, False, None, 1]
    messages = [{"role": "tool", "content": "r", "is_error": f} for f in flags] + [{"role": "tool", "error": "boom"}]
    stored = transcript_of("t", parse_messages(messages)).columns["is_error"]
    assert stored == [None, None, None, None, True, True, True, None, None, True, True]


def test_a_first_row_whose_messages_are_null_is_quarantined_as_any_row_is(tmp_path):
    """The file was refused whole ("row 1 has no text column"); the same row second was quarantined."""
    src = tmp_path / "nulls.jsonl"
    good = {"id": "g", "messages": [{"role": "user", "content": "hi"}]}
    src.write_text(json.dumps({"id": "n", "messages": None}) + "\n" + json.dumps(good) + "\n")
    report, con = load(tmp_path, src)
    assert (report.rows_ok, report.rows_quarantined) == (1, 1)
    [reason] = [json.loads(line)["reason"] for line in report.quarantine.read_text().splitlines()]
    assert reason == "bad transcript: messages is not a non-empty list"


def test_a_result_naming_an_id_two_calls_of_one_message_share_is_refused_whichever_path(tmp_path):
    """Two parallel calls with one id (a buggy or hostile trace): both results were rendered as the
    second call's ("result of clock #c1" for the weather), its tool_call unit took the weather's result
    and the clock's was in none. A result answers one call (ids are unique per call in OpenAI's chat,
    Anthropic's tool_use and the OpenTelemetry GenAI parts): the transcript is quarantined, one line
    naming the row, the id and the calls. Shared ids no result names, or one reused turn after turn, are kept."""

    def call(cid, name):
        return {"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}}

    def both(cid):
        return {"role": "assistant", "content": "", "tool_calls": [call(cid, "weather"), call(cid, "clock")]}

    said = [
        {"role": "tool", "tool_call_id": "c1", "content": "18C"},
        {"role": "tool", "tool_call_id": "c1", "content": "14:05"},
    ]
    uses = [{"type": "tool_use", "id": "c1", "name": name, "input": {}} for name in ("weather", "clock")]
    answer = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "18C"}]}
    reused = {"role": "assistant", "content": "", "tool_calls": [call("c1", "clock")]}
    records = [
        {"id": "shared", "messages": [{"role": "user", "content": "go"}, both("c1"), *said]},
        {"id": "unanswered", "messages": [{"role": "user", "content": "go"}, both("c1")]},
        {"id": "reused", "messages": [both("c1"), reused, said[0]]},
        {
            "id": "blocks",
            "messages": [{"role": "user", "content": "go"}, {"role": "assistant", "content": uses}, answer],
        },
    ]
    source = tmp_path / "chats.jsonl"  # no content blocks: the file DuckDB's path took
    source.write_text("".join(json.dumps(r) + "\n" for r in records[:3]))
    data = tmp_path / "source.parquet"  # the API's data, read row by row
    pq.write_table(table_of(records), data)
    why = (
        "bad transcript: message M2: its tool_call_id 'c1' is the id of 2 calls of M1 (weather, clock): "
        "a result must name one call"
    )
    for path, refused in ((source, [(1, "shared", why)]), (data, [(1, "shared", why), (4, "blocks", why)])):
        report = ingest_corpus(path, tmp_path / path.stem)
        quarantined = [json.loads(line) for line in report.quarantine.read_text().splitlines()]
        assert [(q["row"], q["text_id"], q["reason"]) for q in quarantined] == refused
        texts = {r["text_id"]: r["text"] for r in pq.read_table(report.parquet).to_pylist()}
        assert texts["reused"].splitlines()[-1] == "[M2] tool (result of clock #c1): 18C"
        assert texts["unanswered"].splitlines()[-2:] == ["  -> call weather({}) #c1", "  -> call clock({}) #c1"]


TOOLS = [  # two rows' tools, each schema with properties of its own
    [
        {
            "type": "function",
            "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}},
        }
    ],
    [
        {
            "type": "function",
            "function": {"name": "g", "description": "gets", "parameters": {"properties": {"b": {"type": "integer"}}}},
        }
    ],
]


@pytest.mark.parametrize("via", ["rows", "jsonl", "jsonl_text", "parquet"])
def test_each_rows_tools_are_stored_as_it_gave_them(tmp_path, via):
    """Rows given in memory went through Arrow, which held every row's tool schemas as one struct:
    f's schema was stored with g's property `b` (and `description`) as nulls. Tools written as JSON
    text (xLAM's datasets store them so) are the tools, not a string."""
    import pyarrow as pa

    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    rows = [{"id": f"t{n}", "messages": chat, "tools": tools} for n, tools in enumerate(TOOLS)]
    if via in ("jsonl", "jsonl_text"):
        source = tmp_path / "chats.jsonl"
        text = via == "jsonl_text"
        source.write_text(
            "".join(json.dumps(r | ({"tools": json.dumps(r["tools"])} if text else {})) + "\n" for r in rows)
        )
    else:
        source = tmp_path / "chats.parquet"
        pq.write_table(table_of(rows) if via == "rows" else pa.Table.from_pylist(rows), source)
    _, con = load(tmp_path, source)
    stored = con.sql(
        "SELECT b.body FROM transcripts t JOIN message_bodies b ON b.body_hash = t.tools_hash ORDER BY t.transcript_id"
    ).fetchall()
    assert [json.loads(body) for (body,) in stored] == TOOLS
    if via != "parquet":  # as written (a struct's key order is the first row's: g's description moves)
        assert [body for (body,) in stored] == [json.dumps(t, separators=(",", ":")) for t in TOOLS]
