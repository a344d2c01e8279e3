"""The offline judge behind Amazon Bedrock's Converse API (POST /model/MODEL/converse), written from
the API's reference rather than from rubricflow's translation: a SigV4-signed request (service
`bedrock`; with a secret key configured, the signature is checked with botocore's own signer and a
wrong one is Bedrock's 403), no field the API does not define, `system` and message `content` as
lists of blocks, `inferenceConfig`, a forced tool in `toolConfig`, and the answer as
`output.message` with `stopReason` and `usage`. Errors as Bedrock sends them: the kind in the
`x-amzn-ErrorType` header, `{"message": ...}` in the body. Tests use it to show that an SDK
provider is one module (tasks/judging/providers/bedrock_converse.py)."""

from __future__ import annotations

import re
from typing import Any

from .messages_api import as_message

FIELDS = {
    "messages",
    "system",
    "inferenceConfig",
    "toolConfig",
    "guardrailConfig",
    "additionalModelRequestFields",
    "promptVariables",
    "additionalModelResponseFieldPaths",
    "requestMetadata",
    "performanceConfig",
    "serviceTier",
    "outputConfig",
}
INFERENCE_FIELDS = {"maxTokens", "temperature", "topP", "stopSequences"}
SIGNED = re.compile(
    r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, SignedHeaders=([^,]+), Signature=(\w+)"
)


def model_of(path: str) -> str | None:
    """The model id of a Converse route, else None."""
    found = re.fullmatch(r"/model/(.+)/converse", path)
    return found.group(1) if found else None


def error(status: int, kind: str, message: str) -> tuple[int, dict[str, Any], list]:
    return status, {"message": message}, [(b"x-amzn-errortype", f"{kind}:http://internal.amazon.com/".encode())]


def refusal(
    body: Any, headers: dict[bytes, bytes], secret: str | None, request: tuple[str, str, bytes]
) -> tuple[int, dict[str, Any], list] | None:
    """(status, error, headers) for a request Bedrock would refuse, else None. `request` is the
    method, path and raw body, for checking the signature."""
    signed = SIGNED.fullmatch(headers.get(b"authorization", b"").decode())
    if not signed or signed.group(4) != "bedrock":
        return error(403, "AccessDeniedException", "Missing Authentication Token or not signed for bedrock")
    if secret is not None and not _signature_holds(signed, headers, secret, request):
        return error(403, "UnrecognizedClientException", "The security token included in the request is invalid.")
    if not isinstance(body, dict):
        return error(400, "ValidationException", "the body must be a JSON object")
    unknown = sorted(set(body) - FIELDS) + sorted(set(body.get("inferenceConfig") or {}) - INFERENCE_FIELDS)
    if unknown:
        return error(400, "ValidationException", f"Unknown parameter in input: {unknown[0]!r}")
    messages = body.get("messages") or []
    if not messages or any(m.get("role") not in ("user", "assistant") for m in messages):
        return error(400, "ValidationException", "messages: a conversation of user and assistant turns is required")
    if any(not isinstance(m.get("content"), list) or not _texts(m["content"]).strip() for m in messages):
        return error(400, "ValidationException", "The text field in the ContentBlock object is blank.")
    return None


def _signature_holds(
    signed: re.Match, headers: dict[bytes, bytes], secret: str, request: tuple[str, str, bytes]
) -> bool:
    """The request's SigV4 signature, computed again with botocore's signer from the headers it signed."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    key_id, _, region, service, names, signature = signed.groups()
    method, path, raw = request
    kept = {n: headers.get(n.encode(), b"").decode() for n in names.split(";")}
    rebuilt = AWSRequest(method=method, url=f"http://{kept.get('host', '')}{path}", data=raw, headers=kept)
    rebuilt.context["timestamp"] = kept.get("x-amz-date", "")
    signer = SigV4Auth(Credentials(key_id, secret, kept.get("x-amz-security-token") or None), service, region)
    return signer.signature(signer.string_to_sign(rebuilt, signer.canonical_request(rebuilt)), rebuilt) == signature


def as_chat(body: dict[str, Any], model: str) -> dict[str, Any]:
    """The same question as a chat-completions body, for the offline judge."""
    system = "".join(b.get("text", "") for b in body.get("system") or [])
    messages = [{"role": "system", "content": system}] if system else []
    messages += [{"role": m["role"], "content": _texts(m["content"])} for m in body["messages"]]
    config = body.get("inferenceConfig") or {}
    chat: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "max_tokens": config.get("maxTokens", 4096),
        "temperature": config.get("temperature", 1.0),
    }
    tools = (body.get("toolConfig") or {}).get("tools") or []
    if tools:
        chat["tools"] = [
            {
                "type": "function",
                "function": {"name": t["toolSpec"]["name"], "parameters": t["toolSpec"]["inputSchema"]["json"]},
            }
            for t in tools
        ]
    return chat


def as_converse(completion: dict[str, Any]) -> dict[str, Any]:
    """The offline judge's chat completion as a Converse answer: the Messages API answer's blocks and
    stop reason (the same model family's), in Converse's spelling."""
    answer = as_message(completion)
    blocks = [
        {"toolUse": {"toolUseId": b["id"], "name": b["name"], "input": b["input"]}}
        if b["type"] == "tool_use"
        else {"text": b["text"]}
        for b in answer["content"]
    ]
    usage = completion.get("usage") or {}
    prompt, output = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
    return {
        "output": {"message": {"role": "assistant", "content": blocks}},
        "stopReason": answer["stop_reason"],
        "usage": {"inputTokens": prompt, "outputTokens": output, "totalTokens": prompt + output},
        "metrics": {"latencyMs": 1},
    }


def _texts(blocks: list) -> str:
    return "".join(b.get("text", "") for b in blocks if isinstance(b, dict))
