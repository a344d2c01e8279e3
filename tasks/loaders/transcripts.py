"""Transcripts (OpenAI-style chat: a `messages` list per row, tool calls and the tool results that
answer them) to columns: one row per message, each body stored once by its hash, and one text per
transcript (its canonical rendering) so every scoring path works on it unchanged.

Why columns and hashes: an agent log repeats its system prompt and tool schemas in every transcript;
stored by hash they cost one copy, and the trajectory checks (warehouse/sql/trajectory_checks.sql)
read a few narrow columns instead of parsing JSON again.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

CALL = pa.struct([("id", pa.string()), ("name", pa.string()), ("arguments", pa.string())])
MESSAGES_SCHEMA = pa.schema(
    [
        ("transcript_id", pa.string()),
        ("position", pa.int32()),
        ("role", pa.string()),
        ("body_hash", pa.string()),
        ("name", pa.string()),
        ("tool_calls", pa.list_(CALL)),
        ("tool_call_id", pa.string()),
        ("is_error", pa.bool_()),
        ("step_id", pa.string()),
        ("span_id", pa.string()),
        ("ts", pa.string()),
    ]
)
BODIES_SCHEMA = pa.schema([("body_hash", pa.string()), ("body", pa.string())])
TRANSCRIPTS_SCHEMA = pa.schema(
    [("transcript_id", pa.string()), ("tools_hash", pa.string()), ("message_count", pa.int32())]
)
ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
SEEN_CAP = 200_000  # body hashes remembered while writing: the shared prompts and schemas, not every body


def body_hash(body: str) -> str:
    """A body's key: its MD5, hex (a content key, not a security one; a million transcripts' bodies
    never collide in practice), the md5() DuckDB computes when it ingests a chat file
    (warehouse/chat_files.py), so both paths store a body once."""
    return hashlib.md5(body.encode("utf-8"), usedforsecurity=False).hexdigest()


def is_transcript_record(record: Any) -> bool:
    """A row with a `messages` list (or its JSON text) and no text column of its own."""
    if not isinstance(record, dict) or "messages" not in record:
        return False
    messages = record["messages"]
    return isinstance(messages, list) or (isinstance(messages, str) and messages.lstrip().startswith("["))


REASONING = ("thinking", "redacted_thinking", "reasoning")
# parts whose words are under their type's name (an image's or a file's data under its own never is
# text: Inspect's `{"type": "image", "image": "data:image/png;base64,..."}` stays `[image]`)
WORDS_UNDER_TYPE = ("refusal", "thinking", "reasoning")


def message_text(message: dict, reasoning: bool = True) -> str:
    """A message's text: its reasoning (`_reasoning`) as `[reasoning] ...`, then its
    content's (`content_text`), an audio reply's transcript where it has no text, and an OpenAI
    `refusal` as `[refusal] ...`: words kept outside `content` are words the judge reads."""
    text = content_text(message.get("content"), reasoning)
    audio = message.get("audio")
    if not text and isinstance(audio, dict) and isinstance(audio.get("transcript"), str):
        text = audio["transcript"]
    thought, refusal = _reasoning(message), message.get("refusal")
    parts = [
        f"[reasoning] {thought}" if reasoning and isinstance(thought, str) and thought else "",
        text,
        f"[refusal] {refusal}" if isinstance(refusal, str) and refusal else "",
    ]
    return "\n".join(p for p in parts if p)


def _reasoning(message: dict) -> str | None:
    """A message's reasoning however its provider keeps it: `reasoning_content` (vLLM's, DeepSeek's),
    `reasoning` (OpenRouter's text), or `reasoning_details` (OpenRouter's and verifiers' for signed
    thinking: `reasoning.text` and `reasoning.summary` entries; an encrypted one has no words). One
    provider's reasoning was judged and another's, the same words, was not."""
    for key in ("reasoning_content", "reasoning"):
        if isinstance(message.get(key), str) and message[key]:
            return message[key]
    details = message.get("reasoning_details")
    words = [
        entry.get("text") or entry.get("summary")
        for entry in (details if isinstance(details, list) else ())
        if isinstance(entry, dict) and isinstance(entry.get("text") or entry.get("summary"), str)
    ]
    return "\n".join(w for w in words if w) or None


def unmerged(record: Any) -> Any:
    """A transcript row read from Arrow (Parquet, a Hugging Face dataset, a DataFrame) with its tool
    calls' argument objects, and its tools' schemas, as the row wrote them: Arrow stores every row's
    objects of one column as one struct, so each call carried the other calls' argument names as
    nulls (`{"city": "Paris", "query": null}`). A null is dropped, as the struct cannot tell it from
    an absent key."""
    if not isinstance(record, dict) or not isinstance(record.get("messages"), list):
        return record
    out = {**record, "messages": [_unmerged_message(m) for m in record["messages"]]}
    if isinstance(record.get("tools"), list):  # the tools' schemas: each had the others' properties as nulls
        out["tools"] = _no_nulls(record["tools"])
    return out


def json_or_as_is(value: Any) -> Any:
    """A value that may be JSON text, read: a row's `tools` (a DataFrame's rows, a dataset that
    stores them as a string, as xLAM's do), a span attribute's JSON; anything else as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _unmerged_message(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    out = dict(message)
    if isinstance(message.get("content"), list):
        out["content"] = [
            {**p, "input": _no_nulls(p["input"])} if _is_call(p) and isinstance(p.get("input"), dict) else p
            for p in message["content"]
        ]
    if isinstance(message.get("tool_calls"), list):
        out["tool_calls"] = [_unmerged_call(c) for c in message["tool_calls"]]
    return out


def _unmerged_call(call: Any) -> Any:
    fn = call.get("function") if isinstance(call, dict) else None
    if isinstance(fn, dict) and isinstance(fn.get("arguments"), dict):
        return {**call, "function": {**fn, "arguments": _no_nulls(fn["arguments"])}}
    return call


def _no_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _no_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_no_nulls(v) for v in value]
    return value


def content_text(content: Any, reasoning: bool = True) -> str:
    """A message's content as text: a string as it is, content parts joined (text parts' text, other
    parts named by type, e.g. `[image_url]`), nothing as the empty string. `reasoning=False` leaves
    out thinking parts: a reply judged as an answer is the answer, not the thoughts before it."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _part_text(part)
            for part in content
            if reasoning or not (isinstance(part, dict) and part.get("type") in REASONING)
        )
    return json.dumps(content, ensure_ascii=False)


def _part_text(part: Any) -> str:
    """One content part as text: its text; a part that carries its words under its type's name
    (`{"type": "refusal", "refusal": ...}`, Anthropic's `thinking`) headed by that type; a search
    result as its title and address; anything else named by its type, `[image_url]`."""
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return f"[{type(part).__name__}]"
    kind = part.get("type", "part")
    if isinstance(part.get("text"), str):
        return part["text"]
    if isinstance(part.get("text"), dict) and isinstance(part["text"].get("value"), str):
        return part["text"]["value"]  # the Assistants API's `{"type": "text", "text": {"value": ...}}`
    if kind in WORDS_UNDER_TYPE and isinstance(part.get(kind), str):
        return f"[{kind}] {part[kind]}"
    # the page a search found (only a search result's: an image block's url may be its data)
    if kind == "web_search_result" and isinstance(part.get("url"), str):
        return f"{part.get('title') or ''} <{part['url']}>".strip()
    return f"[{kind}]"


def tool_calls_of(message: dict, number: int) -> list[dict]:
    """The message's tool calls as (id, name, arguments-as-JSON-text); a legacy `function_call` is
    one, and a custom call's free-text input is its arguments (a namespaced name: `namespace.name`)."""
    calls = message.get("tool_calls") or []
    if message.get("function_call"):
        calls = [*calls, {"id": None, "function": message["function_call"]}]
    if not isinstance(calls, list):
        raise ValueError(f"message {number}: tool_calls is not a list")
    out = []
    for call in calls:
        # a function call, or a custom one (`{"type": "custom", "custom": {"name", "input"}}`: free text)
        fn = (call.get("function") or call.get("custom")) if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise ValueError(f"message {number}: a tool call without function.name (or custom.name)")
        arguments = fn.get("arguments", fn.get("input"))
        if arguments is not None and not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        name = f"{fn['namespace']}.{fn['name']}" if isinstance(fn.get("namespace"), str) else fn["name"]
        out.append({"id": _str(call.get("id")), "name": name, "arguments": arguments})
    return out


COLUMNS = [f.name for f in MESSAGES_SCHEMA if f.name != "transcript_id"]


@dataclass
class Transcript:
    """One transcript's rows as columns (MESSAGES_SCHEMA's, less the id), its bodies, its rendering."""

    transcript_id: str
    columns: dict[str, list]
    bodies: dict[str, str]
    rendering: str
    tools_hash: str | None
    tools_body: str | None

    @property
    def message_count(self) -> int:
        return len(self.columns["position"])


def parse_messages(messages: Any) -> list[dict]:
    """The messages of a row, checked: a list of objects each with a known role; a ValueError names
    the first message that is not."""
    if isinstance(messages, str):
        try:
            messages = json.loads(messages)
        except json.JSONDecodeError as exc:
            raise ValueError(f"messages is not JSON: {exc.msg}") from None
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages is not a non-empty list")
    for number, message in enumerate(messages):
        if not isinstance(message, dict):
            raise ValueError(f"message {number}: not an object")
        role = message.get("role")
        if not isinstance(role, str) or role not in ROLES:  # a list or object: unhashable, a TypeError
            raise ValueError(f"message {number}: role {message.get('role')!r} is not one of {sorted(ROLES)}")
    return [piece for number, message in enumerate(messages) for piece in _tool_blocks(message, number)]


CALL_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")


def _is_call(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") in CALL_BLOCKS


def _is_result(part: Any) -> bool:
    """A client tool's `tool_result`, an MCP `mcp_tool_result`, or a server tool's result
    (`web_search_tool_result`, `code_execution_tool_result`, ...)."""
    kind = part.get("type") if isinstance(part, dict) else None
    return isinstance(kind, str) and (kind == "mcp_tool_result" or kind.endswith("tool_result"))


def _tool_blocks(message: dict, number: int) -> list[dict]:
    """Anthropic's content blocks in the chat shape, where they were once only `[tool_use]` and
    `[tool_result]`: a call block (`tool_use`, a server tool's `server_tool_use`, `mcp_tool_use`) is
    a tool call of its assistant turn, and each result block a tool message answering it. A user
    turn's results come ahead of its own text, as the API puts them; an assistant turn's server tool
    results stand where they are, between the calls they answer and the text that follows."""
    content = message.get("content")
    if not isinstance(content, list) or not any(_is_call(p) or _is_result(p) for p in content):
        return [message]
    uses = [p for p in content if _is_call(p)]
    if uses and message["role"] != "assistant":
        raise ValueError(f"message {number}: tool_use blocks in a {message['role']} message")
    nameless = [p["type"] for p in uses if not isinstance(p.get("name"), str)]
    if nameless:  # named here: later messages' numbers shift
        raise ValueError(f"message {number}: a {nameless[0]} block without a name")
    # the turn's time and ids (not its `name`: a speaker's, where a tool message's names the tool)
    kept = {k: message[k] for k in ("step_id", "span_id", "timestamp", "created_at") if k in message}
    if message["role"] != "assistant":
        results = [_result_message(p, kept) for p in content if _is_result(p)]
        rest = [p for p in content if not _is_result(p)]
        return [*results, {**message, "content": rest}] if rest or not results else results
    given = message.get("tool_calls") or []
    if not isinstance(given, list):
        raise ValueError(f"message {number}: tool_calls is not a list")
    pieces: list[dict] = []
    turn: dict = {**message, "content": [], "tool_calls": list(given)}
    for part in content:
        if _is_result(part):
            if turn["content"] or turn["tool_calls"]:
                pieces.append(turn)
            pieces.append(_result_message(part, kept))
            turn = {**kept, "role": "assistant", "content": [], "tool_calls": []}
        elif _is_call(part):
            turn["tool_calls"].append(_call(part))
        else:
            turn["content"].append(part)
    return [*pieces, turn] if turn["content"] or turn["tool_calls"] or not pieces else pieces


def _call(block: dict) -> dict:
    """A call block as a chat tool call; an MCP call's server is written before its name, `docs.search`."""
    name = f"{block['server_name']}.{block['name']}" if isinstance(block.get("server_name"), str) else block["name"]
    return {"id": block.get("id"), "function": {"name": name, "arguments": block.get("input")}}


def _result_message(block: dict, kept: dict) -> dict:
    """A result block as a tool message. A server tool's error comes as its content
    (`{"type": "web_search_tool_result_error", "error_code": ...}`): the message is a failed result
    whose content is that code."""
    content = block.get("content")
    failed = block.get("is_error")
    if isinstance(content, dict) and str(content.get("type", "")).endswith("_error"):
        content, failed = str(content.get("error_code", content["type"])), True
    elif isinstance(content, dict):  # a code run's result: stdout, stderr, return_code
        content = "\n".join(f"{k}: {_str(v)}" for k, v in content.items() if k != "type" and v not in (None, "", []))
    return {"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": content, "is_error": failed} | kept


def transcript_of(transcript_id: str, messages: list[dict], tools: Any = None) -> Transcript:
    """The transcript's rows and its canonical rendering (see `render_message`)."""
    columns: dict[str, list] = {name: [] for name in COLUMNS}
    bodies, lines, names = {}, [], {}
    holders: dict[str, tuple[int, list]] = {}  # a call id -> its latest message and the calls there holding it
    for position, message in enumerate(messages):
        body = message_text(message)
        digest = body_hash(body)
        bodies[digest] = body
        calls = tool_calls_of(message, position)
        names.update({c["id"]: c["name"] for c in calls if c["id"] is not None})  # "" too, as DuckDB's path links it
        link = _str(message.get("tool_call_id"))
        _check_link(position, link, calls, holders)
        failed = _failed(message.get("is_error")) or _failed(message.get("error"))
        values = (
            position,
            message["role"],
            digest,
            _str(message.get("name")),
            calls or None,
            link,
            failed or None,
            _str(message.get("step_id")),
            _str(message.get("span_id")),
            _str(message["timestamp"] if message.get("timestamp") is not None else message.get("created_at")),
        )
        for name, value in zip(COLUMNS, values, strict=True):
            columns[name].append(value)
        lines.append(render_message(position, message["role"], body, calls, link, names, failed))
    tools_body = json.dumps(tools, ensure_ascii=False, separators=(",", ":")) if tools else None  # as DuckDB writes it
    tools_key = body_hash(tools_body) if tools_body else None
    return Transcript(transcript_id, columns, bodies, "\n".join(lines), tools_key, tools_body)


def _check_link(position: int, link: str | None, calls: list[dict], holders: dict[str, tuple[int, list]]) -> None:
    """A result answers the latest call with its id (ids are reused turn after turn); where two calls
    of that message share the id, which one it answers is unknown (OpenAI's, Anthropic's and the
    OpenTelemetry GenAI ids are unique per call): refused, not named after either. `holders`: each
    id's latest message, with the names of its calls holding the id."""
    held: dict[str, list] = {}
    for c in calls:
        if c["id"] is not None:
            held.setdefault(c["id"], []).append(c["name"])
    holders.update({cid: (position, names) for cid, names in held.items()})
    at, names = holders.get(link, (position, [])) if link is not None else (position, [])
    if len(names) > 1:
        raise ValueError(
            f"message M{position}: its tool_call_id {link!r} is the id of {len(names)} calls of M{at} "
            f"({', '.join(names)}): a result must name one call"
        )


def render_message(
    position: int,
    role: str,
    body: str,
    calls: list[dict],
    tool_call_id: str | None,
    names: dict[str, str],
    failed: bool = False,
) -> str:
    """`[M3] assistant: ...` with its tool calls as `-> call name(arguments) #id`, a tool result as
    `[M4] tool (result of name #id): ...`: the message ids evidence cites. A result its source marked
    as an error says so, `(result of name #id, failed)`: an agent that reports a failed call as done
    is judged on what the judge can see (warehouse/sql/chats_stage.sql renders it the same way)."""
    head = f"[M{position}] {role}"
    failure = ", failed" if failed else ""
    if tool_call_id is not None:
        head += f" (result of {names.get(tool_call_id, '?')} #{tool_call_id}{failure})"
    elif failed:
        head += " (failed)"
    out = [f"{head}: {body}"]
    out += [f"  {called(c)} #{c['id'] or ''}" for c in calls]
    return "\n".join(out)


def called(call: dict) -> str:
    """A tool call (`tool_calls_of`'s) as the rendering writes it: `-> call name(arguments)`."""
    return f"-> call {call['name']}({call['arguments'] or ''})"


def _failed(value: Any) -> bool:
    """Whether a message's `is_error` or `error` marks a failed tool result: the text "false" or "0"
    does not (it was stored as an error), as warehouse/sql/chats_stage.sql reads it."""
    if isinstance(value, str):
        text = value.strip(" \t\n\r\f\v").lower()  # ASCII whitespace, as chats_stage.sql trims it
        if text in ("", "false", "0", "null", "[]", "{}"):
            return False
        try:
            return float(text) != 0  # "0.0": no failure, as DuckDB's try_cast reads it
        except ValueError:
            return True
    return bool(value)


def id_text(value: Any) -> str:
    """A row's id as text: a string as it is, any other value as compact JSON (an object id was
    written as Python's repr, `{'run': 1}`, where DuckDB's path writes `{"run":1}`)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _str(value: Any) -> str | None:
    if value is None:
        return None
    return id_text(value)  # compact, as DuckDB writes a JSON value as text (warehouse/chat_files.py)


@dataclass
class TranscriptWriter:
    """Streams transcripts into messages.parquet, bodies.parquet and transcripts.parquet of a corpus
    folder, in batches of columns (memory stays flat); each file is replaced atomically on `close`."""

    out_dir: Path
    batch_rows: int = 100_000  # messages per written batch
    messages_written: int = 0
    _seen: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.paths = {n: self.out_dir / f"{n}.parquet" for n in ("messages", "bodies", "transcripts")}
        schemas = {"messages": MESSAGES_SCHEMA, "bodies": BODIES_SCHEMA, "transcripts": TRANSCRIPTS_SCHEMA}
        self._writers = {
            n: pq.ParquetWriter(p.with_suffix(".parquet.tmp"), schemas[n], compression="zstd")
            for n, p in self.paths.items()
        }
        self._clear()

    def _clear(self) -> None:
        self._messages: dict[str, list] = {f.name: [] for f in MESSAGES_SCHEMA}
        self._bodies: dict[str, str] = {}
        self._transcripts: dict[str, list] = {f.name: [] for f in TRANSCRIPTS_SCHEMA}

    def add(self, transcript: Transcript) -> None:
        count = transcript.message_count
        self._messages["transcript_id"].extend([transcript.transcript_id] * count)
        for name, values in transcript.columns.items():
            self._messages[name].extend(values)
        extra = (
            {transcript.tools_hash: transcript.tools_body} if transcript.tools_hash and transcript.tools_body else {}
        )
        for digest, body in {**transcript.bodies, **extra}.items():
            if digest not in self._seen:
                self._bodies[digest] = body
                self._seen.add(digest)
        if len(self._seen) > SEEN_CAP:  # forget: a body seen again is written again, the load keeps one
            self._seen.clear()
        for name, value in zip(
            TRANSCRIPTS_SCHEMA.names, (transcript.transcript_id, transcript.tools_hash, count), strict=True
        ):
            self._transcripts[name].append(value)
        if len(self._messages["position"]) >= self.batch_rows:
            self.flush()

    def flush(self) -> None:
        self._write("messages", pa.table(self._messages, schema=MESSAGES_SCHEMA))
        bodies = pa.table({"body_hash": list(self._bodies), "body": list(self._bodies.values())}, schema=BODIES_SCHEMA)
        self._write("bodies", bodies)
        self._write("transcripts", pa.table(self._transcripts, schema=TRANSCRIPTS_SCHEMA))
        self.messages_written += len(self._messages["position"])
        self._clear()

    def _write(self, name: str, table: pa.Table) -> None:
        if table.num_rows:
            self._writers[name].write_table(table)

    def close(self, keep: bool) -> None:
        """Finish the files: `keep` moves them into place, else they are removed."""
        if keep:
            self.flush()
        for name, writer in self._writers.items():
            writer.close()
            tmp = self.paths[name].with_suffix(".parquet.tmp")
            tmp.replace(self.paths[name]) if keep else tmp.unlink(missing_ok=True)


def remove_transcript_files(out_dir: Path) -> None:
    """A corpus re-ingested from plain texts has no transcripts left."""
    for name in ("messages", "bodies", "transcripts"):
        (out_dir / f"{name}.parquet").unlink(missing_ok=True)
