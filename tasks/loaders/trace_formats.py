"""Agent-trace files to transcript records in the canonical shape (`{"id", "messages", "tools"}`,
OpenAI-style chat messages), which the ingest then reads as it reads an OpenAI chat JSONL.

Formats: `openai` (chat JSONL, `messages` per line: read as it is), `otel` (OpenTelemetry GenAI
spans: an OTLP JSON export, its JSON lines, or span attribute maps), `openinference` (OpenInference
spans), `inspect` (an Inspect AI `.eval` log: a zip of JSON, one transcript per sample and epoch)
and `atif` (a Harbor ATIF trajectory JSON). Spans are grouped by trace (tasks/loaders/trace_spans.py).
"""

from __future__ import annotations

import json
import re
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rubricflow.errors import InputError
from rubricflow.tasks.loaders.trace_spans import flat_spans, merge_spans, otlp_spans
from rubricflow.tasks.loaders.transcripts import content_text

FORMATS = ("openai", "otel", "openinference", "inspect", "atif")
Row = tuple[int, Any, str | None]


def detect_format(path: Path) -> str | None:
    """The trace format of a file, from its suffix and first record; None for anything else (a plain
    corpus, or an OpenAI chat JSONL, which the ingest reads as it is)."""
    if path.is_dir():
        return None
    if path.suffix.lower() == ".eval":
        return "inspect"
    if path.suffix.lower() not in (".json", ".jsonl", ".ndjson"):
        return None
    head = _first_record(path)
    if isinstance(head, list) and head:
        head = head[0]
    if not isinstance(head, dict):
        return None
    if str(head.get("schema_version", "")).upper().startswith("ATIF"):
        return "atif"
    if "resourceSpans" in head:
        return "otel"
    attributes = head.get("attributes")
    if isinstance(attributes, list):  # an OTLP span on its own: key/value pairs
        attributes = {kv.get("key"): None for kv in attributes if isinstance(kv, dict)}
    if isinstance(attributes, dict) and isinstance(attributes.get("llm"), dict):  # Phoenix's nested attributes
        return "openinference"
    keys = {k for k in (attributes if isinstance(attributes, dict) else head) if isinstance(k, str)}
    if "openinference.span.kind" in keys or any(k.startswith("llm.") for k in keys):
        return "openinference"
    if any(k.startswith("gen_ai.") for k in keys):
        return "otel"
    return None


def first_record(path: Path) -> Any:
    """A JSON or JSON-lines file's first record (a JSON file's first element); None where none reads."""
    head = _first_record(path)
    return head[0] if isinstance(head, list) and head else head


def _first_record(path: Path) -> Any:
    try:
        if path.suffix.lower() == ".json":
            return json.loads(path.read_bytes())
        with path.open("rb") as fh:
            line = next((raw for raw in fh if raw.strip()), b"")
        return json.loads(line) if line else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def check_format(fmt: str) -> str:
    """A format this module reads, else an InputError naming the ones it does."""
    if fmt not in FORMATS:
        raise InputError(f"--format {fmt!r}: not one of {', '.join(FORMATS)}")
    return fmt


def trace_records(path: Path, fmt: str) -> Iterator[Row]:
    """(row number, canonical record or None, error) for each transcript of the file."""
    check_format(fmt)
    if fmt == "inspect":
        return _inspect_records(path)
    documents = list(_documents(path))
    if fmt == "atif":
        return (
            _built(number, "an ATIF trajectory", atif_record, doc, path)
            if isinstance(doc, dict) and "steps" in doc
            else (number, None, "not an ATIF trajectory (no steps)")
            for number, doc in documents
        )
    return _span_records(documents, fmt)


# What a field of another type than the format's raises while a record is built (a step that is a
# string, a source that is a list, a number that is not one), or a text no UTF-8 encodes: the row's
# fault, named in one line (each was a traceback).
UNREADABLE = (AttributeError, TypeError, KeyError, ValueError, RecursionError)


def _built(number: int, what: str, build, *args: Any) -> Row:
    """(number, the record `build` makes, None), or (number, None, why it is not `what`)."""
    try:
        record = build(*args)
        json.dumps(record, ensure_ascii=False).encode()  # a lone surrogate (a \\ud800 escape) failed in pyarrow
    except UNREADABLE as exc:
        return number, None, f"not {what}: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    return number, record, None


def _documents(path: Path) -> Iterator[tuple[int, Any]]:
    """A .json file's one document, or a JSON-lines file's documents with their line numbers."""
    try:
        if path.suffix.lower() == ".json":
            yield 1, json.loads(path.read_bytes())
            return
        with path.open("rb") as fh:
            for number, raw in enumerate(fh, start=1):
                if raw.strip():
                    try:
                        yield number, json.loads(raw)
                    except (ValueError, RecursionError) as exc:  # the line named, not the JSON's own line 1
                        raise InputError(f"{path}: line {number}: not readable JSON: {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{path}: not readable JSON: {exc}") from None


def _span_records(documents: list[tuple[int, Any]], fmt: str) -> Iterator[Row]:
    """Spans of every document grouped by trace id (in first-seen order), one transcript per trace."""
    traces: dict[Any, list[dict]] = {}
    rows: dict[Any, int] = {}
    for number, doc in documents:
        _, spans, why = _built(number, f"{fmt} spans", _spans_of, doc)
        if why:
            yield number, None, why
        for k, span in enumerate(spans or ()):
            # a span without a trace id is a trace of its own: two such lines are no evidence of one run
            key = span["trace_id"] or ("", number, k)
            traces.setdefault(key, []).append(span)
            rows.setdefault(key, number)
    for key, spans in traces.items():
        trace_id = key if isinstance(key, str) else ""
        _, merged, why = _built(rows[key], f"a trace of {fmt} spans", merge_spans, spans)
        if why:
            yield rows[key], None, f"trace {trace_id or '(no id)'}: {why}"
            continue
        messages, tools = merged
        if not messages:
            yield rows[key], None, f"trace {trace_id or '(no id)'}: no {fmt} messages in its spans"
            continue
        record = {"messages": messages, "tools": tools, "format": fmt, "spans": len(spans)}
        yield rows[key], ({"id": trace_id, **record} if trace_id else record), None


def _spans_of(doc: Any) -> list[dict]:
    """A document's spans: an OTLP export's (or a list of exports'), else the flat ones
    (OpenInference, a span per line, an OTLP span on its own)."""
    if isinstance(doc, list) and doc and all(isinstance(d, dict) and "resourceSpans" in d for d in doc):
        return [span for export in doc for span in otlp_spans(export)]
    return list(otlp_spans(doc) if isinstance(doc, dict) and "resourceSpans" in doc else flat_spans(doc))


def atif_record(doc: dict, path: Path) -> dict:
    """An ATIF trajectory: system / user steps as those roles, agent steps as assistant messages with
    their tool calls, each observation result as a tool message answering its `source_call_id`."""
    messages: list[dict] = []
    steps = doc.get("steps")
    if not isinstance(steps, list) or not steps:
        raise ValueError("steps is not a non-empty list")
    for number, step in enumerate(steps):
        _atif_step(number, step)
        role = {"agent": "assistant", "system": "system", "user": "user"}.get(step.get("source"), "user")
        message: dict = {"role": role, "content": _atif_content(step.get("message")), "step_id": step.get("step_id")}
        if isinstance(step.get("reasoning_content"), str):  # an agent step's reasoning, read as `[reasoning] ...`
            message["reasoning_content"] = step["reasoning_content"]
        if step.get("timestamp"):
            message["timestamp"] = step["timestamp"]
        calls = [
            _tool_call(c.get("tool_call_id"), c.get("function_name"), c.get("arguments"))
            for c in step.get("tool_calls") or []
        ]
        if calls:
            message["tool_calls"] = calls
        messages.append(message)
        for result in (step.get("observation") or {}).get("results") or []:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": result.get("source_call_id"),
                    "content": _atif_content(result.get("content")),
                    "is_error": result.get("is_error"),
                    "step_id": step.get("step_id"),
                }
            )
    agent = doc.get("agent") or {}
    return {
        "id": doc.get("session_id") or path.stem,
        "messages": messages,
        "tools": agent.get("tool_definitions"),
        "format": "atif",
        "agent": agent.get("name"),
        "model": agent.get("model_name"),
    }


def _atif_step(number: int, step: Any) -> None:
    """A step's fields of another shape, named as ATIF writes them (a tool call without a
    function_name was 'a tool call without function.name', an observation list an AttributeError)."""
    if not isinstance(step, dict):
        raise ValueError(f"step {number} is a {type(step).__name__}, not an object")
    observation = step.get("observation")
    if observation is not None and not isinstance(observation, dict):
        raise ValueError(f"step {number}: observation is a {type(observation).__name__}, not an object")
    for field, items in (
        ("tool_calls", step.get("tool_calls")),
        ("observation.results", (observation or {}).get("results")),
    ):
        if items is not None and (not isinstance(items, list) or not all(isinstance(i, dict) for i in items)):
            raise ValueError(f"step {number}: {field} is not a list of objects")
    for call in step.get("tool_calls") or []:
        if not isinstance(call.get("function_name"), str):
            raise ValueError(f"step {number}: a tool call without a function_name")


def _atif_content(content: Any) -> Any:
    """A step's message: text, or (ATIF >= 1.6) a list of content parts, kept as parts."""
    return content if isinstance(content, str | list) or content is None else json.dumps(content, ensure_ascii=False)


ATTACHMENT = re.compile(r"attachment://([0-9a-f]{32})")
# a zip member that cannot be read back: damaged deflate data, a wrong CRC, a truncated member
DAMAGED = (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError)


def _inspect_records(path: Path) -> Iterator[Row]:
    """An Inspect `.eval` log: each `samples/<id>_epoch_<n>.json` is one transcript, its messages
    with `attachment://` references resolved from the sample's attachments."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(f"{path}: not an Inspect .eval log (a zip of JSON): {exc}") from None
    with archive:
        try:
            header = json.loads(archive.read("header.json")) if "header.json" in archive.namelist() else {}
        except (*DAMAGED, ValueError, RecursionError) as exc:
            raise InputError(f"{path}: header.json is not readable JSON: {exc}") from None
        if not isinstance(header, dict):
            raise InputError(f"{path}: header.json is a {type(header).__name__}, not an object")
        names = sorted(n for n in archive.namelist() if n.startswith("samples/") and n.endswith(".json"))
        for number, name in enumerate(names, start=1):
            try:
                sample = json.loads(archive.read(name))
            except (*DAMAGED, ValueError, RecursionError) as exc:
                yield number, None, f"{name}: not an Inspect sample: {exc}"
                continue
            _, record, why = _built(number, "an Inspect sample", inspect_record, sample, header)
            yield number, record, why and f"{name}: {why}"


def inspect_record(sample: dict, header: dict) -> dict:
    """One Inspect sample as a transcript: tool calls (`function`, `arguments` as an object) as
    OpenAI-style calls, a tool message's `error` as is_error."""
    attachments = sample.get("attachments") or {}

    def resolve(value: Any) -> Any:
        if isinstance(value, str):
            return ATTACHMENT.sub(lambda m: attachments.get(m.group(1), m.group(0)), value)
        if isinstance(value, list):
            return [resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: resolve(v) for k, v in value.items()}
        return value

    given = sample.get("messages")
    if not isinstance(given, list) or not all(isinstance(m, dict) for m in given):
        raise ValueError(f"messages is a {type(given).__name__}, not a list of message objects")
    messages = [_inspect_message(resolve(m)) for m in given]
    evaluation = header.get("eval") or {}
    return {
        "id": f"{sample['id']}_epoch_{sample.get('epoch', 1)}",
        "messages": messages,
        "format": "inspect",
        "task": evaluation.get("task"),
        "model": evaluation.get("model"),
        "target": sample.get("target"),
    }


def _inspect_message(message: dict) -> dict:
    out: dict = {"role": message["role"], "content": _inspect_content(message.get("content"))}
    calls = [_tool_call(c.get("id"), c.get("function"), c.get("arguments")) for c in message.get("tool_calls") or []]
    if calls:
        out["tool_calls"] = calls
    if message.get("tool_call_id") is not None:
        out["tool_call_id"] = message["tool_call_id"]
    if message.get("function"):
        out["name"] = message["function"]
    if message.get("error"):
        out["is_error"] = True
        error = message["error"]
        said = error.get("message") if isinstance(error, dict) else error
        if not content_text(out["content"]).strip() and isinstance(said, str) and said:
            out["content"] = f"Error: {said}"  # as Inspect shows the model a failed call (its content is empty)
    return out


def _inspect_content(content: Any) -> Any:
    """Inspect content: text, or parts (`text`, `reasoning`, `image`...): text parts kept as text."""
    if not isinstance(content, list):
        return content
    return [_inspect_part(p) for p in content if isinstance(p, dict)]


def _inspect_part(part: dict) -> dict:
    """A text part as text, a reasoning part's words as reasoning (`[reasoning] ...`, unless
    redacted), any other part by its type alone (an image's data is no text)."""
    if part.get("type") == "text":
        return {"type": "text", "text": part.get("text") or ""}
    if part.get("type") == "reasoning" and isinstance(part.get("reasoning"), str) and not part.get("redacted"):
        return {"type": "reasoning", "reasoning": part["reasoning"]}
    return {"type": part.get("type", "part")}


def _tool_call(call_id: Any, name: Any, arguments: Any) -> dict:
    """A tool call in the canonical (OpenAI chat) shape."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
