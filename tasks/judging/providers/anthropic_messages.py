"""Anthropic's Messages API (POST /v1/messages): the system prompt is a field of its own, the key
goes in `x-api-key` with an `anthropic-version` header, a structured answer is a forced tool call,
and the answer is a list of content blocks with `stop_reason` and `usage.input_tokens`. Requests
are translated from chat completions and answers back, so the judge negotiates output modes,
retries and reads answers exactly as it does for OpenAI-compatible endpoints.
Spec: https://docs.anthropic.com/en/api/messages"""

from __future__ import annotations

import json
import time
from typing import Any

from openai import Omit
from openai.types.chat import ChatCompletion

from rubricflow.rubrics.render import RUBRIC_MARK

from .base import Capabilities, Provider

VERSION = "2023-06-01"
ANSWER_TOOL = "answer"  # the forced tool that carries a json_schema / json_object answer
EPHEMERAL = {"type": "ephemeral"}  # a prompt-cache breakpoint (cached 5 minutes; Anthropic caches from 1,024 tokens)
STOP_REASONS = {"max_tokens": "length", "tool_use": "tool_calls", "refusal": "content_filter"}


class AnthropicMessages(Provider):
    name = "anthropic"
    otel_name = "anthropic"
    key_variables = ("ANTHROPIC_API_KEY",)
    base_url_variable = "ANTHROPIC_BASE_URL"
    default_base_url = "https://api.anthropic.com/v1"
    path = "/messages"
    # json_object is asked as the same forced tool as json_schema; no logprobs, Message Batches for
    # --batch, `system` is a field of its own, and max_tokens is always max_tokens
    capabilities = Capabilities(
        logprobs=False,
        batch="anthropic",
        system_role="field",
        reasoning_parameters=False,
        prompt_cache_key=False,
        output_modes=("json_schema", "tools", "text"),
    )

    def headers(self, key: str) -> dict[str, Any]:
        return {"x-api-key": key, "anthropic-version": VERSION}

    def request_headers(self) -> dict[str, Any]:
        return {"Authorization": Omit()}  # the key goes in x-api-key only

    def request(self, body: dict[str, Any]) -> dict[str, Any]:
        system = "\n\n".join(str(m.get("content") or "") for m in body["messages"] if m.get("role") == "system")
        wire: dict[str, Any] = {
            "model": body["model"],
            "max_tokens": body.get("max_tokens") or body.get("max_completion_tokens") or 1024,
            "messages": [
                {"role": m["role"], "content": m.get("content") or ""}
                for m in body["messages"]
                if m.get("role") != "system"
            ],
        }
        if system:  # the rubric (or, text-first, its shared sections): a cache breakpoint after it
            wire["system"] = [{"type": "text", "text": system, "cache_control": EPHEMERAL}]
        wire["messages"] = [_text_first_breakpoint(m) for m in wire["messages"]]
        if body.get("temperature") is not None:
            wire["temperature"] = body["temperature"]
        wire.update(_tools(body))
        return wire  # seed, logprobs and response_format have no counterpart: not sent

    def response(self, answer: Any) -> Any:
        if not isinstance(answer, dict) or not isinstance(answer.get("content"), list):
            return answer
        texts = [b.get("text", "") for b in answer["content"] if isinstance(b, dict) and b.get("type") == "text"]
        calls = [b for b in answer["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
        message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
        finish = STOP_REASONS.get(str(answer.get("stop_reason")), "stop")
        if finish == "content_filter":  # the model declined: said as a refusal, as chat completions do
            message = {"role": "assistant", "content": None, "refusal": "".join(texts) or "refused"}
        if calls and calls[0].get("name") == ANSWER_TOOL:  # asked as JSON: the tool's input is the answer
            message["content"] = json.dumps(calls[0].get("input"))
            finish = "length" if finish == "length" else "stop"
        elif calls:
            message["tool_calls"] = [
                {
                    "id": c.get("id", ""),
                    "type": "function",
                    "function": {"name": c.get("name", ""), "arguments": json.dumps(c.get("input"))},
                }
                for c in calls
            ]
        return ChatCompletion.model_validate(
            {
                "id": str(answer.get("id", "")),
                "object": "chat.completion",
                "created": int(time.time()),
                "model": str(answer.get("model", "")),
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": _usage(answer.get("usage")),
            }
        )


def _text_first_breakpoint(message: dict[str, Any]) -> dict[str, Any]:
    """A text-first user turn (rubrics/render.arranged) as two blocks, a cache breakpoint after the
    fenced text: a text's other criteria read it from the cache. Other turns stay as they are."""
    content = message["content"]
    if message["role"] != "user" or not isinstance(content, str) or RUBRIC_MARK not in content:
        return message
    text, _, rest = content.rpartition(RUBRIC_MARK)
    blocks = [{"type": "text", "text": text, "cache_control": EPHEMERAL}, {"type": "text", "text": RUBRIC_MARK + rest}]
    return {**message, "content": blocks}


def _tools(body: dict[str, Any]) -> dict[str, Any]:
    """A json_schema or json_object answer becomes one forced tool whose input is the answer;
    function tools become Anthropic tools (input_schema), tool_choice follows."""
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") if fmt.get("type") == "json_schema" else fmt.get("schema")
    if fmt.get("type") in ("json_schema", "json_object"):
        tool = {"name": ANSWER_TOOL, "description": "Give the answer.", "input_schema": schema or {"type": "object"}}
        return {"tools": [tool], "tool_choice": {"type": "tool", "name": ANSWER_TOOL}}
    if not body.get("tools"):
        return {}
    tools = [
        {
            "name": t["function"]["name"],
            "description": t["function"].get("description", ""),
            "input_schema": t["function"].get("parameters") or {"type": "object"},
        }
        for t in body["tools"]
    ]
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("function"):
        return {"tools": tools, "tool_choice": {"type": "tool", "name": choice["function"]["name"]}}
    return {"tools": tools}


def _usage(usage: Any) -> dict[str, Any] | None:
    if not isinstance(usage, dict):
        return None
    cached = usage.get("cache_read_input_tokens") or 0
    prompt = (usage.get("input_tokens") or 0) + cached + (usage.get("cache_creation_input_tokens") or 0)
    completion = usage.get("output_tokens") or 0
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
