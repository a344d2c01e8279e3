"""The reward server's HTTP face, owner-only as every server rubricflow starts (tasks/runtime/owner):
it answers only to this machine's loopback names (or the names a TLS bind was given), and only a
request carrying the user's secret (`Authorization: Bearer <secret>`, the 0600 file
`reward-server.secret` of the user's state folder). A plain ASGI app, no framework: at 512
requests in flight the server's own share of each answer's time is what a training loop waits on.

    POST /v1/rewards   {"rubric"?, "rollouts": [...], "mode"?: "pointwise" | "listwise", "swap"?, "view"?}
    POST /v1/fooling   {"rubric"?}: the fooling goldens' rewards and false-positive rate
    GET  /stats        calls, cache hits, what the ledger recorded, the fooling report so far
    GET  /health       unauthenticated liveness"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import orjson

from rubricflow.errors import EndpointRefused, InputError, RubricflowError
from rubricflow.surrogates import lone_surrogate
from rubricflow.tasks.runtime.owner import LOOPBACK_HOSTS, loopback_only, refuse, same_secret

SECRET_NAME = "reward-server"
MAX_BODY = 64 * 2**20


class Service(Protocol):
    async def score(self, body: dict) -> dict: ...
    async def fooling(self, body: dict) -> dict: ...
    def stats(self) -> dict: ...


def reward_app(service: Service, secret: str, hosts: frozenset[str] = LOOPBACK_HOSTS) -> Callable:
    """The ASGI app serving `service` to the holder of `secret`."""
    routes: dict[tuple[str, str], Callable[[dict], Awaitable[dict]]] = {
        ("POST", "/v1/rewards"): service.score,
        ("POST", "/v1/fooling"): service.fooling,
    }

    async def app(scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "lifespan":
            return await _lifespan(receive, send)
        if scope["type"] != "http":
            return await refuse(scope, send, 404, "not found")
        method, path = scope["method"], scope["path"].rstrip("/") or "/"
        if path == "/health":
            return await _json(send, 200, {"ok": True})
        if not same_secret(_bearer(scope), secret):
            return await refuse(scope, send, 401, "the reward server needs the owner's secret (Authorization: Bearer)")
        if method == "GET" and path == "/stats":
            return await _json(send, 200, service.stats())
        route = routes.get((method, path))
        if route is None:
            return await _json(send, 404, {"error": f"no route {method} {path}"})
        await _answer(route, receive, send)

    return loopback_only(app, hosts)


async def _answer(route: Callable[[dict], Awaitable[dict]], receive: Callable, send: Callable) -> None:
    try:
        body = _parsed(await _body(receive) or b"{}")
        if not isinstance(body, dict):
            raise InputError("the request body must be a JSON object")
        return await _json(send, 200, await route(body))
    except json.JSONDecodeError as exc:
        return await _json(send, 400, {"error": f"the request body is not JSON: {exc.msg}"})
    except EndpointRefused as exc:  # the judge's fault, not the request's: a loop may ask again
        return await _json(send, 502, {"error": " ".join(str(exc).split())})
    except InputError as exc:  # one line, whatever the fault (a rubric file's YAML error spans several)
        return await _json(send, 400, {"error": " ".join(str(exc).split())})
    except RubricflowError as exc:
        return await _json(send, 502, {"error": " ".join(str(exc).split())})


def _bearer(scope: dict) -> str | None:
    """The credentials of an `Authorization: Bearer <secret>` header (the scheme in any case, RFC
    7235); None for another scheme or none: a bare secret is not a bearer token."""
    scheme, _, token = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


async def _body(receive: Callable) -> bytes:
    chunks, size = [], 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise InputError(f"the request body is over {MAX_BODY} bytes")
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def _parsed(raw: bytes) -> Any:
    """The body's JSON by orjson (the stdlib's json was ~1.5% of the server's CPU, #55); what orjson
    refuses, by json: its error names the fault as the stdlib words it (or it reads NaN). What
    neither reads is the client's fault, a 400 (it was the server's, a 500): bytes that are not
    UTF-8, a number of over 4,300 digits, nesting deeper than the stack, and a lone surrogate."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        body = json.loads(raw)
    except json.JSONDecodeError:
        raise
    except (ValueError, RecursionError) as exc:
        raise InputError(f"the request body is not JSON the server reads: {' '.join(str(exc).split())[:200]}") from None
    try:
        where = lone_surrogate(body, "body")
    except RecursionError:
        raise InputError("the request body is nested deeper than the server reads") from None
    if where:
        raise InputError(f"{where}: a lone surrogate (a \\ud800-\\udfff escape no UTF-8 can encode)")
    return body


def _encoded(payload: Any) -> bytes:
    try:
        return orjson.dumps(payload)
    except TypeError:  # what orjson does not write (a key that is not a string): as json writes it
        return json.dumps(payload, ensure_ascii=False).encode()


async def _json(send: Callable, status: int, payload: Any) -> None:
    body = _encoded(payload)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Callable, send: Callable) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
