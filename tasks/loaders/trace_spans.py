"""Traces as spans (OpenTelemetry GenAI, OpenInference) to transcripts in the canonical shape
(OpenAI-style chat messages, tool calls linked to their results by id).

Why a merge: a trace holds one model call per `chat` (or `LLM`) span, each carrying the whole
conversation so far as its input and the new message(s) as its output, and each tool run as an
`execute_tool` (or `TOOL`) span. Read in start order, a span's input extends the conversation
already built (only its new messages are added), its output follows, and a tool span's result is
added as a tool message unless a later input already carries it: no message is repeated, none lost.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from rubricflow.tasks.loaders.transcripts import REASONING, json_or_as_is

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
OTEL_SPAN = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.operation.name", "gen_ai.tool.name")
OI_MESSAGE = re.compile(r"llm\.(input|output)_messages\.(\d+)\.message\.(.+)")
# OpenLLMetry's (and the GenAI convention's before 1.28) indexed attributes: gen_ai.prompt.0.content
INDEXED_GENAI = re.compile(r"gen_ai\.(prompt|completion)\.(\d+)\.(.+)")


def otlp_value(value: dict) -> Any:
    """An OTLP JSON AnyValue ({"stringValue": ...}, {"arrayValue": {"values": [...]}} ...) as Python."""
    if not isinstance(value, dict) or not value:
        return None
    kind, inner = next(iter(value.items()))
    if kind == "arrayValue":
        return [otlp_value(v) for v in (inner or {}).get("values", [])]
    if kind == "kvlistValue":
        return {kv["key"]: otlp_value(kv.get("value", {})) for kv in (inner or {}).get("values", [])}
    if kind == "intValue":
        return int(inner)
    return inner


def otlp_spans(document: dict) -> Iterator[dict]:
    """The spans of an OTLP JSON export (resourceSpans > scopeSpans > spans), each as
    {trace_id, span_id, start, attributes: {key: value}}."""
    for resource in _objects(document.get("resourceSpans"), "resourceSpans"):
        scopes = resource.get("scopeSpans") or resource.get("instrumentationLibrarySpans")
        for scope in _objects(scopes, "scopeSpans"):
            for span in _objects(scope.get("spans"), "spans"):
                pairs = _objects(span.get("attributes"), f"span {span.get('spanId')!r}: attributes")
                attributes = {kv["key"]: otlp_value(kv.get("value", {})) for kv in pairs}
                yield {
                    "trace_id": span.get("traceId") or "",
                    "span_id": span.get("spanId"),
                    "start": start_ns(span),
                    "end": start_ns(span, "end"),
                    "status_error": (span.get("status") or {}).get("code") in (2, "STATUS_CODE_ERROR"),
                    "attributes": attributes,
                    "events": _events_of(span),
                }


def _events_of(span: dict) -> list[dict]:
    """A span's events as {name, attributes}, attributes written as OTLP key/value pairs or as a map."""
    out = []
    for event in span.get("events") or []:
        if not isinstance(event, dict):
            continue
        given = event.get("attributes")
        if isinstance(given, list):
            attributes = {
                kv["key"]: otlp_value(kv.get("value", {})) for kv in given if isinstance(kv, dict) and "key" in kv
            }
        else:
            attributes = given if isinstance(given, dict) else {}
        out.append({"name": event.get("name"), "attributes": attributes})
    return out


def _objects(value: Any, field: str) -> list[dict]:
    """An OTLP list of objects (none: empty); another shape is named by its field, as the file writes it."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        what = type(value).__name__ if not isinstance(value, list) else "list with an item that is no object"
        raise ValueError(f"{field} is a {what}, not a list of objects")
    return value


def flat_spans(document: Any) -> Iterator[dict]:
    """Spans written as objects: one span's attribute map (a test fixture, a log line), a span with
    `attributes` (and `context.trace_id`, as Phoenix exports them), or a list of either."""
    items = document if isinstance(document, list) else [document]
    for item in items:
        if not isinstance(item, dict):
            continue
        given, found = item.get("attributes"), item.get("context")
        if isinstance(given, list):  # an OTLP span on its own line: attributes as key/value pairs
            yield from otlp_spans({"resourceSpans": [{"scopeSpans": [{"spans": [item]}]}]})
            continue
        attributes: dict = given if isinstance(given, dict) else item
        context: dict = found if isinstance(found, dict) else {}
        yield {
            "trace_id": context.get("trace_id") or item.get("trace_id") or item.get("traceId") or "",
            "span_id": context.get("span_id") or item.get("span_id") or item.get("spanId"),
            "start": start_ns(item),
            "end": start_ns(item, "end"),
            "status_error": item.get("status_code") == "ERROR",
            "attributes": flatten(attributes),
            "events": _events_of(item),
        }


def start_ns(span: dict, which: str = "start") -> int | None:
    """When the span started (`which="end"`: ended), in ns since the epoch: OTLP's
    `startTimeUnixNano`, or an ISO 8601 `start_time` as Phoenix exports it (no zone: UTC); None when
    it says none."""
    given = span.get(f"{which}TimeUnixNano", span.get(f"{which}_time_unix_nano"))
    if isinstance(given, int | str) and str(given).isdigit():
        return int(given)
    if isinstance(given, float) and given == given:  # a JSON number written as 1.7e+18
        return int(given)
    stamp = span.get(f"{which}_time", span.get(f"{which}Time"))
    if not isinstance(stamp, str):
        return None
    try:  # nanoseconds (9 digits after the second) as Python reads them, to the microsecond
        moment = datetime.fromisoformat(re.sub(r"(\.\d{6})\d+", r"\1", stamp))
    except ValueError:
        return None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return (moment - EPOCH) // timedelta(microseconds=1) * 1000


def flatten(attributes: dict, prefix: str = "") -> dict:
    """Nested attributes ({"llm.input_messages": [{"message.role": ...}]}) as the dotted keys the
    conventions name (`llm.input_messages.0.message.role`)."""
    out: dict = {}
    for key, value in attributes.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for index, item in enumerate(value):
                out.update(flatten(item, f"{name}.{index}."))
        else:
            out[name] = value
    return out


def _arguments(value: Any) -> str | None:
    return value if isinstance(value, str) or value is None else json.dumps(value, ensure_ascii=False)


def genai_messages(value: Any, role: str = "user") -> list[dict]:
    """OTel GenAI messages (role + parts: text, tool_call, tool_call_response, others named) as
    canonical ones; a tool role's responses become one tool message per call answered. A plain
    text where the JSON list goes is one message of `role` (its characters were iterated as
    messages, and the text lost without a word)."""
    out: list[dict] = []
    read = json_or_as_is(value)
    if isinstance(read, str):
        return [{"role": role, "content": read}] if read.strip() else []
    for message in read or []:
        if not isinstance(message, dict):
            continue
        role = message.get("role") or "user"
        parts = message.get("parts")
        if isinstance(parts, str):  # plain text where the parts go (system instructions written as a text)
            parts = [{"type": "text", "content": parts}] if parts.strip() else []
        if parts is not None and not isinstance(parts, list):
            raise ValueError(f"a {role} message's parts are a {type(parts).__name__}, not a list")
        if parts is None:  # an older, OpenAI-like message
            out.append(
                {k: v for k, v in message.items() if k in ("role", "content", "tool_calls", "tool_call_id", "name")}
            )
            continue
        content, calls = [], []
        for part in parts:
            if not isinstance(part, dict):
                raise ValueError(f"a {role} message's part is a {type(part).__name__}, not an object")
            kind = part.get("type")
            if kind == "text":
                content.append({"type": "text", "text": part.get("content") or ""})
            elif kind == "reasoning" and isinstance(part.get("content"), str):  # read as `[reasoning] ...`
                content.append({"type": "reasoning", "reasoning": part["content"]})
            elif kind == "tool_call" and not isinstance(part.get("name"), str):
                raise ValueError(f"a tool_call part without a name (id {part.get('id')!r})")
            elif kind == "tool_call":
                fn = {"name": part.get("name"), "arguments": _arguments(part.get("arguments"))}
                calls.append({"id": part.get("id"), "type": "function", "function": fn})
            elif kind == "tool_call_response":
                response = part.get("response")
                text = response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)
                out.append({"role": "tool", "tool_call_id": part.get("id"), "content": text})
            else:
                content.append({"type": kind or "part"})
        if content or calls or role != "tool":
            out.append({"role": role, "content": content or None, **({"tool_calls": calls} if calls else {})})
    return out


def openinference_messages(attributes: dict, side: str) -> list[dict]:
    """OpenInference's flattened `llm.<side>_messages.<i>.message.*` attributes as canonical messages."""
    found: dict[int, dict] = {}
    for key, value in attributes.items():
        match = OI_MESSAGE.fullmatch(key)
        if match and match.group(1) == side:
            found.setdefault(int(match.group(2)), {})[match.group(3)] = value
    return [_openinference_message(found[index]) for index in sorted(found)]


def _openinference_message(fields: dict) -> dict:
    message: dict = {"role": fields.get("role") or "user"}
    parts = _indexed(fields, "contents", "message_content.")
    if parts:
        message["content"] = [
            {"type": "text", "text": p.get("text") or ""} if p.get("type", "text") == "text" else {"type": p["type"]}
            for p in parts
        ]
    else:
        message["content"] = fields.get("content")
    calls = _indexed(fields, "tool_calls", "tool_call.")
    if calls:
        message["tool_calls"] = [
            {
                "id": c.get("id"),
                "type": "function",
                "function": {"name": c.get("function.name"), "arguments": _arguments(c.get("function.arguments"))},
            }
            for c in calls
        ]
    for key in ("tool_call_id", "name"):
        if fields.get(key) is not None:
            message[key] = fields[key]
    return message


def indexed_genai_messages(attributes: dict, side: str) -> list[dict]:
    """OpenLLMetry's `gen_ai.<prompt|completion>.<i>.<role|content|tool_call_id>` and
    `...tool_calls.<j>.<id|name|arguments>` attributes as canonical messages (a completion's role
    assistant where it names none)."""
    found: dict[int, dict] = {}
    for key, value in attributes.items():
        match = INDEXED_GENAI.fullmatch(key)
        if match and match.group(1) == side:
            found.setdefault(int(match.group(2)), {})[match.group(3)] = value
    messages = []
    for index in sorted(found):
        fields = found[index]
        message = {"role": fields.get("role") or ("user" if side == "prompt" else "assistant")}
        message["content"] = fields.get("content")
        calls = _indexed(fields, "tool_calls", "")
        if calls:
            message["tool_calls"] = [
                {"id": c.get("id"), "type": "function",
                 "function": {"name": c.get("name"), "arguments": _arguments(c.get("arguments"))}}
                for c in calls
            ]  # fmt: skip
        if fields.get("tool_call_id") is not None:
            message["tool_call_id"] = fields["tool_call_id"]
        messages.append(message)
    return messages


def _indexed(fields: dict, name: str, inner: str) -> list[dict]:
    """`contents.0.message_content.text` style keys as a list of {text: ...} dicts, in index order."""
    rows: dict[int, dict] = {}
    pattern = re.compile(rf"{name}\.(\d+)\.{re.escape(inner)}(.+)")
    for key, value in fields.items():
        match = pattern.fullmatch(key)
        if match:
            rows.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return [rows[i] for i in sorted(rows)]


def span_turns(span: dict) -> tuple[list[dict], list[dict], dict | None, Any]:
    """(input messages, output messages, tool run or None, tool schemas or None) of one span, in
    either convention: OTel GenAI (`gen_ai.*`) or OpenInference (`llm.*`, `tool.*`)."""
    a = span["attributes"]
    if any(key.startswith("llm.") for key in a) or "openinference.span.kind" in a:
        inputs, outputs = openinference_messages(a, "input"), openinference_messages(a, "output")
        tools = [
            json_or_as_is(v) for k, v in sorted(a.items()) if re.fullmatch(r"llm\.tools\.\d+\.tool\.json_schema", k)
        ]
        run = None
        if str(a.get("openinference.span.kind", "")).upper() == "TOOL":
            run = _tool_run(a.get("tool_call.id") or a.get("tool.id"), a.get("tool.name"), a, span)
        return inputs, outputs, run, tools or None
    if "gen_ai.input.messages" not in a and "gen_ai.output.messages" not in a and any(map(INDEXED_GENAI.match, a)):
        inputs, outputs = indexed_genai_messages(a, "prompt"), indexed_genai_messages(a, "completion")
        return inputs, outputs, None, json_or_as_is(a.get("gen_ai.tool.definitions")) or None
    inputs = genai_messages(a.get("gen_ai.input.messages"))
    system = genai_messages([{"role": "system", "parts": json_or_as_is(a.get("gen_ai.system_instructions"))}])
    if a.get("gen_ai.system_instructions") and system:
        inputs = [*system, *inputs]
    run = None
    if a.get("gen_ai.operation.name") == "execute_tool" or (a.get("gen_ai.tool.name") and not inputs):
        run = _tool_run(a.get("gen_ai.tool.call.id"), a.get("gen_ai.tool.name"), a, span)
    tools = json_or_as_is(a.get("gen_ai.tool.definitions"))
    outputs = genai_messages(a.get("gen_ai.output.messages"), "assistant")
    if not inputs and not outputs and run is None:  # the messages may be the span's events
        inputs, outputs = event_turns(span)
    return inputs, outputs, run, tools or None


EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def event_turns(span: dict) -> tuple[list[dict], list[dict]]:
    """The messages a span keeps as span events, in their order: the GenAI convention's
    `gen_ai.<role>.message` events (a request's messages) and `gen_ai.choice` (the answer), each
    JSON in `gen_ai.event.content` as Azure AI Inference's and Semantic Kernel's tracing write
    them, or in the body's own attributes (`content`, `tool_calls`, `id`); 1.26's
    `gen_ai.content.prompt` / `gen_ai.content.completion` (`gen_ai.prompt` / `gen_ai.completion`);
    and `gen_ai.client.inference.operation.details` (the attributes' own `gen_ai.input.messages` ...)."""
    inputs: list[dict] = []
    outputs: list[dict] = []
    for event in span.get("events") or ():
        name, a = event["name"], event["attributes"]
        if name == "gen_ai.client.inference.operation.details":
            system = genai_messages([{"role": "system", "parts": json_or_as_is(a.get("gen_ai.system_instructions"))}])
            inputs += (system if a.get("gen_ai.system_instructions") else []) + genai_messages(
                a.get("gen_ai.input.messages")
            )
            outputs += genai_messages(a.get("gen_ai.output.messages"), "assistant")
        elif name == "gen_ai.content.prompt":
            inputs += genai_messages(a.get("gen_ai.prompt"))
        elif name == "gen_ai.content.completion":
            outputs += genai_messages(a.get("gen_ai.completion"), "assistant")
        elif name in EVENT_ROLES:
            inputs.append(_event_message(span, name, EVENT_ROLES[name], _event_body(a)))
        elif name == "gen_ai.choice" and not outputs:  # the first choice: the others were alternatives
            body = _event_body(a)
            outputs.append(_event_message(span, name, "assistant", body.get("message") or body))
    return inputs, outputs


def _event_body(a: dict) -> dict:
    """An event's message: `gen_ai.event.content`'s JSON, or the body written as attributes."""
    given = json_or_as_is(a.get("gen_ai.event.content"))
    if isinstance(given, dict):
        return given
    if isinstance(given, str):
        return {"content": given}
    return {
        k: json_or_as_is(v) if k == "tool_calls" else v
        for k, v in a.items()
        if k in ("content", "tool_calls", "id", "message")
    }


def _event_message(span: dict, name: str, role: str, body: Any) -> dict:
    """A canonical message of an event's body; one whose content was not recorded (the convention
    records it only when asked) is refused naming it: its turn would be lost without a word."""
    body = json_or_as_is(body) if isinstance(body, str) else body
    if not isinstance(body, dict) or (body.get("content") in (None, "") and not body.get("tool_calls")):
        raise ValueError(
            f"span {span.get('span_id')!r}: its {name} event was recorded without its content "
            "(turn content recording on: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)"
        )
    message = {"role": body.get("role") or role, "content": body.get("content")}
    if body.get("tool_calls"):
        message["tool_calls"] = body["tool_calls"]
    call_id = body.get("tool_call_id", body.get("id"))
    if message["role"] == "tool" and call_id is not None:
        message["tool_call_id"] = str(call_id)
    return message


def _tool_run(call_id: Any, name: Any, a: dict, span: dict) -> dict:
    arguments = next((a[k] for k in ("gen_ai.tool.call.arguments", "input.value", "input") if k in a), None)
    result = next((a[k] for k in ("gen_ai.tool.call.result", "output.value", "output") if k in a), None)
    return {
        "id": None if call_id is None else str(call_id),
        "name": name,
        "arguments": _arguments(arguments),
        "result": result if isinstance(result, str) or result is None else json.dumps(result, ensure_ascii=False),
        "is_error": span.get("status_error") or bool(a.get("error.type")) or None,  # error.type: the convention's mark
    }


def _key(message: dict) -> str:
    """What makes two messages the same turn, however each span wrote it: a tool result is its
    call's id; another message its role, its content without reasoning parts (a later span's input
    may leave one out; a turn of reasoning alone keeps it) and its calls with their arguments as
    values (`{"city": "Paris"}` and the string `"{\\"city\\":\\"Paris\\"}"` are one call)."""
    if message.get("role") == "tool" and message.get("tool_call_id"):
        return f"tool:{message['tool_call_id']}"
    calls = [
        (c.get("id"), (c.get("function") or {}).get("name"), _value((c.get("function") or {}).get("arguments")))
        for c in message.get("tool_calls") or []
    ]
    content = message.get("content")
    if isinstance(content, list):
        said = [p for p in content if not (isinstance(p, dict) and p.get("type") in REASONING)]
        content = [_part_key(p) for p in (said if said or calls else content)]
        if all(isinstance(p, str) for p in content):  # text parts: the words, as a text content says them
            content = "\n".join(content)
    return json.dumps([message.get("role"), content or None, calls], sort_keys=True, ensure_ascii=False)


def _part_key(part: Any) -> Any:
    """A text part by its words (`{"type": "text", "text": ...}` however the span wrote the rest); any other part whole."""
    if isinstance(part, dict) and part.get("type") == "text":
        return part.get("text")
    return part


def _value(arguments: Any) -> Any:
    """Arguments as the value they write: JSON text read, anything else as it is."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


AGENT_SPANS = ("invoke_agent", "AGENT", "CHAIN")


def _events(spans: list[dict]) -> list[tuple[Any, int, str, dict]]:
    """(when, the file's order, what, span) for every span read once (a span exported twice, by its
    id, once): a chat or tool span at its start; an agent's own span, which carries its run's input
    and final answer, its input at its start and its answer at its end (read at its start, the answer
    stood before the calls that led to it). Untimed spans in the file's order, answers last."""
    timed = all(span["start"] is not None for span in spans)
    out, seen = [], set()
    for order, span in enumerate(spans):
        if span.get("span_id"):
            if span["span_id"] in seen:  # an exporter's retry, overlapping batches
                continue
            seen.add(span["span_id"])
        a = span["attributes"]
        agent = (a.get("gen_ai.operation.name") or str(a.get("openinference.span.kind", "")).upper()) in AGENT_SPANS
        start = span["start"] if timed else 0
        if not agent:
            out.append((start, order, "span", span))
            continue
        end = span.get("end") if timed and span.get("end") is not None else math.inf
        out += [(start, order, "agent-input", span), (end, order, "agent-answer", span)]
    return sorted(out, key=lambda e: (e[0], e[1]))


def merge_spans(spans: list[dict]) -> tuple[list[dict], Any]:
    """One trace's spans (in start order, or the file's when a span gives no start) as one
    conversation, and the tool schemas it offered."""
    conversation: list[dict] = []
    tools = None
    for _, _, what, span in _events(spans):
        inputs, outputs, run, offered = span_turns(span)
        tools = tools or offered
        if what == "agent-input":
            _add_turns(conversation, inputs, [])
        elif what == "agent-answer":  # what its chat spans did not already say
            known = {_key(m) for m in conversation}
            conversation += [m for m in outputs if _key(m) not in known]
        else:
            _refuse_event_messages(span, inputs, outputs, run)
            _add_turns(conversation, inputs, outputs)
            if run is not None:
                _add_tool_run(conversation, run)
    return conversation, tools


def _refuse_event_messages(span: dict, inputs: list[dict], outputs: list[dict], run: dict | None) -> None:
    """A span with GenAI events of which no message was read (names `event_turns` does not know):
    the trace is refused naming them, not read without its turns."""
    names = {e["name"] for e in span.get("events") or ()}
    events = sorted(n for n in names if isinstance(n, str) and n.startswith("gen_ai."))
    if events and not inputs and not outputs and run is None:
        raise ValueError(
            f"span {span.get('span_id')!r} keeps its messages in span events ({', '.join(events)}), which are "
            "not read: record them as attributes (gen_ai.input.messages, gen_ai.output.messages)"
        )


def _add_turns(conversation: list[dict], inputs: list[dict], outputs: list[dict]) -> None:
    """A chat span's messages: when its history is the conversation so far (system messages aside,
    when it gives none: instructions recorded on the first span only), what it adds; else (a
    sub-agent, a rewritten prompt) the history's messages not seen yet, and its answer. A tool result
    the conversation holds empty (a failed tool span records none) takes the words the same place of
    a later history has."""
    skip_system = not any(m.get("role") == "system" for m in inputs)
    held = [m for m in conversation if not (skip_system and m.get("role") == "system")]
    shared = 0
    while shared < min(len(held), len(inputs)) and _key(held[shared]) == _key(inputs[shared]):
        mine, theirs = held[shared], inputs[shared]
        if mine.get("role") == "tool" and not mine.get("content") and theirs.get("content"):
            mine["content"] = theirs["content"]
        shared += 1
    if shared == len(held):  # the conversation so far is this call's history: add what is new
        conversation += inputs[shared:] + outputs
        return
    known = {_key(m) for m in conversation}
    conversation += [m for m in inputs[shared:] if _key(m) not in known] + outputs


def _unanswered_call(conversation: list[dict], calls: dict, run: dict) -> Any:
    """The id of the call of the run's tool, not yet answered, whose arguments are the run's (else the
    first unanswered one, else the latest): parallel calls of one tool each get their own result."""
    answered = {m.get("tool_call_id") for m in conversation if m.get("role") == "tool"}
    named = [cid for cid, c in calls.items() if (c.get("function") or {}).get("name") == run["name"]]
    open_ = [cid for cid in named if cid not in answered]
    same = [
        cid for cid in open_ if _value((calls[cid].get("function") or {}).get("arguments")) == _value(run["arguments"])
    ]
    if same or open_:
        return (same or open_)[0]
    return named[-1] if named else None


def _add_tool_run(conversation: list[dict], run: dict) -> None:
    """A tool span's result as a tool message answering its call; a call no message made is added
    as an assistant message first, so no call or result is lost. A span without its result (the
    convention records it only when asked) adds none: an empty one took the place of the result a
    later chat span's input carries, which was then dropped as a repeat. The call a run answers is
    the latest with its id (ids are reused turn after turn); one already answered otherwise, by a
    call of another tool or arguments, is not this run's: the run's call is added (it was dropped)."""
    calls = {c.get("id"): c for m in conversation for c in m.get("tool_calls") or []}
    if run["id"] is None:  # no id (the convention only recommends one): the call it must answer
        run["id"] = _unanswered_call(conversation, calls, run)
    answer = _answer(conversation, run["id"])
    other = answer is not None and answer.get("content") != run["result"] and not _runs(calls.get(run["id"]), run)
    if run["id"] is None or run["id"] not in calls or other:
        fn = {"name": run["name"], "arguments": run["arguments"]}
        conversation.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": run["id"], "type": "function", "function": fn}],
            }
        )
        answer = None
    if run["result"] is None and not run["is_error"]:  # not recorded (opt-in): a later call's input may carry it
        return
    if answer is not None:  # its result is there already (a chat span's input carried it)
        return
    conversation.append(
        {"role": "tool", "tool_call_id": run["id"], "content": run["result"], "is_error": run["is_error"]}
    )


def _answer(conversation: list[dict], call_id: Any) -> dict | None:
    """The result after the latest call with this id (an earlier call's, of a reused id, is not its)."""
    made = max(
        (k for k, m in enumerate(conversation) if any(c.get("id") == call_id for c in m.get("tool_calls") or [])),
        default=-1,
    )
    return next(
        (m for m in conversation[made + 1 :] if m.get("role") == "tool" and m.get("tool_call_id") == call_id), None
    )


def _runs(call: dict | None, run: dict) -> bool:
    """Whether the tool run can be this call's: the same tool and, where both say them, arguments."""
    fn = (call or {}).get("function") or {}
    if run["name"] is not None and fn.get("name") is not None and run["name"] != fn["name"]:
        return False
    known = run["arguments"] is not None and fn.get("arguments") is not None
    return not known or _value(fn["arguments"]) == _value(run["arguments"])
