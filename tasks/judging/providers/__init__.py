"""The wire APIs rubricflow speaks to models. Every model call the project makes (judging,
reflection, drafting, review, probes) is built as an OpenAI chat-completions body and read as a
`ChatCompletion`; a provider translates both ways and names its key's environment variable and
its headers. `post_chat` (tasks/judging/transport.py) and `client_for` are the only places that use one,
so the hardening (retries, deadlines, odd shapes, scrubbing) is the same for every provider.

Adding a provider with a wire API of its own: one module here with a `Provider` subclass, its
line in `providers()`, and a test against a stand-in that speaks that API."""

from __future__ import annotations

import functools
import os
from typing import Any

import orjson
from openai import AsyncOpenAI
from openai._models import construct_type
from openai.types.chat import ChatCompletion
from pydantic import ValidationError


class Provider:
    """OpenAI-compatible chat completions, sent and read as they are (the default: OpenAI, vLLM,
    llama.cpp, Ollama, LiteLLM, OpenRouter, Azure's v1 endpoint...)."""

    name = "openai"
    key_variable = "OPENAI_API_KEY"
    path = "/chat/completions"
    cast_to: type = object  # the answer's JSON as sent: `response` reads it
    batch = True  # the OpenAI Batch API is there
    logprobs = True  # top_logprobs can be asked for

    def headers(self, key: str) -> dict[str, Any]:
        """Headers every request carries besides the client's own (`Authorization: Bearer KEY`)."""
        return {}

    def request_headers(self) -> dict[str, Any]:
        """Per-request header overrides (the client checks only these for an omitted Authorization)."""
        return {}

    def request(self, body: dict[str, Any]) -> dict[str, Any]:
        """The chat-completions body in this API's terms."""
        return body

    def encoded(self, body: dict[str, Any]) -> bytes:
        """The request as sent (orjson: the client's own encoder cost 5% of the judge thread)."""
        return orjson.dumps(self.request(body))

    def response(self, answer: Any) -> Any:
        """This API's answer as a ChatCompletion; anything it cannot read is returned as is (the
        caller treats a non-ChatCompletion as a gateway's page, retried)."""
        return chat_completion(answer)


def chat_completion(answer: Any) -> Any:
    """A JSON answer as a ChatCompletion: validated by pydantic-core (~5 us), or, for a shape it
    refuses (content as a number, a null message), built leniently as the openai client itself
    does (~70 us: it was 10% of the judge thread's time), so odd shapes are read as before."""
    if not isinstance(answer, dict):
        return answer
    try:
        return ChatCompletion.model_validate(answer)
    except ValidationError:
        return construct_type(value=answer, type_=ChatCompletion)


@functools.cache
def providers() -> dict[str, Provider]:
    from .anthropic_messages import AnthropicMessages  # a provider module imports Provider from here

    return {p.name: p for p in (Provider(), AnthropicMessages())}


def provider(name: str | None) -> Provider:
    """The provider of this name (None: the default); a name no module defines is an error naming those that exist."""
    known = providers()
    if (name or "openai") not in known:
        raise ValueError(f"unknown provider {name!r}: use one of {', '.join(sorted(known))}")
    return known[name or "openai"]


@functools.cache
def key_variables() -> list[str]:
    """Every provider's key variable, and every variable a key is discovered in: secrets are scrubbed of all of them."""
    from .keys import HOST_KEYS

    return list(dict.fromkeys([p.key_variable for p in providers().values()] + list(HOST_KEYS.values())))


def api_key(name: str | None = None, base_url: str | None = None) -> str:
    """The key comes from the environment only, so it never appears in parameters or logs: the
    variable of the endpoint's provider (providers/keys.py), else the wire API's."""
    from .keys import key_variable_for

    return os.environ.get(key_variable_for(base_url, provider(name).key_variable)) or "not-needed-for-local-servers"


def client_for(name: str | None, base_url: str | None, timeout_s: float, http_client: Any = None) -> AsyncOpenAI:
    """The one HTTP client of every model call: the provider's key and headers, no SDK retries
    (the judge's own retry layer decides), the whole-answer timeout."""
    chosen, key = provider(name), api_key(name, base_url)
    extra = {"http_client": http_client} if http_client is not None else {}
    return AsyncOpenAI(
        base_url=base_url, api_key=key, default_headers=chosen.headers(key), max_retries=0, timeout=timeout_s, **extra
    )
