"""What the providers that call through a cloud's own SDK (Bedrock's boto3, Vertex AI's
google-genai) share: one SDK client per hardened client (so it lives and dies with the judge's
client, and a changed key or endpoint gets a new one), and the SDK's failures raised as openai's
errors, so retries, re-plans, output-mode fallback and scrubbing treat every provider alike."""

from __future__ import annotations

import importlib
import importlib.util
import weakref
from collections.abc import Callable
from typing import Any

import openai

from rubricflow.errors import InputError

_SDK_CLIENTS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def need(module: str, provider: str) -> None:
    """A provider whose SDK is an extra: refused in one line before any call when it is missing."""
    if importlib.util.find_spec(module) is None:
        raise InputError(f'--provider {provider} needs {module}: pip install "rubricflow[{provider}]"')


def sdk_client(client: Any, build: Callable[[], Any]) -> Any:
    """The SDK client kept for this hardened client, built on its first call."""
    made = _SDK_CLIENTS.get(client)
    if made is None:
        made = _SDK_CLIENTS[client] = build()
    return made


def http_library(client: Any) -> Any:
    """The HTTP library of the hardened client (httpx, or its fork httpx2), whose errors an SDK
    sending over that client raises."""
    base = next(c for c in type(client._client).__mro__ if c.__module__.startswith("httpx"))
    return importlib.import_module(base.__module__.split(".")[0])


def _request(client: Any) -> Any:
    """A request object of the hardened client's HTTP library, for openai's error types."""
    return http_library(client).Request("POST", str(client.base_url))


def status_error(client: Any, status: int, message: str, body: Any) -> openai.APIStatusError:
    """An HTTP error answer as the openai client would have raised it (BadRequestError for a 400,
    RateLimitError for a 429...), carrying the API's own error body."""
    request = _request(client)
    httpx = importlib.import_module(type(request).__module__.split(".")[0])
    response = httpx.Response(status, request=request)
    return client._make_status_error(f"Error code: {status} - {message}", body=body, response=response)


def no_answer(client: Any, exc: BaseException, timed_out: bool) -> openai.APIConnectionError:
    """No HTTP answer (a timeout, a refused or dropped connection): raise it `from exc`, so the
    cause tells an unreachable endpoint from a slow one."""
    if timed_out:
        return openai.APITimeoutError(request=_request(client))
    return openai.APIConnectionError(message=f"Connection error: {exc}", request=_request(client))
