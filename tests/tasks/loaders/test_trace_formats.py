"""Agent-trace importers on real published files (tests/data/transcripts/formats/SOURCES.md): each
round-trips to the canonical shape with every message, tool call and call/result link (#51 item 1).
The counts expected are read from the file itself, independently of the importer."""

import json
import zipfile

import duckdb
import pytest

from rubricflow.errors import InputError
from rubricflow.tasks.loaders.ingest import ingest_corpus
from rubricflow.tasks.loaders.trace_formats import detect_format
from rubricflow.warehouse import db, steps
from tests.conftest import ROOT

FORMATS = ROOT / "tests" / "data" / "transcripts" / "formats"
ATIF = FORMATS / "atif-openhands-hello-world.trajectory.json"
INSPECT = FORMATS / "inspect-log_message_deduplication.eval"
OTEL_CHAT = FORMATS / "otel_genai_client_span_tool_calls.json"
OTEL_TOOL = FORMATS / "otel_genai_tool_execution_span.json"
OPENINFERENCE = FORMATS / "openinference_client_span_tool_calls.json"


def load(tmp_path, source, trace_format=None):
    report = ingest_corpus(source, tmp_path / "corpora" / "c", trace_format=trace_format)
    warehouse = tmp_path / "rf.duckdb"
    with db.writer(warehouse) as con:
        steps.load_corpus(con, "c", str(source), report.parquet, report.rows_ok, report.rows_quarantined)
    assert report.rows_quarantined == 0
    return duckdb.connect(str(warehouse), read_only=True)


def counts(con):
    """(messages, tool calls, calls answered by a result, distinct call ids) in the warehouse."""
    [(messages,)] = con.sql("SELECT count(*) FROM messages").fetchall()
    [(calls, linked)] = con.sql("SELECT count(*), count(result_position) FROM tool_calls").fetchall()
    return messages, calls, linked


@pytest.mark.parametrize(
    ("path", "expected"),
    [(ATIF, "atif"), (INSPECT, "inspect"), (OTEL_CHAT, "otel"), (OTEL_TOOL, "otel"), (OPENINFERENCE, "openinference")],
)
def test_the_format_is_detected_from_the_file(path, expected):
    assert detect_format(path) == expected


def test_atif_every_step_observation_and_call_is_kept(tmp_path):
    doc = json.loads(ATIF.read_text())
    steps_n = len(doc["steps"])
    results = sum(len((s.get("observation") or {}).get("results") or []) for s in doc["steps"])
    calls = sum(len(s.get("tool_calls") or []) for s in doc["steps"])
    con = load(tmp_path, ATIF)
    assert counts(con) == (steps_n + results, calls, results)
    assert con.sql(
        "SELECT tool_name, arguments::JSON->>'path', result FROM tool_calls WHERE result IS NOT NULL"
    ).fetchall() == [("str_replace_editor", "/app/hello.txt", "File created successfully at: /app/hello.txt")]
    # the tool schemas offered are the transcript's tools, stored once
    assert con.sql("SELECT count(*) FROM transcripts WHERE tools_hash IS NOT NULL").fetchall() == [(1,)]
    assert con.sql("SELECT DISTINCT step_id FROM messages WHERE position = 4").fetchall() == [("5",)]


def test_inspect_eval_log_each_sample_is_a_transcript_with_its_calls_linked(tmp_path):
    with zipfile.ZipFile(INSPECT) as archive:
        samples = [json.loads(archive.read(n)) for n in archive.namelist() if n.startswith("samples/")]
    messages = sum(len(s["messages"]) for s in samples)
    calls = sum(len(m.get("tool_calls") or []) for s in samples for m in s["messages"])
    results = sum(1 for s in samples for m in s["messages"] if m.get("tool_call_id"))
    con = load(tmp_path, INSPECT)
    assert counts(con) == (messages, calls, results) and calls == 5
    assert con.sql("SELECT DISTINCT transcript_id FROM messages").fetchall() == [("0_epoch_1",)]
    assert con.sql("SELECT DISTINCT tool_name, arguments FROM tool_calls").fetchall() == [("bash", '{"cmd": "ls"}')]
    [(metadata,)] = con.sql("SELECT metadata FROM texts").fetchall()
    assert json.loads(metadata)["task"] == "inspect_test_utils/guess_number"


def test_otel_genai_chat_span_input_and_output_messages_round_trip(tmp_path):
    attributes = json.loads(OTEL_CHAT.read_text())
    inputs = json.loads(attributes["gen_ai.input.messages"])
    outputs = json.loads(attributes["gen_ai.output.messages"])
    con = load(tmp_path, OTEL_CHAT)
    assert counts(con) == (len(inputs) + len(outputs), 1, 1)
    assert con.sql("SELECT role, content FROM messages ORDER BY position").fetchall() == [
        ("user", "Weather in Paris?"),
        ("assistant", "Absolutely! Let me check the weather for you."),
        ("tool", "rainy, 57°F"),
        ("assistant", "The weather in Paris is currently rainy with a temperature of 57°F."),
    ]
    assert con.sql("SELECT call_id, tool_name, arguments::JSON->>'location' FROM tool_calls").fetchall() == [
        ("1234", "get_weather", "Paris")
    ]


def test_otel_execute_tool_span_alone_keeps_its_call_and_result(tmp_path):
    con = load(tmp_path, OTEL_TOOL)
    assert con.sql(
        "SELECT call_id, tool_name, arguments::JSON->>'city', result_position FROM tool_calls"
    ).fetchall() == [("1234", "get_weather", "New York", 1)]


def test_openinference_llm_span_round_trips_like_its_otel_twin(tmp_path):
    con = load(tmp_path, OPENINFERENCE)
    assert counts(con) == (4, 1, 1)
    assert con.sql("SELECT role, tool_call_id FROM messages ORDER BY position").fetchall() == [
        ("user", None),
        ("assistant", None),
        ("tool", "1234"),
        ("assistant", None),
    ]


def _otlp(spans):
    def value(v):
        return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}

    return {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": trace,
                                "spanId": f"s{n}",
                                "name": name,
                                "startTimeUnixNano": str(1000 + n),
                                "attributes": [{"key": k, "value": value(v)} for k, v in attrs.items()],
                            }
                            for n, (trace, name, attrs) in enumerate(spans)
                        ]
                    }
                ]
            }
        ]
    }


def _split_chat() -> tuple[dict, list, dict]:
    """The real chat span, its input history, and the first call an agent made before it (user in, call out)."""
    real = json.loads(OTEL_CHAT.read_text())
    history = json.loads(real["gen_ai.input.messages"])
    first = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(history[:1]),
        "gen_ai.output.messages": json.dumps(history[1:2]),
    }
    return real, history, first


def test_an_otlp_trace_of_chat_tool_and_chat_spans_is_one_transcript_without_repeats(tmp_path):
    """The real chat span split as an agent emits it: a first chat (user in, call out), the tool's
    execute_tool span, the second chat (the whole history in, the answer out); a second trace apart."""
    real, history, first = _split_chat()
    tool = {**json.loads(OTEL_TOOL.read_text()), "gen_ai.tool.call.id": "1234", "output": "rainy, 57°F"}
    tool.pop("input")
    spans = [("t1", "chat", first), ("t1", "execute_tool get_weather", tool), ("t1", "chat", real)]
    spans.append(("t2", "chat", {"gen_ai.input.messages": json.dumps(history[:1]), "gen_ai.output.messages": "[]"}))
    source = tmp_path / "trace.json"
    source.write_text(json.dumps(_otlp(spans)))
    con = load(tmp_path, source)
    assert con.sql("SELECT transcript_id, count(*) FROM messages GROUP BY ALL ORDER BY 1").fetchall() == [
        ("t1", 4),
        ("t2", 1),
    ]
    assert con.sql("SELECT count(*), count(result_position) FROM tool_calls").fetchall() == [(1, 1)]


def test_an_unknown_format_is_refused_naming_the_known_ones(tmp_path):
    with pytest.raises(InputError, match="--format 'langsmith': not one of openai, otel"):
        ingest_corpus(OTEL_CHAT, tmp_path / "c", trace_format="langsmith")


@pytest.mark.parametrize(
    ("name", "content", "fmt", "why"),
    [
        ("a.json", {"steps": "oops"}, "atif", "not an ATIF trajectory: ValueError: steps is not a non-empty list"),
        ("a2.json", {"steps": [{"source": "agent", "observation": []}]}, "atif",
         "step 0: observation is a list, not an object"),
        ("a3.json", {"steps": [{"source": "agent", "tool_calls": [{"tool_call_id": "c"}]}]}, "atif",
         "step 0: a tool call without a function_name"),
        ("f.json", {"resourceSpans": {"scopeSpans": []}}, "otel", "resourceSpans is a dict, not a list of objects"),
        ("g.json", {"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "s", "attributes": {"k": "v"}}]}]}]},
         "otel", "span 's': attributes is a dict, not a list of objects"),
        ("b.json", {"steps": [{"source": ["agent"], "message": "x"}]}, "atif", "not an ATIF trajectory: TypeError"),
        ("c.json", {"steps": [{"source": "agent", "tool_calls": ["ls"]}]}, "atif", "not an ATIF trajectory"),
        ("d.json", {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t", "attributes": [{"value": {}}]}]}]}]},
         "otel", "not otel spans: KeyError"),
        ("e.json", {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t\ud800", "attributes": []}]}]}]},
         "otel", "UnicodeEncodeError"),
    ],
)  # fmt: skip
def test_a_trace_of_another_shape_is_quarantined_naming_its_row_not_a_traceback(tmp_path, name, content, fmt, why):
    """An outside probe's traces whose fields had other types than the format's (a string where a
    list or object goes, a source that is a list, an attribute without a key, a lone surrogate): each
    was a Python traceback out of `rubricflow ingest`."""
    source = tmp_path / name
    source.write_text(json.dumps(content))
    report = ingest_corpus(source, tmp_path / "corpora" / "c", trace_format=fmt)
    assert report.rows_ok == 0 and report.rows_quarantined == 1
    [row] = [json.loads(line) for line in open(report.quarantine, encoding="utf-8")]
    assert row["row"] == 1 and why in row["reason"], row


def test_a_spans_file_is_refused_naming_its_unreadable_line_and_an_inspect_header_naming_itself(tmp_path):
    lines = tmp_path / "spans.jsonl"
    lines.write_text('{"trace_id": "t", "attributes": {}}\n{"trace_id": "t", "attrib\n')
    with pytest.raises(InputError, match=r"spans.jsonl: line 2: not readable JSON"):
        ingest_corpus(lines, tmp_path / "c1", trace_format="openinference")
    log = tmp_path / "run.eval"
    with zipfile.ZipFile(log, "w") as archive:
        archive.writestr("header.json", "{not json")
        archive.writestr("samples/1_epoch_1.json", json.dumps({"messages": []}))
    with pytest.raises(InputError, match=r"run.eval: header.json is not readable JSON"):
        ingest_corpus(log, tmp_path / "c2", trace_format="inspect")


def test_a_chat_row_without_messages_beside_transcripts_is_quarantined(tmp_path):
    """A transcript file whose second row is a plain text row: `KeyError: 'messages'`, a traceback."""
    source = tmp_path / "mixed.jsonl"
    rows = [{"id": "a", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]},
            {"id": "b", "text": "a plain text row"}]  # fmt: skip
    source.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    report = ingest_corpus(source, tmp_path / "corpora" / "c")
    assert (report.rows_ok, report.rows_quarantined) == (1, 1)
    [row] = [json.loads(line) for line in open(report.quarantine, encoding="utf-8")]
    assert row["row"] == 2 and "messages is not a non-empty list" in row["reason"], row


def test_openinference_spans_are_read_in_start_order_whatever_the_files_order(tmp_path):
    """Phoenix's two spans of one trace (OpenInference's spec), written in reverse: read in the
    file's order, the first call's tool call came again after the final answer (6 messages, not 5)."""
    spans = (FORMATS / "openinference_phoenix_spans.jsonl").read_text().splitlines()
    reversed_file = tmp_path / "reversed" / "spans.jsonl"
    reversed_file.parent.mkdir()
    reversed_file.write_text("\n".join(reversed(spans)) + "\n")
    in_order = load(tmp_path / "a", FORMATS / "openinference_phoenix_spans.jsonl", "openinference")
    reverse = load(tmp_path / "b", reversed_file, "openinference")
    query = "SELECT position, role, body_hash FROM messages ORDER BY position"
    assert in_order.sql(query).fetchall() == reverse.sql(query).fetchall()
    assert [role for _, role, _ in in_order.sql(query).fetchall()][-1] == "assistant"


def test_a_tool_span_without_its_result_leaves_the_result_a_later_chat_span_carries(tmp_path):
    """The GenAI convention records a tool's result only when asked: an execute_tool span without one
    added an empty tool message, and the later chat span's input, which carries the result
    ("rainy, 57°F"), was dropped as its repeat."""
    real, _, first = _split_chat()
    tool = {k: v for k, v in json.loads(OTEL_TOOL.read_text()).items() if k not in ("input", "output")}
    source = tmp_path / "trace.json"
    source.write_text(json.dumps(_otlp([("t1", "chat", first), ("t1", "execute_tool", tool), ("t1", "chat", real)])))
    con = load(tmp_path, source)
    [(body,)] = con.sql(
        "SELECT body FROM messages JOIN message_bodies USING (body_hash) WHERE role = 'tool'"
    ).fetchall()
    assert body == "rainy, 57°F"


def test_a_spans_plain_text_messages_are_kept_as_one_message_each(tmp_path):
    """`gen_ai.input.messages` given as plain text, not the JSON list the convention asks for: its
    characters were read as messages and the user's text was lost, exit 0."""
    chat = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": "hello there", "gen_ai.output.messages": "hi!"}
    source = tmp_path / "trace.json"
    source.write_text(json.dumps(_otlp([("t1", "chat", chat)])))
    con = load(tmp_path, source)
    query = "SELECT role, body FROM messages JOIN message_bodies USING (body_hash) ORDER BY position"
    assert con.sql(query).fetchall() == [("user", "hello there"), ("assistant", "hi!")]


def test_plain_text_system_instructions_and_reasoning_parts_are_read(tmp_path):
    """`gen_ai.system_instructions` as plain text quarantined the trace with an AttributeError; a
    `reasoning` part was `[reasoning]`, its words lost."""
    output = [{"role": "assistant", "parts": [{"type": "reasoning", "content": "A greeting."},
                                              {"type": "text", "content": "hello"}]}]  # fmt: skip
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system_instructions": "You are a pirate.",
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]),
        "gen_ai.output.messages": json.dumps(output),
    }
    source = tmp_path / "trace.json"
    source.write_text(json.dumps(_otlp([("t1", "chat", chat)])))
    con = load(tmp_path, source)
    [(text,)] = con.sql("SELECT text FROM texts").fetchall()
    assert text.splitlines() == [
        "[M0] system: You are a pirate.",
        "[M1] user: hi",
        "[M2] assistant: [reasoning] A greeting.",
        "hello",
    ]


def test_an_inspect_tool_error_says_its_message_and_a_damaged_sample_is_quarantined(tmp_path):
    """Inspect writes a failed call as empty content and an error (the judge saw an empty result);
    a sample whose deflate data is damaged ended the run with a traceback."""
    with zipfile.ZipFile(INSPECT) as archive:
        header = archive.read("header.json")
        [name] = [n for n in archive.namelist() if n.startswith("samples/")]
        sample = json.loads(archive.read(name))
    [at] = [i for i, m in enumerate(sample["messages"]) if m.get("tool_call_id")][:1]
    sample["messages"][at] |= {"content": "", "error": {"type": "timeout", "message": "Command timed out."}}
    sample["messages"][at - 1]["content"] = [{"type": "reasoning", "reasoning": "I will list the files."}]
    log = tmp_path / "run.eval"
    with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", header)
        archive.writestr(name, json.dumps(sample))
    con = load(tmp_path, log)
    lines = con.sql("SELECT text FROM texts").fetchall()[0][0].splitlines()
    assert f"[M{at - 1}] assistant: [reasoning] I will list the files." in lines
    assert [x for x in lines if x.startswith(f"[M{at}] ")] == [
        f"[M{at}] tool (result of bash #{sample['messages'][at]['tool_call_id']}, failed): Error: Command timed out."
    ]
    damaged = bytearray(log.read_bytes())
    offset = damaged.index(name.encode()) + len(name) + 40  # inside the sample's deflate data
    damaged[offset : offset + 64] = bytes(64)
    broken = tmp_path / "broken.eval"
    broken.write_bytes(bytes(damaged))
    report = ingest_corpus(broken, tmp_path / "corpora" / "b")
    assert report.rows_quarantined == 1
    assert json.loads(report.quarantine.read_text())["reason"].startswith(f"{name}: not an Inspect sample: ")


def test_an_atif_agent_steps_reasoning_is_read(tmp_path):
    """ATIF's `reasoning_content` on an agent step was dropped whole."""
    doc = json.loads(ATIF.read_text())
    step = next(s for s in doc["steps"] if s.get("source") == "agent")
    step["reasoning_content"] = "First I look at the files."
    source = tmp_path / "t.trajectory.json"
    source.write_text(json.dumps(doc))
    con = load(tmp_path, source, "atif")
    [(text,)] = con.sql("SELECT text FROM texts").fetchall()
    assert "assistant: [reasoning] First I look at the files." in text


def _parts(role, *parts):
    return {"role": role, "parts": list(parts)}


def _text(words):
    return {"type": "text", "content": words}


def _call(cid, city, as_text=False):
    arguments = json.dumps({"city": city}) if as_text else {"city": city}
    return {"type": "tool_call", "id": cid, "name": "get_weather", "arguments": arguments}


def _chat(inputs, outputs, **more):
    return {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(inputs),
            "gen_ai.output.messages": json.dumps(outputs), **more}  # fmt: skip


def test_an_agent_span_a_second_export_and_another_writing_of_a_turn_repeat_nothing(tmp_path):
    """The agent's own span (its run's input and final answer) read first put the answer before the
    calls, and again after; a span exported twice, and a turn written with its arguments as text or
    without its reasoning part in the next span's input, were each kept twice; a failed tool span
    (error.type, no result) left the result empty though the next input carried its words."""
    user = _parts("user", _text("Weather in Paris?"))
    call = _parts("assistant", {"type": "reasoning", "content": "need weather"}, _call("c1", "Paris"))
    result = _parts("tool", {"type": "tool_call_response", "id": "c1", "response": "Error: upstream timeout"})
    final = _parts("assistant", _text("It timed out."))
    failed = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
              "gen_ai.tool.call.id": "c1", "error.type": "timeout"}  # fmt: skip
    document = _otlp(
        [
            ("t", "invoke_agent", {"gen_ai.operation.name": "invoke_agent", "gen_ai.input.messages": json.dumps([user]),
                                   "gen_ai.output.messages": json.dumps([final])}),
            ("t", "chat", _chat([user], [call])),
            ("t", "execute_tool", failed),
            ("t", "chat", _chat([user, _parts("assistant", _call("c1", "Paris", as_text=True)), result], [final])),
        ]
    )  # fmt: skip
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans.append(dict(spans[1]))  # the first chat span exported again
    source = tmp_path / "trace.json"
    source.write_text(json.dumps(document))
    [(text,)] = load(tmp_path, source).sql("SELECT text FROM texts").fetchall()
    assert text.splitlines() == [
        "[M0] user: Weather in Paris?",
        "[M1] assistant: [reasoning] need weather",
        '  -> call get_weather({"city": "Paris"}) #c1',
        "[M2] tool (result of get_weather #c1, failed): Error: upstream timeout",
        "[M3] assistant: It timed out.",
    ]


def test_tool_spans_without_call_ids_answer_their_own_parallel_calls(tmp_path):
    """Two get_weather calls at once, their tool spans naming no call id: both results went to the
    latest call (Paris's to Rome's), the other lost. A span answers the open call with its arguments."""
    user = _parts("user", _text("Paris and Rome?"))
    calls = _parts("assistant", _call("c1", "Paris"), _call("c2", "Rome"))

    def run(city, weather):
        return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.arguments": json.dumps({"city": city}), "gen_ai.tool.call.result": weather}  # fmt: skip

    source = tmp_path / "trace.json"
    source.write_text(json.dumps(_otlp([("t", "chat", _chat([user], [calls])), ("t", "execute_tool", run("Rome", "sunny")),
                                        ("t", "execute_tool", run("Paris", "rainy"))])))  # fmt: skip
    con = load(tmp_path, source)
    assert con.sql("SELECT call_id, result FROM tool_calls ORDER BY 1").fetchall() == [("c1", "rainy"), ("c2", "sunny")]


def test_instructions_on_the_first_span_only_lose_no_repeated_turn_and_lines_without_trace_ids_stay_apart(tmp_path):
    """The second span's history has no system message: it matched no prefix, and the user's second
    "yes" was dropped as seen. Two attribute maps with no trace id were merged into one transcript."""
    yes, sure, done = (
        _parts("user", _text("yes")),
        _parts("assistant", _text("Sure?")),
        _parts("assistant", _text("Done.")),
    )
    first = _chat([yes], [sure], **{"gen_ai.system_instructions": "Confirm twice."})
    source = tmp_path / "trace.json"
    source.write_text(json.dumps(_otlp([("t", "chat", first), ("t", "chat", _chat([yes, sure, yes], [done]))])))
    [(text,)] = load(tmp_path, source).sql("SELECT text FROM texts").fetchall()
    assert [line.split(": ", 1)[1] for line in text.splitlines()] == ["Confirm twice.", "yes", "Sure?", "yes", "Done."]
    lines = tmp_path / "maps.jsonl"
    lines.write_text("".join(json.dumps(_chat([_parts("user", _text(w))], [done])) + "\n" for w in ("one", "two")))
    report = ingest_corpus(lines, tmp_path / "corpora" / "maps", trace_format="otel")
    assert (report.rows_ok, report.rows_quarantined) == (2, 0)


def test_a_start_written_as_a_float_or_to_the_nanosecond_is_read():
    """Either fell back to the file's order for the whole trace, without a word."""
    from rubricflow.tasks.loaders.trace_spans import start_ns

    assert start_ns({"startTimeUnixNano": 1.7e18}) == 1_700_000_000_000_000_000
    assert start_ns({"start_time": "2024-01-01T00:00:00.123456789+00:00"}) == 1_704_067_200_123_456_000


def test_openllmetry_indexed_prompt_and_completion_attributes_are_read(tmp_path):
    """OpenLLMetry (and the GenAI convention before 1.28) writes `gen_ai.prompt.<i>.*` and
    `gen_ai.completion.<i>.*`, calls as `...tool_calls.<j>.{id,name,arguments}` (the shape
    traceloop/openllmetry's Anthropic instrumentation tests assert): the trace was quarantined as
    "no otel messages in its spans"."""
    call = {"gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "Using tools",
            "gen_ai.completion.0.tool_calls.0.id": "call-1", "gen_ai.completion.0.tool_calls.0.name": "search",
            "gen_ai.completion.0.tool_calls.0.arguments": '{"q":"test"}'}  # fmt: skip
    first = {"gen_ai.system": "openai", "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Find it", **call}
    second = {
        "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Find it",
        **{k.replace("completion.0", "prompt.1"): v for k, v in call.items()},
        "gen_ai.prompt.2.role": "tool", "gen_ai.prompt.2.tool_call_id": "call-1", "gen_ai.prompt.2.content": "found",
        "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "Here it is.",
    }  # fmt: skip
    source = tmp_path / "trace.json"
    source.write_text(json.dumps(_otlp([("t", "openai.chat", first), ("t", "openai.chat", second)])))
    [(text,)] = load(tmp_path, source).sql("SELECT text FROM texts").fetchall()
    assert text.splitlines() == [
        "[M0] user: Find it",
        "[M1] assistant: Using tools",
        '  -> call search({"q":"test"}) #call-1',
        "[M2] tool (result of search #call-1): found",
        "[M3] assistant: Here it is.",
    ]


def _with_events(document: dict, *per_span: list[tuple[str, dict]]) -> dict:
    """`document`'s spans given span events: (name, attributes) pairs, written as OTLP writes them."""
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for span, events in zip(spans, per_span, strict=True):
        span["events"] = [
            {"name": name, "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()]}
            for name, attrs in events
        ]
    return document


def _content(message: dict) -> dict:
    return {"gen_ai.system": "az.ai.inference", "gen_ai.event.content": json.dumps(message)}


def test_messages_kept_as_span_events_are_read_as_azure_ai_inference_writes_them(tmp_path):
    """Azure AI Inference's tracing (azure-ai-inference, `_add_request_chat_message_events`): a
    `gen_ai.<role>.message` event per request message and a `gen_ai.choice` per answer, each JSON in
    `gen_ai.event.content`. Such traces were refused ("keeps its messages in span events")."""
    call = {"id": "call-1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}}
    first = [
        ("gen_ai.system.message", _content({"role": "system", "content": "Be brief."})),
        ("gen_ai.user.message", _content({"role": "user", "content": "Weather in Oslo?"})),
        (
            "gen_ai.choice",
            _content({"message": {"content": None, "tool_calls": [call]}, "finish_reason": "tool_calls", "index": 0}),
        ),
    ]
    second = [
        *first[:2],
        ("gen_ai.assistant.message", _content({"role": "assistant", "tool_calls": [call]})),
        ("gen_ai.tool.message", _content({"role": "tool", "tool_call_id": "call-1", "content": "rain, 4 C"})),
        ("gen_ai.choice", _content({"message": {"content": "Rainy, 4 C."}, "finish_reason": "stop", "index": 0})),
    ]
    chat = {"gen_ai.operation.name": "chat"}
    document = _with_events(_otlp([("t", "chat", chat), ("t", "chat", chat)]), first, second)
    source = tmp_path / "trace.json"
    source.write_text(json.dumps(document))
    con = load(tmp_path, source)
    [(text,)] = con.sql("SELECT text FROM texts").fetchall()
    assert text.splitlines() == [
        "[M0] system: Be brief.",
        "[M1] user: Weather in Oslo?",
        "[M2] assistant: ",
        '  -> call weather({"city": "Oslo"}) #call-1',
        "[M3] tool (result of weather #call-1): rain, 4 C",
        "[M4] assistant: Rainy, 4 C.",
    ]
    assert counts(con) == (5, 1, 1)


def test_the_1_26_prompt_and_completion_events_are_read(tmp_path):
    """The convention's 1.26 form: a `gen_ai.content.prompt` event (`gen_ai.prompt`, the messages as
    JSON) and a `gen_ai.content.completion` event (`gen_ai.completion`)."""
    prompt = json.dumps([{"role": "user", "content": "Name a prime."}])
    completion = json.dumps([{"role": "assistant", "content": "Seven."}])
    events = [("gen_ai.content.prompt", {"gen_ai.prompt": prompt}),
              ("gen_ai.content.completion", {"gen_ai.completion": completion})]  # fmt: skip
    source = tmp_path / "trace.json"
    source.write_text(json.dumps(_with_events(_otlp([("t", "chat", {"gen_ai.operation.name": "chat"})]), events)))
    [(text,)] = load(tmp_path, source).sql("SELECT text FROM texts").fetchall()
    assert text.splitlines() == ["[M0] user: Name a prime.", "[M1] assistant: Seven."]


@pytest.mark.parametrize(
    ("events", "why"),
    [
        ([("gen_ai.user.message", {"content": "hi"}), ("gen_ai.choice", {"gen_ai.system": "openai"})],
         "its gen_ai.choice event was recorded without its content"),
        ([("gen_ai.custom.thing", {"x": "y"})], "keeps its messages in span events (gen_ai.custom.thing), which are not read"),
    ],
)  # fmt: skip
def test_a_span_event_without_its_content_or_of_an_unknown_kind_is_refused_naming_it(tmp_path, events, why):
    """A choice recorded without its content (the instrumentation records it only when asked) would
    lose the model's answer without a word: the trace is quarantined naming the event."""
    document = _otlp([("t", "chat", {"gen_ai.operation.name": "chat"}),
                      ("t", "execute_tool", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "f",
                                             "gen_ai.tool.call.id": "c1", "gen_ai.tool.call.result": "r"})])  # fmt: skip
    source = tmp_path / "trace.json"
    source.write_text(json.dumps(_with_events(document, events, [])))
    report = ingest_corpus(source, tmp_path / "corpora" / "c")
    assert (report.rows_ok, report.rows_quarantined) == (0, 1)
    assert why in json.loads(report.quarantine.read_text())["reason"]


def test_a_list_of_exports_a_span_per_line_and_phoenix_nested_attributes_are_read(tmp_path):
    """Each was 'no otel messages in its spans' (or, undetected, 'no text column') though the
    messages were there."""
    user, done = _parts("user", _text("hi")), _parts("assistant", _text("hello"))
    exports = [_otlp([("t", "chat", _chat([user], [done]))]), _otlp([("u", "chat", _chat([user], [done]))])]
    listed = tmp_path / "exports.json"
    listed.write_text(json.dumps(exports))
    assert ingest_corpus(listed, tmp_path / "corpora" / "a").rows_ok == 2
    lines = tmp_path / "spans.jsonl"
    lines.write_text("".join(json.dumps(e["resourceSpans"][0]["scopeSpans"][0]["spans"][0]) + "\n" for e in exports))
    assert detect_format(lines) == "otel" and ingest_corpus(lines, tmp_path / "corpora" / "b").rows_ok == 2
    message = {"message": {"role": "user", "contents": [{"message_content": {"type": "text", "text": "describe"}}]}}
    nested = {"context": {"trace_id": "n", "span_id": "x"}, "start_time": "2024-01-01T00:00:01Z",
              "attributes": {"openinference": {"span": {"kind": "LLM"}}, "llm": {"input_messages": [message],
              "output_messages": [{"message": {"role": "assistant", "content": "a cat"}}]}}}  # fmt: skip
    phoenix = tmp_path / "phoenix.jsonl"
    phoenix.write_text(json.dumps(nested) + "\n")
    assert detect_format(phoenix) == "openinference"
    [(text,)] = load(tmp_path, phoenix).sql("SELECT text FROM texts").fetchall()
    assert text.splitlines() == ["[M0] user: describe", "[M1] assistant: a cat"]


def test_a_sub_agents_answer_a_reused_call_id_and_agent_runs_keep_their_places(tmp_path):
    """From a second outside probe of the span merge: the main agent's answer, said before by a
    sub-agent, was dropped as seen; a later result of a reused call_0 filled an earlier empty one;
    agent spans read last put the user's question after the answer."""
    main, expert = _parts("system", _text("main")), _parts("system", _text("expert"))
    ask, answer = _parts("user", _text("Q")), _parts("assistant", _text("42"))
    call = _parts("assistant", {"type": "tool_call", "id": "c1", "name": "ask_expert", "arguments": {}})
    result = _parts("tool", {"type": "tool_call_response", "id": "c1", "response": "42"})
    spans = [("t", "chat", _chat([main, ask], [call])), ("t", "chat", _chat([expert, ask], [answer])),
             ("t", "chat", _chat([main, ask, call, result], [answer]))]  # fmt: skip
    sub = tmp_path / "sub.json"
    sub.write_text(json.dumps(_otlp(spans)))
    [(text,)] = load(tmp_path / "a", sub).sql("SELECT text FROM texts").fetchall()
    lines = text.splitlines()  # the sub-agent's answer, then the main agent's own after its call's result
    assert [x.split(" ", 1)[1] for x in lines[-3:]] == [
        "assistant: 42",
        "tool (result of ask_expert #c1): 42",
        "assistant: 42",
    ]

    def sh(cid, cmd):
        return _parts("assistant", {"type": "tool_call", "id": cid, "name": "sh", "arguments": {"cmd": cmd}})

    def said(cid, words):
        return _parts("tool", {"type": "tool_call_response", "id": cid, "response": words})

    user = _parts("user", _text("go"))
    history = [user, sh("call_0", "mkdir"), said("call_0", "")]
    reused = [("t", "chat", _chat([user], [sh("call_0", "mkdir")])), ("t", "chat", _chat(history, [sh("call_0", "ls")])),
              ("t", "chat", _chat([*history, sh("call_0", "ls"), said("call_0", "d")], [answer]))]  # fmt: skip
    again = tmp_path / "reused.json"
    again.write_text(json.dumps(_otlp(reused)))
    con = load(tmp_path / "b", again)
    assert con.sql("SELECT arguments, result FROM tool_calls ORDER BY position").fetchall() == [
        ('{"cmd": "mkdir"}', ""),
        ('{"cmd": "ls"}', "d"),
    ]
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.input.messages": json.dumps([ask]),
             "gen_ai.output.messages": json.dumps([answer])}  # fmt: skip
    document = _otlp([("t", "invoke_agent", agent), ("t", "chat", _chat([ask], [call]))])
    agent_span, chat_span = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    agent_span["endTimeUnixNano"] = "5000"
    runs = tmp_path / "agent.json"
    runs.write_text(json.dumps(document))
    [(text,)] = load(tmp_path / "c", runs).sql("SELECT text FROM texts").fetchall()
    assert [line.split(" ", 1)[1][:9] for line in text.splitlines() if line.startswith("[M")] == [
        "user: Q", "assistant", "assistant"
    ]  # fmt: skip
    assert text.splitlines()[-1] == "[M2] assistant: 42"  # the answer at the agent span's end, after its call


def test_tool_spans_sharing_a_call_id_keep_every_call_and_result(tmp_path):
    """A tool span whose call id was answered already was dropped whole: two tool spans of one id
    (another tool) kept the first run only, and a call_0 reused in the next turn lost its result when
    no later chat span carried it. A run is the latest call of its id; a run of another tool or other
    arguments than that call, answered already, is its own call. Two calls of one chat span sharing
    the id that a result names: which one it answers is unknown, the trace is quarantined naming it."""

    def run(name, cid, result, city=None):
        return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": cid,
                "gen_ai.tool.call.result": result, **({"gen_ai.tool.call.arguments": city} if city else {})}  # fmt: skip

    def sh(cid, name, city):
        return _parts("assistant", {"type": "tool_call", "id": cid, "name": name, "arguments": {"city": city}})

    user = _parts("user", _text("go"))
    said = _parts("tool", {"type": "tool_call_response", "id": "call_0", "response": "18C"})
    traces = {
        "runs": [("t", "execute_tool", run("weather", "c1", "18C")), ("t", "execute_tool", run("clock", "c1", "14:05", '"Oslo"')),
                 ("t", "execute_tool", run("clock", "c1", "15:05", '"Rome"'))],
        "reused": [("t", "chat", _chat([user], [sh("call_0", "weather", "Paris")])),
                   ("t", "execute_tool", run("weather", "call_0", "18C")),
                   ("t", "chat", _chat([user, sh("call_0", "weather", "Paris"), said], [sh("call_0", "clock", "Oslo")])),
                   ("t", "execute_tool", run("clock", "call_0", "14:05"))],
    }  # fmt: skip
    for name, spans in traces.items():
        source = tmp_path / f"{name}.json"
        source.write_text(json.dumps(_otlp(spans)))
        found = load(tmp_path / name, source).sql("SELECT tool_name, result FROM tool_calls ORDER BY position")
        expected = [("weather", "18C"), ("clock", "14:05")] + ([("clock", "15:05")] if name == "runs" else [])
        assert found.fetchall() == expected, name
    both = _parts("assistant", _call("c1", "Paris"), {**_call("c1", "Oslo"), "name": "clock"})
    shared = [("t", "chat", _chat([user], [both])), ("t", "execute_tool", run("get_weather", "c1", "18C"))]
    source = tmp_path / "shared.json"
    source.write_text(json.dumps(_otlp(shared)))
    report = ingest_corpus(source, tmp_path / "shared", trace_format="otel")
    [row] = [json.loads(line) for line in report.quarantine.read_text().splitlines()]
    assert (row["row"], row["text_id"]) == (1, "t") and "tool_call_id 'c1' is the id of 2 calls of M1" in row["reason"]
