"""A cap on the size of one answer's body, on every model call's HTTP client: a judge's answer is
a few kilobytes, and an endpoint that sent 300 MB bodies took a run to ~3.1 GB of memory. A body
past the cap (by its Content-Length, or as its bytes arrive) ends the call with `AnswerTooLarge`,
and the cell fails with that reason (final, not sent again: the same request would bring the same
answer)."""

from __future__ import annotations

import functools
import importlib
from collections.abc import AsyncIterator
from typing import Any

import openai

MAX_ANSWER_BYTES = 8 * 1024 * 1024  # 8 MiB: a thousand times a judge's answer with its logprobs


class AnswerTooLarge(openai.OpenAIError):
    """The answer's body passed MAX_ANSWER_BYTES; an OpenAIError, so the SDK raises it as it is."""


@functools.cache
def _capped_stream_class(httpx: Any) -> type:
    """A body stream of the HTTP library `httpx` (the SDK's: httpx, or its fork httpx2) that raises
    once more than `cap` bytes came through it (the library reads only its own stream class)."""

    class CappedStream(httpx.AsyncByteStream):
        def __init__(self, stream: Any, cap: int) -> None:
            self.stream, self.cap, self.seen = stream, cap, 0

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self.stream:
                self.seen += len(chunk)
                if self.seen > self.cap:
                    raise AnswerTooLarge(too_large(f"more than {self.seen:,} bytes", self.cap))
                yield chunk

        async def aclose(self) -> None:
            await self.stream.aclose()

    return CappedStream


def too_large(size: str, cap: int) -> str:
    return f"the answer's body ({size}) passed the {cap // (1024 * 1024)} MiB cap on an answer: not read"


def capped(http_client: Any, cap: int = MAX_ANSWER_BYTES) -> Any:
    """`http_client` (an httpx client) with every response's body capped at `cap` bytes."""

    async def cap_body(response: Any) -> None:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise AnswerTooLarge(too_large(f"{int(declared):,} bytes declared", cap))
        httpx = importlib.import_module(type(response).__module__.split(".")[0])
        response.stream = _capped_stream_class(httpx)(response.stream, cap)

    cap_body.answer_cap = cap  # type: ignore[attr-defined]  # read by tasks/judging/session_post, which caps as this does
    http_client.event_hooks = {**http_client.event_hooks, "response": [*http_client.event_hooks["response"], cap_body]}
    return http_client
