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
from typing import TYPE_CHECKING, Any

from rubricflow.settings import variable

from .base import Capabilities, OutputMode, Provider, chat_completion  # noqa: F401 - the package's face

if TYPE_CHECKING:  # the SDK is loaded by the first call, not by every command's import (0.7 s)
    from openai import AsyncOpenAI


@functools.cache
def providers() -> dict[str, Provider]:
    from .anthropic_messages import AnthropicMessages  # a provider module imports Provider from .base
    from .azure_openai import AzureOpenAI
    from .bedrock_converse import BedrockConverse  # its SDK (the `bedrock` extra) is imported by its first call
    from .gemini_generate import GeminiGenerate
    from .llama_cpp import LlamaCpp
    from .vertex_generate import VertexGenerate  # likewise (the `vertex` extra)

    chosen = (
        Provider(),
        AnthropicMessages(),
        GeminiGenerate(),
        AzureOpenAI(),
        BedrockConverse(),
        VertexGenerate(),
        LlamaCpp(),
    )
    return {p.name: p for p in chosen}


def provider(name: str | None) -> Provider:
    """The provider of this name (None: the default); a name no module defines is an error naming those that exist."""
    known = providers()
    if (name or "openai") not in known:
        raise ValueError(f"unknown provider {name!r}: use one of {', '.join(sorted(known))}")
    return known[name or "openai"]


@functools.cache
def key_variables() -> tuple[str, ...]:
    """Every provider's key variables, and every variable a key is discovered in (providers/keys.py):
    secrets are scrubbed of all of them. Fixed by the code, so found once: `scrub` asks for every
    text it cleans (building the providers each time was ~4% of a reward-server rollout's CPU)."""
    from .keys import HOST_KEYS

    own = [v for p in providers().values() for v in p.key_variables]
    return tuple(dict.fromkeys(own + list(HOST_KEYS.values())))


def api_key(name: str | None = None, base_url: str | None = None) -> str:
    """The key comes from the environment only, so it never appears in parameters or logs: the
    variable of the endpoint's provider (providers/keys.py), else the wire API's own (the first set)."""
    from .keys import key_variable_for

    discovered = key_variable_for(base_url, "")
    found = (variable(v) for v in ((discovered,) if discovered else provider(name).key_variables))
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
