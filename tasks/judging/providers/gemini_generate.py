"""Google's Gemini API (POST /v1beta/models/MODEL:generateContent): the turns are `contents` of
`parts` (the assistant's role is `model`), the system prompt is `systemInstruction`, sampling and
length live in `generationConfig`, a structured answer is asked by `responseMimeType:
application/json` with a `responseSchema` (an OpenAPI subset of JSON Schema), the key goes in the
`x-goog-api-key` header, and the answer is `candidates` with `finishReason` and `usageMetadata`.
Requests are translated from chat completions and answers back, so the judge negotiates output
modes, retries and reads answers exactly as it does for OpenAI-compatible endpoints.
Spec: https://ai.google.dev/api/generate-content"""

from __future__ import annotations

import time
from typing import Any

import openai
from openai import Omit
from openai.types.chat import ChatCompletion

from rubricflow.tasks.judging.failures import FailureKind

from .base import Capabilities, Provider

FINISH_REASONS = {"STOP": "stop", "MAX_TOKENS": "length"}  # any other reason withheld the answer
FILTERED = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE"}
SCHEMA_FIELDS = {  # what responseSchema (the API's Schema object) takes; the rest of JSON Schema is dropped
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
}
SETUP_REASONS = ("API_KEY_INVALID", "FAILED_PRECONDITION", "PERMISSION_DENIED", "UNAUTHENTICATED")


class GeminiGenerate(Provider):
    name = "gemini"
    otel_name = "gcp.gemini"
    key_variables: tuple[str, ...] = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    base_url_variable = "GEMINI_BASE_URL"
    default_base_url = "https://generativelanguage.googleapis.com/v1beta"
    # a schema-constrained JSON answer, a plain JSON one, or text; no Batch API or logprobs
    # translated here, and the system prompt is a field of its own
    capabilities = Capabilities(
        logprobs=False,
        batch=None,
        system_role="field",
        reasoning_parameters=False,
        prompt_cache_key=False,
        output_modes=("json_schema", "json_object", "text"),
    )

    def url_path(self, body: dict[str, Any]) -> str:
        return f"/models/{str(body['model']).removeprefix('models/')}:generateContent"

    def headers(self, key: str) -> dict[str, Any]:
        return {"x-goog-api-key": key}

    def request_headers(self) -> dict[str, Any]:
        return {"Authorization": Omit()}  # the key goes in x-goog-api-key only

    def classify(self, exc: BaseException) -> FailureKind:
        """A bad or missing key, or a project the API refuses (its region, its billing), is answered
        with a 400 naming the reason: the user fixes it, so it is `setup` (planned again), not final."""
        said = f"{exc} {exc.body}" if isinstance(exc, openai.BadRequestError) else ""
        if any(reason in said for reason in SETUP_REASONS):
            return FailureKind.SETUP
        return super().classify(exc)

    def request(self, body: dict[str, Any]) -> dict[str, Any]:
        system = "\n\n".join(str(m.get("content") or "") for m in body["messages"] if m.get("role") == "system")
        wire: dict[str, Any] = {
            "contents": [
                {"role": "model" if m["role"] == "assistant" else "user", "parts": [{"text": _text(m.get("content"))}]}
                for m in body["messages"]
                if m.get("role") != "system"
            ],
            "generationConfig": _generation_config(body),
        }
        if system:
            wire["systemInstruction"] = {"parts": [{"text": system}]}
        return wire

    def response(self, answer: Any) -> Any:
        if not isinstance(answer, dict) or not isinstance(answer.get("candidates", []), list):
            return answer
        if "candidates" not in answer and "promptFeedback" not in answer:
            return answer  # neither an answer nor a blocked prompt: a gateway's page, retried
        candidates = answer.get("candidates") or []
        blocked = (answer.get("promptFeedback") or {}).get("blockReason")
        message: dict[str, Any] = {"role": "assistant", "content": None}
        finish = "content_filter" if blocked else "stop"
        if candidates:
            first = candidates[0]
            parts = (first.get("content") or {}).get("parts") or []
            texts = [p.get("text", "") for p in parts if isinstance(p, dict) and not p.get("thought")]
            message["content"] = "".join(texts) if texts else None
            reason = str(first.get("finishReason") or "STOP")
            finish = "content_filter" if reason in FILTERED else FINISH_REASONS.get(reason, "stop")
        return ChatCompletion.model_validate(
            {
                "id": str(answer.get("responseId", "")),
                "object": "chat.completion",
                "created": int(time.time()),
                "model": str(answer.get("modelVersion", "")),
                "choices": [{"index": 0, "message": message, "finish_reason": finish}] if candidates or blocked else [],
                "usage": _usage(answer.get("usageMetadata")),
            }
        )


def _generation_config(body: dict[str, Any]) -> dict[str, Any]:
    """Sampling, length and the answer's shape; logprobs and tools have no counterpart here."""
    config: dict[str, Any] = {"maxOutputTokens": body.get("max_tokens") or body.get("max_completion_tokens") or 1024}
    if body.get("temperature") is not None:
        config["temperature"] = body["temperature"]
    if body.get("seed") is not None:
        config["seed"] = body["seed"]
    fmt = body.get("response_format") or {}
    if fmt.get("type") in ("json_schema", "json_object"):
        config["responseMimeType"] = "application/json"
    if fmt.get("type") == "json_schema":
        config["responseSchema"] = response_schema((fmt.get("json_schema") or {}).get("schema") or {"type": "object"})
    return config


def response_schema(schema: Any) -> Any:
    """A JSON Schema in the API's Schema terms: upper-case types, `nullable` for a null alternative,
    and the keywords it does not take (additionalProperties, $schema, const...) left out."""
    if isinstance(schema, list):
        return [response_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            types = [t for t in (value if isinstance(value, list) else [value]) if t != "null"]
            out["type"] = str(types[0] if types else "string").upper()
            if len(types) != (len(value) if isinstance(value, list) else 1):
                out["nullable"] = True
        elif key == "properties":
            out[key] = {name: response_schema(s) for name, s in value.items()}
        elif key == "const":
            out["enum"] = [value]
        elif key in SCHEMA_FIELDS:
            out[key] = response_schema(value) if key in ("items", "anyOf") else value
    return out


def _usage(usage: Any) -> dict[str, Any] | None:
    if not isinstance(usage, dict):
        return None
    prompt = usage.get("promptTokenCount") or 0
    thoughts = usage.get("thoughtsTokenCount") or 0  # a thinking model's hidden tokens, billed as output
    completion = (usage.get("candidatesTokenCount") or 0) + thoughts
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": usage.get("cachedContentTokenCount") or 0},
        "completion_tokens_details": {"reasoning_tokens": thoughts},
    }


def _text(content: Any) -> str:
    if isinstance(content, list):  # typed parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content or "")
