"""`rubricflow judge-server`: a local OpenAI-compatible endpoint backed by the offline judge.

Deterministic and model-free (see `offline_judge`), with switches for latency, an enforced rate
limit (429 + Retry-After) and fault injection. Faults are chosen by a hash of the request and
hit only its first attempt(s), so a client that retries correctly ends with the same judgments
as against a clean server.

Two test routes beside the APIs: `GET /stats` (what it was asked and answered) and `POST /latency`
with `{"ms": N}` (the latency from the next request on: a test that needs a slow judge only while
it watches a run end the run at full speed, not at the slow pace), or `{"ms": N, "from_request": K}`
(from the K-th judge call on, counted as `/stats`' `requests`: the server slows down at that call
itself, however late a loaded test gets to watch it). `"jitter_ms": J` adds up to J more to each
answer, drawn from a hash of its request (reproducible), as a model's answers vary with their
length: a fixed latency keeps a closed loop's requests in lockstep waves.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import socket
import threading
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson
import uvicorn

from rubricflow.rubrics.render import unarranged
from rubricflow.tasks.judging.prompts import COEVOLVE_MARK, GENERATE_MARK, PAPER_MARK, REFINE_MARK, REFLECT_MARK
from rubricflow.tasks.standins.batch_api import BatchConfig, BatchStore
from rubricflow.tasks.standins.message_batches_api import MessageBatchStore
from rubricflow.tasks.standins.prefix_cache import CacheRules, PrefixCache, prompt_of

from . import (
    azure_api,
    converse_api,
    generate_content_api,
    messages_api,
    offline_coevolve,
    offline_judge,
    offline_paper,
    offline_refiner,
    scripted_judge,
    vertex_api,
)

# Hostile shapes of a 200 answer (a broken proxy, a misconfigured server): each must cost at most
# its own cell, never a shard's other answers, and none may put a secret into the warehouse.
HOSTILE_FAULTS = (
    "deep_json",
    "usage_missing",
    "usage_null",
    "text_plain",
    "html_page",
    "message_null",
    "content_parts",
    "content_number",
    "echo_headers",
    "echo_in_answer",
    "slow_drip",
)
TRANSIENT_FAULTS = (
    "429",
    "500",
    "502",
    "503",
    "reset",
    "timeout",
    "drip",
    "empty",
    "malformed",
    "wrong_keys",
    "out_of_range",
    "truncated",
)
FAULTS = (*TRANSIENT_FAULTS, "refusal", *HOSTILE_FAULTS)


@dataclass
class ServerConfig:
    model: str = "rubricflow-offline-judge"
    latency_ms: float = 0.0
    jitter_ms: float = 0.0  # each answer takes latency_ms plus up to this much more (a hash of its request)
    rpm: float | None = None  # enforced: over the limit answers 429
    retry_after: bool = True  # send Retry-After with 429s
    fault_rate: float = 0.0  # share of requests that get a fault
    faults: tuple[str, ...] = TRANSIENT_FAULTS
    fault_attempts: int = 1  # how many attempts of a faulty request fail
    fault_cycle: bool = False  # faults in turn (every kind injected), not chosen by a hash of the request
    stall_s: float = 3.0  # how long a `timeout` fault stalls before answering
    supports: str = "json_schema"  # json_schema | json_object | tools | text: the richest output mode it accepts
    refusal_status: int = 400  # how it refuses a richer mode (llama.cpp's Python server says 500)
    drop_system: bool = False  # a chat template without a system role: system messages are dropped
    logprobs: bool = True  # returns logprobs when asked; False: refuses a request for them (400)
    slots: int = 0  # answers at most this many requests at once, the others queue (0: no limit)
    reasoning_tokens: int = 0  # >0: a reasoning model (o-series, GPT-5), see `reasoning_refusal` and `_cut_at_limit`
    missing_models: tuple[str, ...] = ()  # model names answered 404 "model not found" (a judge that fails)
    api_key: str | None = None  # when set, a request without `Authorization: Bearer <api_key>` gets 401
    batch: BatchConfig = field(default_factory=BatchConfig)  # the Batch API's behaviour
    script: scripted_judge.Script | None = None  # answer judge requests from a key file, not the offline judge
    cache: CacheRules = field(default_factory=CacheRules)  # the simulated prefix cache (prefix_cache.py)
    record: bool = False  # keep every judge request's body (JudgeServer.bodies), for tests that read them


@dataclass
class Stats:
    requests: int = 0
    probes: int = 0  # rubricflow's delivery checks (counted apart, so `requests` counts judge calls)
    peak_in_flight: int = 0
    answered: int = 0
    rate_limited: int = 0
    faults: Counter = field(default_factory=Counter)
    repeats_after_an_answer: int = 0  # requests identical to one answered at once (a call bought twice)
    per_second: Counter = field(default_factory=Counter)  # judge calls by the wall-clock second they came in
    sampling: Counter = field(default_factory=Counter)  # "name=value" of each scalar setting a judge call sent
    served_s: float = 0.0  # the server's own time over its chat requests, body read to answer sent


def _latency_switch(body: bytes) -> tuple[float, int, float] | None:
    """`POST /latency`'s {"ms": N} (a finite N >= 0) with an optional "from_request": K (a whole K >= 1;
    0 for the next request) and "jitter_ms": J (a finite J >= 0), or None for any other body (answered 400)."""
    try:
        switch = json.loads(body)
        ms, start, jitter = switch["ms"], switch.get("from_request", 0), switch.get("jitter_ms", 0.0)
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    if not all(_milliseconds(x) for x in (ms, jitter)):
        return None
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        return None
    return float(ms), start, float(jitter)


def _milliseconds(x: Any) -> bool:
    return not isinstance(x, bool) and isinstance(x, int | float) and math.isfinite(x) and x >= 0


class JudgeServer:
    """A raw ASGI app: small and fast, and free to misbehave (reset, drip) on purpose."""

    def __init__(self, config: ServerConfig):
        self.config = config
        self.stats = Stats()
        self.attempts: Counter = Counter()
        self.answered_bodies: set[str] = set()  # hashes of the request bodies answered with a 200
        self.level = 1.0
        self.stamp = time.monotonic()
        self.rate = (config.rpm or 0) / 60.0
        self.capacity = max(1.0, self.rate)  # one second of burst
        self.batches = BatchStore(
            config.batch, self.answer, lambda body: reasoning_refusal(body) if config.reasoning_tokens else None
        )
        self.message_batches = MessageBatchStore(  # Anthropic's Message Batches, the same judge behind them
            config.batch, lambda params: messages_api.as_message(self.answer(messages_api.as_chat(params)))
        )
        self.slots = asyncio.Semaphore(config.slots) if config.slots else None
        self.cache = PrefixCache(config.cache)  # what a KV cache would have served of each prompt
        self.bodies: list[dict] = []  # the judge requests' bodies as sent, with `record`
        self.in_flight = 0
        self.latency_from: tuple[float, int, float] | None = None  # POST /latency's switch at a later request

    async def __call__(self, scope: dict, receive, send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                pass
            await send({"type": "lifespan.shutdown.complete"})
            return
        path, method = scope["path"], scope["method"]
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if method == "GET" and path.rstrip("/") in ("/v1/models", "/models"):
            return await _json(send, 200, {"object": "list", "data": [{"id": self.config.model, "object": "model"}]})
        if method == "GET" and path == "/stats":
            s = self.stats
            return await _json(
                send,
                200,
                {
                    "requests": s.requests,
                    "probes": s.probes,
                    "answered": s.answered,
                    "rate_limited": s.rate_limited,
                    "faults": dict(s.faults),
                    "repeats_after_an_answer": s.repeats_after_an_answer,
                    "batches_created": self.batches.created,
                    "message_batches_created": self.message_batches.created,
                    "message_batch_requests_with_cache_control": sum(self.message_batches.shared_block_cached.values()),
                    "per_second": {str(k): v for k, v in sorted(s.per_second.items())},
                    "sampling": dict(s.sampling),
                    "served_s": s.served_s,
                    "prompt_tokens": self.cache.prompt_tokens,
                    "cached_tokens": self.cache.cached_tokens,
                },
            )
        if method == "POST" and path == "/latency":
            switch = _latency_switch(body)
            if switch is None:
                message = 'expected a JSON body {"ms": N} or {"ms": N, "from_request": K}, N >= 0, K a whole number'
                return await _json(send, 400, {"error": {"message": message}})
            if switch[1] > self.stats.requests:
                self.latency_from = switch
                then = {"ms": switch[0], "from_request": switch[1]} | ({"jitter_ms": switch[2]} if switch[2] else {})
                return await _json(send, 200, {"latency_ms": self.config.latency_ms, "then": then})
            self._set_latency(switch)
            jitter = {"jitter_ms": self.config.jitter_ms} if self.config.jitter_ms else {}
            return await _json(send, 200, {"latency_ms": self.config.latency_ms} | jitter)
        if method == "POST" and path.rstrip("/") in ("/v1/chat/completions", "/chat/completions"):
            return await self.chat(body, send, scope["headers"])
        if method == "POST" and azure_api.deployment(path):  # Azure OpenAI's deployment route
            refused = azure_api.refusal(scope.get("query_string", b""), dict(scope["headers"]), self.config.api_key)
            if refused:
                return await _json(send, *refused)
            return await self.chat(body, send, azure_api.as_openai_headers(self.config.api_key))
        if path.startswith("/v1/messages/batches"):
            return await self.message_batch_route(method, path.rstrip("/"), dict(scope["headers"]), body, send)
        if method == "POST" and path.rstrip("/") == "/v1/messages":
            return await self.messages(body, send, dict(scope["headers"]))
        if method == "POST" and path.startswith("/v1beta/models/") and path.endswith(":generateContent"):
            model = path.removeprefix("/v1beta/models/").removesuffix(":generateContent")
            return await self.generate_content(body, send, dict(scope["headers"]), model)
        if method == "POST" and converse_api.model_of(path):  # Amazon Bedrock's Converse
            signed = ("POST", scope.get("raw_path", path.encode()).decode(), body)
            return await self.converse(body, send, dict(scope["headers"]), converse_api.model_of(path) or "", signed)
        if method == "POST" and path == "/token":  # the OAuth token endpoint Google's credentials refresh at
            return await _json(send, *vertex_api.token(body, self.config.api_key))
        if method == "POST" and vertex_api.model_of(path):  # Vertex AI's generateContent
            return await self.vertex(body, send, dict(scope["headers"]), vertex_api.model_of(path) or "")
        if path.startswith("/v1/files") or path.startswith("/v1/batches"):
            return await self.batch_route(method, path.rstrip("/"), dict(scope["headers"]), body, send)
        return await _json(send, 404, {"error": {"message": f"no route {method} {path}", "type": "not_found"}})

    def _admit(self) -> float:
        """0 when the request may pass, else seconds until it could."""
        if not self.rate:
            return 0.0
        now = time.monotonic()
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.level >= 1:
            self.level -= 1
            return 0.0
        return (1 - self.level) / self.rate

    async def chat(self, raw: bytes, send, headers: list | None = None) -> None:
        if self.slots is None:
            return await self._chat(raw, send, headers)
        async with self.slots:  # one model, N slots: the rest wait in the server's queue
            return await self._chat(raw, send, headers)

    async def _chat(self, raw: bytes, send, headers: list | None = None) -> None:
        self.in_flight += 1
        self.stats.peak_in_flight = max(self.stats.peak_in_flight, self.in_flight)
        began = time.perf_counter()
        try:
            return await self._answer_chat(raw, send, headers)
        finally:
            self.in_flight -= 1
            self.stats.served_s += time.perf_counter() - began

    async def _answer_chat(self, raw: bytes, send, headers: list | None = None) -> None:
        raw = self._without_system(raw)
        if b"rubricflow delivery check" in raw:
            self.stats.probes += 1
            refused = reasoning_refusal(json.loads(raw)) if self.config.reasoning_tokens else None
            if refused:  # a reasoning model refuses a probe's max_tokens and temperature too
                return await _json(send, 400, refused)
            return await _json(send, 200, self._probe_answer(json.loads(raw)))
        self._count_request()
        refusal, body = self._refusal(raw, headers)
        if refusal:
            return await _json(send, *refusal)
        if self.config.record:
            self.bodies.append(body)
        self.stats.sampling.update(
            f"{k}={v}" for k, v in body.items() if isinstance(v, int | float | str) and k != "model"
        )
        await self._wait(raw)
        key = offline_judge.request_key(body)
        self.attempts[key] += 1
        whole = hashlib.sha256(raw).hexdigest()
        self.stats.repeats_after_an_answer += whole in self.answered_bodies
        fault = self._fault(key)
        if fault:
            self.stats.faults[fault] += 1
            if await self._fail(send, fault):
                return None
        response = self.answer(body, key, fault)
        if fault not in ("timeout", "drip", "slow_drip", "message_null"):  # a model's answer, delivered at once
            self.answered_bodies.add(whole)
        echoed = "; ".join(f"{k.decode()}: {v.decode()}" for k, v in headers or [])
        if fault == "echo_headers":  # a proxy that reflects the request, Authorization included
            response["choices"][0]["message"]["content"] = f"bad request, headers were: {echoed}"
        elif fault == "echo_in_answer":  # a valid answer whose every rationale quotes the request's headers
            _quote_in_rationales(response, f"(headers were: {echoed})")
        self.stats.answered += 1
        if fault == "drip":
            return await _drip(send, response)
        if fault == "slow_drip":  # a valid answer, a few bytes every quarter second: defeats read timeouts
            return await _drip(send, response, step=16, pause_s=0.25)
        return await _json(send, 200, response)

    async def messages(self, raw: bytes, send, headers: dict[bytes, bytes]) -> None:
        """Anthropic's Messages API in front of the same judge (tasks/standins/messages_api.py)."""
        api = messages_api
        await self._other_wire(raw, send, headers, api.refusal, api.as_chat, api.as_message)

    async def generate_content(self, raw: bytes, send, headers: dict[bytes, bytes], model: str) -> None:
        """Google's Gemini API in front of the same judge (tasks/standins/generate_content_api.py)."""
        api = generate_content_api
        await self._other_wire(
            raw, send, headers, api.refusal, lambda body: api.as_chat(body, model), api.as_generate_content
        )

    async def converse(self, raw: bytes, send, headers: dict[bytes, bytes], model: str, signed: tuple) -> None:
        """Amazon Bedrock's Converse API in front of the same judge (tasks/standins/converse_api.py);
        `api_key` is the secret key the signature must be made with."""
        api = converse_api
        refusal = lambda body, heard, key: api.refusal(body, heard, key, signed)  # noqa: E731
        await self._other_wire(raw, send, headers, refusal, lambda body: api.as_chat(body, model), api.as_converse)

    async def vertex(self, raw: bytes, send, headers: dict[bytes, bytes], model: str) -> None:
        """Vertex AI's generateContent in front of the same judge (tasks/standins/vertex_api.py);
        `api_key` is the service account's public key (PEM) its token endpoint checks assertions with."""
        api = generate_content_api
        await self._other_wire(
            raw, send, headers, vertex_api.refusal, lambda body: api.as_chat(body, model), api.as_generate_content
        )

    def _count_request(self) -> None:
        """A judge call counted (by the second it came in); POST /latency's switch taken at its call."""
        self.stats.requests += 1
        self.stats.per_second[int(time.time())] += 1
        if self.latency_from and self.stats.requests >= self.latency_from[1]:
            self._set_latency(self.latency_from)

    def _set_latency(self, switch: tuple[float, int, float]) -> None:
        self.config.latency_ms, self.config.jitter_ms, self.latency_from = switch[0], switch[2], None

    async def _wait(self, raw: bytes) -> None:
        """The answer's latency: `latency_ms`, plus a share of `jitter_ms` drawn from a hash of the request."""
        if self.config.latency_ms or self.config.jitter_ms:
            share = zlib.crc32(raw) / 2**32
            await asyncio.sleep((self.config.latency_ms + share * self.config.jitter_ms) / 1000)

    async def _other_wire(self, raw: bytes, send, headers: dict[bytes, bytes], refusal, as_chat, as_answer) -> None:
        """Another provider's wire API: refused as that API refuses, translated to a chat request for
        the offline judge, and its answer translated back."""
        self._count_request()
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        refused = refusal(body, headers, self.config.api_key)
        if refused:
            return await _json(send, *refused)
        if self.config.record:
            self.bodies.append(body)
        chat = as_chat(body)
        await self._wait(raw)
        key = offline_judge.request_key(chat)
        self.attempts[key] += 1
        self.stats.answered += 1
        return await _json(send, 200, as_answer(self.answer(chat, key)))

    def _without_system(self, raw: bytes) -> bytes:
        """What a chat template without a system role does to the request (with `drop_system`)."""
        if not self.config.drop_system:
            return raw
        try:
            body = json.loads(raw)
            body["messages"] = [m for m in body.get("messages", []) if m.get("role") != "system"]
            return json.dumps(body).encode()
        except (ValueError, TypeError, AttributeError):
            return raw

    def _probe_answer(self, body: dict) -> dict:
        """The answer to the client's delivery check: a fixed 'OK' that counts the prompt's tokens."""
        tokens = sum(token_count(m.get("content") or "") for m in body.get("messages", []))
        return {
            "id": "probe",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.config.model,
            "choices": [{"index": 0, "finish_reason": "length", "message": {"role": "assistant", "content": "OK"}}],
            "usage": {"prompt_tokens": tokens, "completion_tokens": 1, "total_tokens": tokens + 1},
        }

    def _refusal(self, raw: bytes, headers: list | None) -> tuple[tuple[int, dict, list] | None, Any]:
        """(status, error body, headers) for a request refused before any judging (a wrong key, a body
        that is no chat request, the rate limit, an option the configured server does not support)
        or None, and the body as read: once (read twice, it was ~5% of the judge's CPU, #55)."""
        if (
            self.config.api_key is not None
            and dict(headers or []).get(b"authorization") != f"Bearer {self.config.api_key}".encode()
        ):
            return (401, _error("Incorrect API key provided.", "invalid_api_key"), []), None
        try:
            body = _loads(raw)
            body["messages"]  # a chat completion request has messages
        except (ValueError, KeyError, TypeError):
            return (400, _error("request body is not a chat completion request"), []), None
        wait = self._admit()
        if wait:
            self.stats.rate_limited += 1
            after = [
                (b"retry-after", str(math.ceil(wait)).encode()),
                (b"retry-after-ms", str(int(wait * 1000) + 1).encode()),
            ]
            return (
                429,
                _error("rate limit exceeded", "rate_limit_exceeded"),
                after if self.config.retry_after else [],
            ), None
        offline_judge.request_schema(body)  # a malformed schema fails here, as on a real server
        if self.config.reasoning_tokens and reasoning_refusal(body):
            return (400, reasoning_refusal(body) or {}, []), None
        refused = self._unsupported(body)
        if refused:
            return (self.config.refusal_status, _error(refused), []), None
        if str(body.get("model") or "") in self.config.missing_models:
            return (404, _error(f"The model `{body.get('model')}` does not exist", "model_not_found"), []), None
        return None, body

    async def _fail(self, send, fault: str) -> bool:
        """Deliver an injected fault that replaces the answer; False for faults that only delay or
        bend it (a stall, a drip, an odd shape), which the caller answers itself."""
        if fault in ("500", "502", "503", "429"):
            after = [(b"retry-after", b"0")] if fault == "429" and self.config.retry_after else []
            await _json(send, int(fault), _error(f"injected fault {fault}", "server_error"), after)
            return True
        if fault == "reset":
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]}
            )
            raise ConnectionResetError("injected connection reset")  # uvicorn aborts the connection
        if fault == "timeout":
            await asyncio.sleep(self.config.stall_s)
            return False
        if fault == "text_plain":
            await _text(send, "Service temporarily degraded. Please try again.")
            return True
        if fault == "html_page":  # a proxy's or captive portal's page, with status 200
            await _text(send, "<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html")
            return True
        return False

    def answer(self, body: dict, key: str | None = None, fault: str | None = None) -> dict:
        """The completion for one chat request body (online, or one line of a batch)."""
        messages = offline_judge.first_turn(body)
        schema, mode = offline_judge.request_schema(body)
        user = "\n".join(m.get("content", "") for m in messages if m.get("role") == "user")
        system = next((m.get("content", "") for m in messages if m.get("role") == "system"), None)
        prompt_tokens = token_count(system or "") + token_count(user)
        cached = self.cache.serve(prompt_of(body.get("messages") or []), prompt_tokens)
        if body.get("cache_control") is False:  # an Anthropic request without a breakpoint caches nothing
            cached = 0
        system, user = unarranged(system, user)  # a text-first call is read as the same rubric-first one
        system = user if system is None else system  # no system message: the rubric, if sent, is in the user turn
        asked = str(body.get("model") or "")
        persona = asked if asked and asked != self.config.model else ""  # another model name: another judge
        answer: dict[str, Any] | Bare
        if system.startswith(REFLECT_MARK):  # `improve evolve` asks for rubric mutations
            answer = offline_judge.reflect(user)
        elif system.startswith(COEVOLVE_MARK):  # `improve evolve --co-evolve` asks for a meta-component
            answer = offline_coevolve.meta_value(user)
        elif system.startswith(PAPER_MARK):  # `rubric generate --from-paper` asks for a PaperBench tree
            answer = offline_paper.tree(system, user)
        elif system.startswith(REFINE_MARK):  # `rubric refine` asks for mutations aimed at one property
            answer = offline_refiner.refine(user)
        elif system.startswith(GENERATE_MARK):  # `rubric generate` asks for a draft
            answer = offline_judge.draft_rubric(system + "\n" + user)
        elif self.config.script is not None:  # a test's key file says what each text gets
            answer = self.config.script.answer(user, schema)
        elif decision := offline_judge.decision_asked(system):  # the level alone, as plain text
            schema, mode = decision[1], "decision"  # sent as it is, unfenced
            judged = offline_judge.judge(
                system, user, schema, float(body.get("temperature") or 0), body.get("seed"), persona
            )
            answer = Bare(str(judged["criteria"][decision[0]]["value"]))
        else:
            answer = offline_judge.judge(
                system, user, schema, float(body.get("temperature") or 0), body.get("seed"), persona
            )
        doubt = offline_judge.persona_doubt(user, schema, persona)
        response = self._completion(
            body, key or offline_judge.request_key(body), answer, mode, fault, prompt_tokens, doubt
        )
        if isinstance(response.get("usage"), dict) and "prompt_tokens" in response["usage"]:
            response["usage"]["prompt_tokens_details"] = {"cached_tokens": cached}
        return response

    async def batch_route(self, method: str, path: str, headers: dict, body: bytes, send) -> None:
        parts = path.split("/")  # ['', 'v1', 'files' | 'batches', id?, 'content'?]
        payload: Any
        if method == "POST" and path == "/v1/files":
            status, payload = self.batches.upload(headers.get(b"content-type", b"").decode(), body)
        elif method == "GET" and len(parts) == 5 and parts[2] == "files" and parts[4] == "content":
            status, payload = self.batches.content(parts[3])
            if status == 200:
                return await _raw(send, payload)
        elif method == "POST" and path == "/v1/batches":
            status, payload = self.batches.create(json.loads(body or b"{}"))
        elif method == "GET" and len(parts) == 4 and parts[2] == "files":
            status, payload = self.batches.file(parts[3])
        elif method == "GET" and path == "/v1/batches":
            status, payload = self.batches.listed()
        elif method == "GET" and len(parts) == 4 and parts[2] == "batches":
            status, payload = self.batches.retrieve(parts[3])
        else:
            status, payload = 404, _error(f"no route {method} {path}")
        return await _json(send, status, payload)

    async def message_batch_route(self, method: str, path: str, headers: dict, body: bytes, send) -> None:
        """Anthropic's Message Batches (tasks/standins/message_batches_api.py), behind its headers."""
        refused = messages_api.header_refusal(headers, self.config.api_key)
        if refused:
            return await _json(send, *refused)
        parts = path.split("/")  # ['', 'v1', 'messages', 'batches', id?, 'results'?]
        store, payload = self.message_batches, None
        if method == "POST" and len(parts) == 4:
            try:
                payload = json.loads(body)
            except ValueError:
                payload = None
            status, payload = store.create(payload)
        elif method == "GET" and len(parts) == 4:
            status, payload = store.listed()
        elif method == "GET" and len(parts) == 5:
            status, payload = store.retrieve(parts[4], "http://" + headers.get(b"host", b"127.0.0.1").decode())
        elif method == "GET" and len(parts) == 6 and parts[5] == "results":
            status, results = store.results(parts[4])
            if isinstance(results, bytes):  # the results' JSONL; an error is a JSON body
                return await _raw(send, results)
            payload = results
        else:
            status, payload = 404, messages_api.error("not_found_error", f"no route {method} {path}")
        return await _json(send, status, payload)

    def _unsupported(self, body: dict) -> str | None:
        supports = self.config.supports
        fmt = (body.get("response_format") or {}).get("type")
        order = ("json_schema", "json_object", "tools", "text")
        if fmt in ("json_schema", "json_object") and order.index(fmt) < order.index(supports):
            return f"response_format: Input should be 'text' or 'json_object', got {fmt!r} (not supported by this endpoint)"
        if body.get("tools") and supports == "text":
            return "tools are not supported by this endpoint"
        if body.get("logprobs") and not self.config.logprobs:
            return "logprobs are not supported by this endpoint"
        return None

    def _fault(self, key: str) -> str | None:
        c = self.config
        if not c.fault_rate or not c.faults or self.attempts[key] > c.fault_attempts:
            return None
        if int(key[8:16], 16) / 0xFFFFFFFF >= c.fault_rate:
            return None
        if c.fault_cycle:
            return c.faults[sum(self.stats.faults.values()) % len(c.faults)]
        return c.faults[int(key[:8], 16) % len(c.faults)]

    def _completion(
        self,
        body: dict,
        key: str,
        answer: dict | Bare,
        mode: str,
        fault: str | None,
        prompt_tokens: int,
        doubt: float | None = None,
    ) -> dict:
        text = answer.text if isinstance(answer, Bare) else json.dumps(answer, ensure_ascii=False)
        content, finish, refusal = _bent_content(text, answer, fault)
        message = _message(body, key, text, content, refusal, mode, fault)
        choices: list[dict[str, Any]] = (
            [] if fault == "empty" else [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}]
        )
        if fault == "message_null":
            choices[0]["message"] = None
        reasoning = self.config.reasoning_tokens
        completion_tokens = _cut_at_limit(body, choices, content, reasoning)
        said = choices[0]["message"] if choices else None
        if body.get("logprobs") and said and isinstance(said.get("content"), str):  # what a tool call says has none
            choices[0]["logprobs"] = {
                "content": offline_judge.token_logprobs(
                    said["content"], int(body.get("top_logprobs") or 0), key, doubt
                ),
                "refusal": None,
            }
        return {
            "id": f"chatcmpl-{key[:16]}-{self.attempts[key]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model") or self.config.model),
            "system_fingerprint": "fp_rubricflow_offline",
            "choices": choices,
            "usage": _usage(prompt_tokens, completion_tokens, fault, reasoning and min(reasoning, completion_tokens)),
        }


@dataclass(frozen=True)
class Bare:
    """An answer sent as it is, not as JSON: a decision's level (offline_judge.decision_asked)."""

    text: str

    def get(self, key: str, default: Any = None) -> Any:  # the content faults read an answer's fields
        return default


def _bent_content(text: str, answer: dict | Bare, fault: str | None) -> tuple[str | None, str, str | None]:
    """(content, finish_reason, refusal): the answer as written, or bent by a content fault."""
    if fault == "malformed":
        return text[: len(text) // 2] + "}{", "stop", None
    if fault == "wrong_keys":
        return json.dumps({"scores": answer.get("criteria", {})}), "stop", None
    if fault == "out_of_range" and isinstance(answer, dict):
        broken = {cid: {**v, "value": "off-the-scale"} for cid, v in answer.get("criteria", {}).items()}
        return json.dumps({**answer, "criteria": broken}), "stop", None
    if fault == "truncated":
        return text[: len(text) // 2], "length", None
    if fault == "refusal":
        return None, "stop", "I can't help with that."
    if fault == "deep_json":
        return "[" * 50_000 + "]" * 50_000, "stop", None
    return text, "stop", None


def _message(
    body: dict, key: str, text: str, content: str | None, refusal: str | None, mode: str, fault: str | None
) -> dict[str, Any]:
    """The assistant message in the shape the request asked for: a tool call, fenced text or JSON."""
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refusal}
    if mode == "verdict_tools" and content is not None and fault != "empty":  # the verdict is the tool called
        said = json.loads(content)["criteria"]["verdict"]
        name = offline_judge.VERDICT_TOOLS[0 if said["value"] in (1, "pass") else 1]  # a scripted key may write pass
        arguments = json.dumps({"reason": said.get("rationale", "")})
        call = {"id": f"call_{key[:12]}", "type": "function", "function": {"name": name, "arguments": arguments}}
        return {"role": "assistant", "content": None, "refusal": None, "tool_calls": [call]}
    if mode == "tools" and content is not None and fault != "empty":
        name = body["tools"][0]["function"]["name"]
        call = {"id": f"call_{key[:12]}", "type": "function", "function": {"name": name, "arguments": content}}
        message = {"role": "assistant", "content": None, "refusal": None, "tool_calls": [call]}
    elif mode == "text" and content is not None:
        message["content"] = f"Here is my judgment.\n```json\n{content}\n```\n"
    if fault == "content_parts":  # content as a list of typed parts (valid in some APIs)
        message["content"] = [{"type": "text", "text": part} for part in (text[:20], text[20:])]
    elif fault == "content_number":
        message["content"] = 42
    return message


def reasoning_refusal(body: dict) -> dict | None:
    """OpenAI's 400 to a reasoning model's request that uses max_tokens, a temperature other than
    the default 1, or logprobs (the error object as the API sends it, param and code included)."""
    if "max_tokens" in body:
        message = (
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
        )
        return _error(message, param="max_tokens", code="unsupported_parameter")
    if body.get("temperature") is not None and body["temperature"] != 1:
        message = (
            f"Unsupported value: 'temperature' does not support {body['temperature']} with this model. "
            "Only the default (1) value is supported."
        )
        return _error(message, param="temperature", code="unsupported_value")
    if body.get("logprobs"):
        return _error(
            "Unsupported parameter: 'logprobs' is not supported with this model.",
            param="logprobs",
            code="unsupported_parameter",
        )
    return None


def _cut_at_limit(body: dict, choices: list[dict[str, Any]], content: str | None, reasoning: int = 0) -> int:
    """Like any server: an answer longer than max_tokens is cut there (finish_reason `length`). A
    reasoning model spends `reasoning` hidden tokens of the limit first: a limit they fill leaves an
    empty answer. Returns the completion tokens (reasoning included, as OpenAI counts them)."""
    answer_tokens = max(1, token_count(content)) if isinstance(content, str) and content else 0  # a digit is a token
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    room = None if not limit else max(0, limit - reasoning)
    if room is None or answer_tokens <= room or not choices:
        return reasoning + answer_tokens
    cut = content
    if isinstance(content, str):
        cut = content[: len(content) * room // answer_tokens] or (
            "" if reasoning else content[:1]
        )  # a classic model writes a token
    choices[0]["finish_reason"] = "length"
    if choices[0]["message"] is not None and isinstance(cut, str):
        if choices[0]["message"].get("tool_calls"):
            choices[0]["message"]["tool_calls"][0]["function"]["arguments"] = cut
        else:
            choices[0]["message"]["content"] = cut
    return int(limit or 0)


def _usage(prompt_tokens: int, completion_tokens: int, fault: str | None, reasoning: int = 0) -> dict[str, Any]:
    if fault == "usage_missing":
        return {}
    if fault == "usage_null":
        return {"prompt_tokens": None, "completion_tokens": None, "total_tokens": None}
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if reasoning:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return usage


def token_count(text: str) -> int:
    """Tokens as a BPE tokenizer roughly counts them: four ASCII characters a token, one token per
    other character, two past the Basic Multilingual Plane (emoji). Not exact, realistic in shape:
    CJK text costs about four times what its length in characters/4 suggests."""
    ascii_chars = len(text.encode("ascii", "ignore"))
    astral = sum(1 for ch in text if ord(ch) > 0xFFFF) if not text.isascii() else 0
    return ascii_chars // 4 + (len(text) - ascii_chars) + astral


def _error(
    message: str, kind: str = "invalid_request_error", param: str | None = None, code: str | None = None
) -> dict:
    error: dict[str, Any] = {"message": message, "type": kind, "code": code or kind}
    if param is not None:
        error["param"] = param
    return {"error": error}


def _loads(raw: bytes) -> Any:
    """A request body, read by orjson (json.loads was ~7% of the judge's CPU on a group of 8, #55);
    what orjson refuses and json reads (NaN, an integer past 64 bits), by json."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)


def _dumps(payload: Any) -> bytes:
    """An answer's bytes, by orjson; what orjson cannot write (a key that is not a string), by json."""
    try:
        return orjson.dumps(payload)
    except TypeError:
        return json.dumps(payload).encode()


async def _json(send, status: int, payload: dict, headers: list | None = None) -> None:
    data = _dumps(payload)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


async def _text(send, text: str, kind: str = "text/plain") -> None:
    data = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", kind.encode()), (b"content-length", str(len(data)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": data})


async def _raw(send, data: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/octet-stream"), (b"content-length", str(len(data)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": data})


async def _drip(send, payload: dict, step: int | None = None, pause_s: float = 0.05) -> None:
    """A complete, valid answer sent a few bytes at a time (eight pieces, unless `step` is given)."""
    data = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())],
        }
    )
    step = step or max(1, len(data) // 8)
    for i in range(0, len(data), step):
        await send({"type": "http.response.body", "body": data[i : i + step], "more_body": i + step < len(data)})
        await asyncio.sleep(pause_s)


def bind(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening socket on `host` (an IPv6 address, bare or in brackets, on an IPv6 socket)."""
    host = host.strip("[]")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)  # listening before "listening on" is printed: early clients queue, not fail
    return sock


def make_server(app: JudgeServer) -> uvicorn.Server:
    return uvicorn.Server(
        uvicorn.Config(app, log_level="error", access_log=False, lifespan="off", timeout_keep_alive=30, backlog=4096)
    )


class RunningServer:
    """A judge server on a background thread of this process (demo and tests)."""

    def __init__(self, config: ServerConfig | None = None, port: int = 0):
        self.app = JudgeServer(config or ServerConfig())
        self.sock = bind(port=port)
        self.port = self.sock.getsockname()[1]
        self.server = make_server(self.app)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> RunningServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def _quote_in_rationales(response: dict, quoted: str) -> None:
    """Add `quoted` to every rationale of a JSON answer (content or tool call), in place."""
    message = response["choices"][0]["message"]
    calls = message.get("tool_calls") or []
    raw = calls[0]["function"]["arguments"] if calls else message.get("content")
    try:
        answer = json.loads(raw.strip().removeprefix("Here is my judgment.").strip().strip("`").removeprefix("json"))
    except (ValueError, AttributeError):
        return

    def quote(node) -> None:
        if isinstance(node, dict):
            for name, value in node.items():
                if name == "rationale" and isinstance(value, str):
                    node[name] = f"{value} {quoted}"
                else:
                    quote(value)
        elif isinstance(node, list):
            for value in node:
                quote(value)

    quote(answer)
    if calls:
        calls[0]["function"]["arguments"] = json.dumps(answer)
    else:
        message["content"] = json.dumps(answer)
