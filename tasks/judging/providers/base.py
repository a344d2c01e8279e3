"""What every wire API shares: the `Provider` base (the OpenAI chat-completions API itself), its
`Capabilities`, and reading an answer as a ChatCompletion. A module of its own so the provider
modules import it, never the package's face (providers/__init__.py imports them back: a cycle)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import orjson
from pydantic import ValidationError

from rubricflow.settings import endpoint
from rubricflow.tasks.judging.failures import FailureKind, error_kind

OutputMode = Literal["json_schema", "json_object", "tools", "text"]


@dataclass(frozen=True)
class Capabilities:
    """What a wire API can be asked for; a judge reads them once, never the provider's name."""

    logprobs: bool = True  # top_logprobs can be asked for (a logprob-weighted score)
    batch: Literal["openai", "anthropic"] | None = "openai"
    """The batch API behind --batch (tasks/judging/batch.py picks its wire by this): `openai`, the
    OpenAI Batch API (/v1/files, /v1/batches); `anthropic`, Message Batches; None: none."""
    system_role: Literal["message", "field"] = "message"
    """`message`: the rubric is a system message, which a server's chat template may drop (so
    `--system-prompt auto` checks delivery once per run); `field`: the API has a system field of its
    own, always delivered (no check)."""
    reasoning_parameters: bool = True
    """The server may be a reasoning model that refuses max_tokens / temperature with a 400 naming
    them (learned once per run by tasks/judging/params.RequestForm); False: such a 400 is final."""
    prompt_cache_key: bool = True
    """The API takes OpenAI's `prompt_cache_key` (calls with one key go to the same cache); a
    self-hosted server ignores a field it does not know."""
    decision_grammar: bool = False
    """The server takes a GBNF `grammar` field (llama.cpp's servers, C++ and Python): a decision's
    answer (rubrics/render.decision_criterion) is held to the criterion's levels by a grammar of
    them, and max_tokens is the longest level's tokens. Elsewhere only the prompt's rule and a
    max_tokens with room for a leading space hold it (OpenAI refuses a field it does not know)."""
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
    otel_name = "openai"  # gen_ai.provider.name, as the OpenTelemetry GenAI conventions spell it
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
        return given or endpoint(self.base_url_variable) or self.default_base_url

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

    async def post(self, client: Any, body: dict[str, Any], timeout_s: float) -> Any:
        """Send one request through the one hardened client and return the answer as read (then
        `response` makes it a ChatCompletion). A provider whose maintained SDK speaks the wire
        (Bedrock, Vertex AI) overrides this, and raises openai's errors for its failures. On the
        judge's aiohttp client the request skips the SDK's request layer (tasks/judging/session_post:
        the same client's session, headers, cap and errors)."""
        from rubricflow.tasks.judging import session_post

        path = self.url_path(body)
        way = session_post.route(client, (self.name, path), path, self.request_headers(), timeout_s)
        if way is not None:
            return await session_post.post(client, way, self.encoded(body), timeout_s)
        return await client.post(
            path,
            content=self.encoded(body),  # raw bytes go in `content`: `body=` bytes is deprecated
            cast_to=self.cast_to,
            options={"timeout": timeout_s, "headers": self.request_headers()},
        )

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
