"""The wire APIs rubricflow speaks to models. Every model call the project makes (judging,
reflection, drafting, review, probes) is built as an OpenAI chat-completions body and read as a
`ChatCompletion`; a provider translates both ways, and owns what is true of its API: where it lives
(a default base URL and the variable that overrides it), its key's variables and headers, how its
errors are classified (`classify`: a FailureKind, whose policy says retry / re-plan / final), and
what it can be asked for (`Capabilities`, read once per judge). `post_chat`
(tasks/judging/transport.py) and `client_for` are the only places that use one, so the hardening
(retries, deadlines, odd shapes, scrubbing) is the same for every provider.

Adding a provider with a wire API of its own: one module here with a `Provider` subclass, its
line in `providers()`, and a test against a stand-in that speaks that API (docs/providers.md)."""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import orjson
from pydantic import ValidationError

from rubricflow.tasks.judging.failures import FailureKind, error_kind

if TYPE_CHECKING:  # the SDK is loaded by the first call, not by every command's import (0.7 s)
    from openai import AsyncOpenAI

OutputMode = Literal["json_schema", "json_object", "tools", "text"]


@dataclass(frozen=True)
class Capabilities:
    """What a wire API can be asked for; a judge reads them once, never the provider's name."""

    logprobs: bool = True  # top_logprobs can be asked for (a logprob-weighted score)
    batch: bool = True  # the OpenAI Batch API is there (--batch)
    system_role: Literal["message", "field"] = "message"
    """`message`: the rubric is a system message, which a server's chat template may drop (so
    `--system-prompt auto` checks delivery once per run); `field`: the API has a system field of its
    own, always delivered (no check)."""
    reasoning_parameters: bool = True
    """The server may be a reasoning model that refuses max_tokens / temperature with a 400 naming
    them (learned once per run by tasks/judging/params.RequestForm); False: such a 400 is final."""
    output_modes: tuple[OutputMode, ...] = ("json_schema", "json_object", "tools", "text")
    """Structured-output modes the API has, richest first: `--output-mode auto` starts at the first
    and falls back along these, once per run, when a server refuses one. Chat-completions servers
    differ: OpenAI takes json_schema; llama.cpp's Python server answers json_schema with a 500 but
    constrains {"type": "json_object", "schema": ...} by grammar; some take only a forced tool
    call; anything can be asked for plain text."""


class Provider:
    """OpenAI-compatible chat completions, sent and read as they are (the default: OpenAI, vLLM,
    llama.cpp, Ollama, LiteLLM, OpenRouter, Azure's v1 endpoint...)."""

    name = "openai"
    key_variables: tuple[str, ...] = ("OPENAI_API_KEY",)  # the first one set is the key
    base_url_variable = "OPENAI_BASE_URL"  # overrides default_base_url; --base-url overrides both
    default_base_url = "https://api.openai.com/v1"
    path = "/chat/completions"
    cast_to: type = object  # the answer's JSON as sent: `response` reads it
    capabilities = Capabilities()

    @property
    def key_variable(self) -> str:
        """The variable a user is told to set."""
        return self.key_variables[0]

    def base_url(self, given: str | None = None) -> str:
        """Where requests go: the given URL, else this API's variable, else its public endpoint."""
        return given or os.environ.get(self.base_url_variable) or self.default_base_url

    def derived_base_url(self, model: str) -> str | None:
        """An endpoint built from other settings when neither --base-url nor the variable is set
        (Azure: its resource's AZURE_OPENAI_ENDPOINT and the deployment); None: the public one."""
        return None

    def classify(self, exc: BaseException) -> FailureKind:
        """What a failed call of this API is (its policy: retried now, planned again, or final)."""
        return error_kind(exc)

    def url_path(self, body: dict[str, Any]) -> str:
        """The path of a request, under the base URL (an API may name the model in it)."""
        return self.path

    def headers(self, key: str) -> dict[str, Any]:
        """Headers every request carries besides the client's own (`Authorization: Bearer KEY`)."""
        return {}

    def request_headers(self) -> dict[str, Any]:
        """Per-request header overrides (the client checks only these for an omitted Authorization)."""
        return {}

    def query(self) -> dict[str, str]:
        """Query parameters every request carries (Azure: `api-version`)."""
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
    from openai.types.chat import ChatCompletion

    try:
        return ChatCompletion.model_validate(answer)
    except ValidationError:
        return ChatCompletion.model_construct(**answer)  # the openai model's own: nested models built, unchecked


@functools.cache
def providers() -> dict[str, Provider]:
    from .anthropic_messages import AnthropicMessages  # a provider module imports Provider from here
    from .azure_openai import AzureOpenAI
    from .gemini_generate import GeminiGenerate

    return {p.name: p for p in (Provider(), AnthropicMessages(), GeminiGenerate(), AzureOpenAI())}


def provider(name: str | None) -> Provider:
    """The provider of this name (None: the default); a name no module defines is an error naming those that exist."""
    known = providers()
    if (name or "openai") not in known:
        raise ValueError(f"unknown provider {name!r}: use one of {', '.join(sorted(known))}")
    return known[name or "openai"]


@functools.cache
def key_variables() -> list[str]:
    """Every provider's key variables, and every variable a key is discovered in (providers/keys.py):
    secrets are scrubbed of all of them."""
    from .keys import HOST_KEYS

    own = [v for p in providers().values() for v in p.key_variables]
    return list(dict.fromkeys(own + list(HOST_KEYS.values())))


def api_key(name: str | None = None, base_url: str | None = None) -> str:
    """The key comes from the environment only, so it never appears in parameters or logs: the
    variable of the endpoint's provider (providers/keys.py), else the wire API's own (the first set)."""
    from .keys import key_variable_for

    discovered = key_variable_for(base_url, "")
    found = (os.environ.get(v) for v in ((discovered,) if discovered else provider(name).key_variables))
    return next((k for k in found if k), "not-needed-for-local-servers")


def client_identity(name: str | None, base_url: str | None, timeout_s: float) -> tuple:
    """Everything `client_for` builds a client from, read now (the environment's key and the
    provider's query and headers included): a process keeping clients (and judges holding them)
    keys them by this, so a variable changed since gets a client that sends it."""
    chosen, key = provider(name), api_key(name, base_url)
    secret_parts = repr((key, sorted(chosen.headers(key).items()), sorted(chosen.query().items())))
    # the key, headers and query as a digest: the identity is kept in dicts a user can print (`vars(judge)`)
    return (chosen.name, chosen.base_url(base_url), hashlib.sha256(secret_parts.encode()).hexdigest(), timeout_s)


def client_for(name: str | None, base_url: str | None, timeout_s: float, http_client: Any = None) -> AsyncOpenAI:
    """The one HTTP client of every model call: the provider's endpoint (never the SDK's default,
    which is OpenAI's), key and headers, no SDK retries (the judge's own retry layer decides), the
    whole-answer timeout."""
    from openai import AsyncOpenAI, DefaultAsyncHttpxClient

    from rubricflow.tasks.judging.answer_cap import capped

    chosen, key = provider(name), api_key(name, base_url)
    http_client = capped(http_client if http_client is not None else DefaultAsyncHttpxClient(timeout=timeout_s))
    return AsyncOpenAI(
        base_url=chosen.base_url(base_url),
        api_key=key,
        default_headers=chosen.headers(key),
        default_query=chosen.query() or None,
        max_retries=0,
        timeout=timeout_s,
        http_client=http_client,  # every answer's body capped (tasks/judging/answer_cap)
    )
