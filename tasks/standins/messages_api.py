"""The offline judge behind Anthropic's Messages API (POST /v1/messages), written from the API's
reference rather than from rubricflow's translation: the key in `x-api-key`, an
`anthropic-version` header, `system` as a field, only user/assistant turns, no field the API does
not define, forced tool use for a structured answer, and the answer as content blocks with
`stop_reason` and `usage.input_tokens`. Tests use it to show that a second wire API is one
provider module (tasks/judging/providers)."""

from __future__ import annotations

import json
from typing import Any

FIELDS = {
    "model",
    "messages",
    "max_tokens",
    "system",
    "temperature",
    "top_p",
    "top_k",
    "stop_sequences",
    "stream",
    "metadata",
    "tools",
    "tool_choice",
    "thinking",
    "service_tier",
}


def error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def refusal(body: Any, headers: dict[bytes, bytes], key: str | None) -> tuple[int, dict[str, Any]] | None:
    """(status, error) for a request the Messages API would refuse, else None."""
    refused = header_refusal(headers, key)
    if refused:
        return refused
    if not isinstance(body, dict):
        return 400, error("invalid_request_error", "the body must be a JSON object")
    extra = sorted(set(body) - FIELDS)
    if extra:
        return 400, error("invalid_request_error", f"{extra[0]}: Extra inputs are not permitted")
    if not isinstance(body.get("max_tokens"), int):
        return 400, error("invalid_request_error", "max_tokens: Field required")
    roles = {m.get("role") for m in body.get("messages") or [] if isinstance(m, dict)}
    if not body.get("messages") or not roles <= {"user", "assistant"}:
        return 400, error("invalid_request_error", "messages: roles must be 'user' or 'assistant'")
    return None


def header_refusal(headers: dict[bytes, bytes], key: str | None) -> tuple[int, dict[str, Any]] | None:
    """(status, error) for headers every Anthropic API request needs (the key, the version), else None."""
    if key is not None and headers.get(b"x-api-key") != key.encode():
        return 401, error("authentication_error", "invalid x-api-key")
    if not headers.get(b"anthropic-version"):
        return 400, error("invalid_request_error", "anthropic-version: header is required")
    return None


def as_chat(body: dict[str, Any]) -> dict[str, Any]:
    """The same question as a chat-completions body, for the offline judge."""
    messages = [{"role": "system", "content": _text(body["system"])}] if body.get("system") else []
    messages += [{"role": m["role"], "content": _text(m.get("content"))} for m in body["messages"]]
    chat: dict[str, Any] = {
        "model": body.get("model"),
        "messages": messages,
        "max_tokens": body["max_tokens"],
        "temperature": body.get("temperature", 1.0),
        "cache_control": breakpoints(body) > 0,  # Anthropic caches only up to a cache_control breakpoint
    }
    if body.get("tools"):
        chat["tools"] = [
            {"type": "function", "function": {"name": t["name"], "parameters": t.get("input_schema") or {}}}
            for t in body["tools"]
        ]
    return chat


def as_message(completion: dict[str, Any]) -> dict[str, Any]:
    """The offline judge's chat completion as a Messages API answer."""
    choice = completion["choices"][0]
    message = choice["message"]
    blocks: list[dict[str, Any]] = []
    for call in message.get("tool_calls") or []:
        try:
            arguments = json.loads(call["function"]["arguments"])
        except ValueError:  # cut off at max_tokens: the API would still return what it parsed
            arguments = {}
        blocks.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"], "input": arguments})
    if isinstance(message.get("content"), str):
        blocks.append({"type": "text", "text": message["content"]})
    stop = {"length": "max_tokens", "tool_calls": "tool_use"}.get(choice["finish_reason"], "end_turn")
    if blocks and blocks[0]["type"] == "tool_use" and stop == "end_turn":
        stop = "tool_use"
    usage = completion.get("usage") or {}
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    return {
        "id": "msg_" + completion["id"].removeprefix("chatcmpl-"),
        "type": "message",
        "role": "assistant",
        "model": completion["model"],
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage.get("prompt_tokens", 0) - cached,
            "cache_read_input_tokens": cached,
            "output_tokens": usage.get("completion_tokens", 0),
        },
    }


def breakpoints(body: dict[str, Any]) -> int:
    """The request's cache_control breakpoints (system blocks and message content blocks)."""
    system = body.get("system")
    blocks: list[Any] = list(system) if isinstance(system, list) else []
    for m in body.get("messages") or []:
        blocks += m.get("content") if isinstance(m.get("content"), list) else []
    return sum(1 for b in blocks if isinstance(b, dict) and b.get("cache_control"))


def _text(content: Any) -> str:
    if isinstance(content, list):  # content blocks
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return str(content or "")
