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


def test_an_otlp_trace_of_chat_tool_and_chat_spans_is_one_transcript_without_repeats(tmp_path):
    """The real chat span split as an agent emits it: a first chat (user in, call out), the tool's
    execute_tool span, the second chat (the whole history in, the answer out); a second trace apart."""
    real = json.loads(OTEL_CHAT.read_text())
    history = json.loads(real["gen_ai.input.messages"])
    first = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(history[:1]),
        "gen_ai.output.messages": json.dumps(history[1:2]),
    }
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
