"""The offline judge behind Azure OpenAI's deployment API, written from its documented wire shape:
POST /openai/deployments/{deployment}/chat/completions?api-version=YYYY-MM-DD, the key in an
`api-key` header (not `Authorization: Bearer`), the body otherwise OpenAI's chat completions.
What Azure answers a request without a version it serves (404 "Resource not found") or the key (401) is
answered the same way, so a client that speaks the shape wrongly fails here as it would there.
Spec: https://learn.microsoft.com/azure/ai-foundry/openai/reference"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs

PATH = re.compile(r"^/openai/deployments/([^/]+)/chat/completions/?$")
VERSION = re.compile(r"^\d{4}-\d{2}-\d{2}(-preview)?$")  # the form of every version Azure serves


def deployment(path: str) -> str | None:
    found = PATH.match(path)
    return found.group(1) if found else None


def refusal(query_string: bytes, headers: dict[bytes, bytes], api_key: str | None) -> tuple[int, dict] | None:
    """Azure's answer to a request it refuses, or None for one it takes."""
    query = parse_qs(query_string.decode("latin-1"))
    if not VERSION.match((query.get("api-version") or [""])[0]):
        return 404, {"error": {"code": "404", "message": "Resource not found"}}
    if api_key is not None and headers.get(b"api-key") != api_key.encode():
        return 401, {
            "error": {
                "code": "401",
                "message": "Access denied due to invalid subscription key or wrong API endpoint. Make sure to "
                "provide a valid key for an active subscription and use a correct regional API endpoint "
                "for your resource.",
            }
        }
    return None


def as_openai_headers(api_key: str | None) -> list[tuple[bytes, Any]]:
    """The headers the OpenAI-compatible route checks, once the Azure key was accepted."""
    return [(b"authorization", f"Bearer {api_key}".encode())] if api_key is not None else []
