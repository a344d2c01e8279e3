"""The offline judge behind Google's Gemini API (POST /v1beta/models/MODEL:generateContent),
written from the API's reference rather than from rubricflow's translation: the key in
`x-goog-api-key` (a wrong one is a 400 whose reason is API_KEY_INVALID, as Google answers it),
`contents` of `parts` with roles `user` and `model`, `systemInstruction`, `generationConfig`, no
field the API does not define, `responseSchema` in the API's Schema terms, and the answer as
`candidates` with `finishReason` and `usageMetadata`. Tests use it to show that a third wire API is
one provider module (tasks/judging/providers/gemini_generate.py)."""

from __future__ import annotations

import json
from typing import Any

FIELDS = {"contents", "systemInstruction", "generationConfig", "tools", "toolConfig", "safetySettings", "cachedContent"}
CONFIG_FIELDS = {
    "temperature",
    "topP",
    "topK",
    "seed",
    "maxOutputTokens",
    "candidateCount",
    "stopSequences",
    "responseMimeType",
    "responseSchema",
    "responseJsonSchema",
    "responseLogprobs",
    "logprobs",
    "presencePenalty",
    "frequencyPenalty",
    "thinkingConfig",
}
SCHEMA_TYPES = {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"}
FINISH = {"length": "MAX_TOKENS"}


def error(status: int, code: str, message: str, reason: str | None = None) -> tuple[int, dict[str, Any]]:
    details = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}] if reason else []
    return status, {"error": {"code": status, "message": message, "status": code, "details": details}}


def refusal(body: Any, headers: dict[bytes, bytes], key: str | None) -> tuple[int, dict[str, Any]] | None:
    """(status, error) for a request the Gemini API would refuse, else None."""
    if headers.get(b"authorization"):
        return error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials (a bearer token)")
    if key is not None and headers.get(b"x-goog-api-key") != key.encode():
        return error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", "API_KEY_INVALID")
    if not isinstance(body, dict) or not isinstance(body.get("contents"), list) or not body["contents"]:
        return error(400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified")
    unknown = sorted(set(body) - FIELDS) + sorted(set(body.get("generationConfig") or {}) - CONFIG_FIELDS)
    if unknown:
        return error(400, "INVALID_ARGUMENT", f'Invalid JSON payload received. Unknown name "{unknown[0]}"')
    if any(c.get("role") not in ("user", "model") or not c.get("parts") for c in body["contents"]):
        return error(400, "INVALID_ARGUMENT", "Please use a valid role: user, model.")
    schema = (body.get("generationConfig") or {}).get("responseSchema")
    if schema is not None and not _schema_ok(schema):
        return error(400, "INVALID_ARGUMENT", "Invalid JSON payload received. Invalid responseSchema")
    return None


def _schema_ok(schema: Any) -> bool:
    """The API's Schema object: an upper-case type, no additionalProperties."""
    if not isinstance(schema, dict) or "additionalProperties" in schema or "$schema" in schema:
        return False
    if "type" in schema and schema["type"] not in SCHEMA_TYPES:
        return False
    children = [*(schema.get("properties") or {}).values(), *([schema["items"]] if "items" in schema else [])]
    return all(_schema_ok(c) for c in children + list(schema.get("anyOf") or []))


def as_chat(body: dict[str, Any], model: str) -> dict[str, Any]:
    """The same question as a chat-completions body, for the offline judge."""
    system = "".join(p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts") or [])
    messages = [{"role": "system", "content": system}] if system else []
    messages += [
        {
            "role": "assistant" if c["role"] == "model" else "user",
            "content": "".join(p.get("text", "") for p in c["parts"]),
        }
        for c in body["contents"]
    ]
    config = body.get("generationConfig") or {}
    chat: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "max_tokens": config.get("maxOutputTokens", 8192),
        "temperature": config.get("temperature", 1.0),
    }
    if config.get("responseSchema") is not None:  # the offline judge reads the answer's keys from it
        chat["response_format"] = {
            "type": "json_schema",
            "json_schema": {"schema": _json_schema(config["responseSchema"])},
        }
    elif config.get("responseJsonSchema") is not None:  # the same, given as JSON Schema itself
        chat["response_format"] = {"type": "json_schema", "json_schema": {"schema": config["responseJsonSchema"]}}
    elif config.get("responseMimeType") == "application/json":  # JSON only, of any shape
        chat["response_format"] = {"type": "json_object", "schema": {"type": "object"}}
    return chat


def _json_schema(schema: Any) -> Any:
    """The API's Schema object as JSON Schema (lower-case types)."""
    if isinstance(schema, list):
        return [_json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _json_schema(v) if k in ("items", "anyOf") else v for k, v in schema.items() if k != "nullable"}
    if isinstance(schema.get("type"), str):
        out["type"] = schema["type"].lower()
    if "properties" in schema:
        out["properties"] = {name: _json_schema(s) for name, s in schema["properties"].items()}
    return out


def as_generate_content(completion: dict[str, Any]) -> dict[str, Any]:
    """The offline judge's chat completion as a generateContent answer."""
    choice = completion["choices"][0]
    message = choice["message"]
    calls = message.get("tool_calls") or []
    text = calls[0]["function"]["arguments"] if calls else message.get("content")
    usage = completion.get("usage") or {}
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": text if isinstance(text, str) else json.dumps(text)}]},
                "finishReason": FINISH.get(choice["finish_reason"], "STOP"),
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": usage.get("prompt_tokens", 0),
            "candidatesTokenCount": usage.get("completion_tokens", 0),
            "totalTokenCount": usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0),
        },
        "modelVersion": completion["model"],
        "responseId": completion["id"].removeprefix("chatcmpl-"),
    }
