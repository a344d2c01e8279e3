"""What the judge reads of a rollout. A rollout is `{"completion": ..., "prompt": ..., "id": ...,
"context": ...}`, each of `completion` and `prompt` a string or a list of chat messages (tool calls
included). The `last_reply` view judges the completion's last assistant text; `full_trace` judges
the whole completion as the transcript loader renders one (`[M3] assistant: ...`, each tool call and
result on its own line: tasks/loaders/transcripts.py), so a tool-using rollout is judged on what it did.
The request is the prompt's last user text either way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from rubricflow.errors import InputError
from rubricflow.tasks.loaders.transcripts import called, message_text, parse_messages, tool_calls_of, transcript_of

View = Literal["last_reply", "full_trace"]
VIEWS = ("last_reply", "full_trace")


@dataclass(frozen=True)
class Rollout:
    id: str
    text: str
    input: str | None = None
    context: str | None = None
    # A rendered trace's own words (its assistant texts and tool calls), screened in place of `text`,
    # whose other lines (the user's turns, tool results) the agent did not write; None: `text` is them.
    replies: tuple[str, ...] | None = None


def read_rollouts(raw: Any, view: str) -> list[Rollout]:
    """The request's rollouts, each checked; a bad one is named by its position and field."""
    if view not in VIEWS:
        raise InputError(f"view {view!r} is not one of {', '.join(VIEWS)}")
    if not isinstance(raw, list) or not raw:
        raise InputError("rollouts: expected a non-empty list of rollouts")
    return [read_rollout(n, entry, view) for n, entry in enumerate(raw)]


def read_rollout(n: int, raw: Any, view: str) -> Rollout:
    if isinstance(raw, str):
        return Rollout(str(n), raw)
    if not isinstance(raw, dict) or "completion" not in raw:
        raise InputError(f"rollout {n}: expected an object with a 'completion' (a string or a list of messages)")
    context, given = raw.get("context"), raw.get("id")
    given = n if given is None else given  # no id: its position
    if context is not None and not isinstance(context, str):
        raise InputError(f"rollout {n}: context is a {type(context).__name__}, not a string")
    if not isinstance(given, str | int) or isinstance(given, bool):
        beyond = (
            " (a whole number past 64 bits is read as one: send it as a string)" if isinstance(given, float) else ""
        )
        raise InputError(f"rollout {n}: id is a {type(given).__name__}, not a string or a whole number{beyond}")
    text, prompt = _field(n, "completion", _completion_text, raw["completion"], view), None
    if raw.get("prompt") is not None:
        prompt = _field(n, "prompt", _last_user, raw["prompt"])
    replies = _replies(raw["completion"]) if view == "full_trace" else None
    return Rollout(str(given), text, prompt, context, replies)


def _field(n: int, name: str, read, *args: Any) -> Any:
    """A rollout's field read, its fault named (a message whose role or tool-call id is a list
    failed inside the reader, with a TypeError the server answered as its own fault, a 500)."""
    try:
        return read(*args)
    except (ValueError, TypeError) as exc:
        raise InputError(f"rollout {n}: {name}: {exc}") from None


def _completion_text(completion: Any, view: str) -> str:
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and not completion:
        return ""  # no reply at all: the empty screen answers it
    messages = _messages(completion)
    if view == "full_trace":
        return transcript_of("rollout", messages).rendering
    for number, message in enumerate(messages):  # a malformed call is the client's 400 in either view
        tool_calls_of(message, number)
    replies = [message_text(m, reasoning=False) for m in messages if m["role"] == "assistant"]
    return next((r for r in reversed(replies) if r.strip()), "")


def _messages(raw: Any) -> list[dict]:
    """A rollout's messages, checked: each one's content text, a list of parts, or none. A number,
    true or an object was judged as its JSON text (and shared its cache entry with that string)."""
    for number, message in enumerate(raw if isinstance(raw, list) else ()):
        content = message.get("content") if isinstance(message, dict) else None
        if content is not None and not isinstance(content, str | list):
            raise ValueError(f"message {number}: content is a {type(content).__name__}, not text or a list of parts")
        for k, part in enumerate(content if isinstance(content, list) else ()):  # a number was judged as "[int]"
            if not isinstance(part, str | dict):
                raise ValueError(f"message {number}: content part {k} is not text or an object: {str(part)[:40]}")
    if not isinstance(raw, str | list):
        raise ValueError(f"expected a string or a list of messages, not {str(raw)[:40]}")
    return parse_messages(raw)


def _replies(completion: Any) -> tuple[str, ...] | None:
    """A trace's own words: each assistant message's text, and each of its tool calls as the
    transcript writes one (read already: its faults were named). A string completion: None."""
    if not isinstance(completion, list):
        return None
    messages = parse_messages(completion) if completion else []
    return tuple(
        "\n".join([message_text(m), *(called(c) for c in tool_calls_of(m, n))])
        for n, m in enumerate(messages)
        if m["role"] == "assistant"
    )


def _last_user(prompt: Any) -> str | None:
    if prompt is None or isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list) and not prompt:
        return None  # no messages: no request, as a completion of none is no reply
    messages = _messages(prompt)
    users = [message_text(m) for m in messages if m["role"] == "user"]
    return users[-1] if users else None
