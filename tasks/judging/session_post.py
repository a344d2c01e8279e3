"""The hot path of the one hardened client: a request sent straight through the aiohttp session of
its own transport, not through the SDK's request layer (per call it built an options model, an
httpx request with its URL parsed and ~15 headers merged, and a response object: ~37% of the
reward server's CPU). Same client, same connection pool, same headers (the SDK builds them, once
per client and path), same answer cap, and failures raised as the SDK raises them (APITimeoutError,
APIConnectionError from the same cause, its status errors with the body and Retry-After), so
retries, deadlines, odd shapes and scrubbing (transport.py, failures.py) hold unchanged. A client
this path cannot speak for exactly (another transport, a proxy, custom auth, a hook of its own)
keeps the SDK's path."""

from __future__ import annotations

import functools
import json
import weakref
from dataclasses import dataclass
from typing import Any

import orjson

# headers aiohttp writes itself, or the SDK rewrites each call (its read timeout is per attempt)
_PER_REQUEST = frozenset({"host", "content-length", READ_TIMEOUT := "x-stainless-read-timeout"})
_ROUTES: weakref.WeakKeyDictionary[Any, dict[tuple, Route | None]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Route:
    """Where and how one client's requests to one path go: the full URL (the client's query
    included), the headers the SDK would send, the session, the answer cap, redirects. It holds no
    reference to the client (the routes are kept weakly by client: a client closed and dropped goes)."""

    session: Any
    url: str
    headers: dict[str, str]
    cap: int
    follow_redirects: bool
    max_redirects: int


def route(client: Any, key: tuple, path: str, overrides: dict[str, Any], timeout_s: float) -> Route | None:
    """The route of `client`'s requests to `path` (`key` names them: provider and path), found once;
    None: the client is one this path cannot speak for (its SDK path is used)."""
    if getattr(client, "_client", None) is None:  # not an SDK client (a stand-in's own)
        return None
    routes = _ROUTES.get(client)
    if routes is None:
        routes = _ROUTES[client] = {}
    if key not in routes:
        try:
            routes[key] = _route(client, path, overrides, timeout_s)
        except (AttributeError, ImportError):  # an SDK whose insides moved: its own path, slower, still right
            routes[key] = None
    return routes[key]


def _route(client: Any, path: str, overrides: dict[str, Any], timeout_s: float) -> Route | None:
    from openai._models import FinalRequestOptions
    from openai._vendor.httpx_aiohttp.transport import AiohttpTransport

    http: Any = client._client  # route() made sure the client has one
    transport = getattr(http, "_transport", None)
    if not isinstance(transport, AiohttpTransport) or transport.proxy is not None or http._mounts:
        return None
    if client.custom_auth is not None or client._provider_runtime is not None or client._api_key_provider is not None:
        return None
    if getattr(client, "_workload_identity_auth", None) is not None or http.event_hooks["request"]:
        return None
    caps = [getattr(hook, "answer_cap", None) for hook in http.event_hooks["response"]]
    if len(caps) != 1 or caps[0] is None:  # the cap alone (answer_cap.capped), or a hook of someone else's
        return None
    options = FinalRequestOptions.construct(method="post", url=path, headers=overrides, timeout=timeout_s)
    built = client._build_request(options)  # the SDK's own URL and headers, as it sends them
    headers = {k: v for k, v in built.headers.items() if k not in _PER_REQUEST}
    if not isinstance(transport.client, _session_class()):
        transport.client = transport.get_client()  # made on first use, as the transport itself does
    return Route(transport.client, str(built.url), headers, caps[0], http.follow_redirects, http.max_redirects)


def _session_class() -> type:
    from aiohttp import ClientSession

    return ClientSession


async def post(client: Any, way: Route, content: bytes, timeout_s: float) -> Any:
    """Send `content` by `client`'s route `way`; the answer's JSON (or its text when it is not
    JSON), or the error the SDK raises for it."""
    import httpx2
    from openai import APIConnectionError, APITimeoutError
    from openai._vendor.httpx_aiohttp.transport import map_aiohttp_exceptions

    try:
        with map_aiohttp_exceptions():  # aiohttp's errors as httpx2's, as the transport maps them
            async with way.session.post(
                way.url,
                data=content,
                headers={**way.headers, READ_TIMEOUT: str(timeout_s)},
                allow_redirects=way.follow_redirects,
                max_redirects=way.max_redirects,
                timeout=_timeout(timeout_s),
            ) as answer:
                raw = await _body(answer, way.cap)
                status, headers, charset = answer.status, answer.headers, answer.charset
    except httpx2.TimeoutException as exc:
        raise APITimeoutError(request=httpx2.Request("POST", way.url)) from exc
    except httpx2.RequestError as exc:
        raise APIConnectionError(request=httpx2.Request("POST", way.url)) from exc
    if status >= 400:
        raise _status_error(client, way.url, status, headers, raw)
    content_type = headers.get("content-type", "*").split(";")[0]
    if not content_type.endswith("json"):
        return raw.decode(charset or "utf-8", errors="replace")  # a gateway's page: read as text, as the SDK does
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)  # what orjson refuses and json reads (NaN), or json's own error


async def _body(answer: Any, cap: int) -> bytes:
    """The body, raising AnswerTooLarge past `cap` bytes (declared, or as they arrive)."""
    from rubricflow.tasks.judging.answer_cap import AnswerTooLarge, too_large

    declared = answer.content_length
    if declared is not None and declared > cap:
        raise AnswerTooLarge(too_large(f"{declared:,} bytes declared", cap))
    if declared is not None and "content-encoding" not in answer.headers:
        return await answer.read()
    chunks, seen = [], 0
    async for chunk in answer.content.iter_chunked(65536):
        seen += len(chunk)
        if seen > cap:
            raise AnswerTooLarge(too_large(f"more than {seen:,} bytes", cap))
        chunks.append(chunk)
    return b"".join(chunks)


def _status_error(client: Any, url: str, status: int, headers: Any, raw: bytes) -> Exception:
    """An error answer as the SDK raises it (BadRequestError, RateLimitError...: body and headers kept)."""
    import httpx2

    kept = [(k, v) for k, v in headers.items() if k.lower() not in ("content-encoding", "content-length")]
    response = httpx2.Response(status, headers=kept, content=raw, request=httpx2.Request("POST", url))
    return client._make_status_error_from_response(response)


@functools.lru_cache(maxsize=64)
def _timeout(timeout_s: float) -> Any:
    """aiohttp's timeouts for a call of `timeout_s` (an attrs object built for every post was ~2% of
    the reward server's CPU, #55; it is frozen, so calls share one)."""
    from aiohttp import ClientTimeout

    return ClientTimeout(sock_connect=timeout_s, sock_read=timeout_s, connect=timeout_s)
