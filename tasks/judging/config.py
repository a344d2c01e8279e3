"""The judge setup of a run. Its hash (with the rubric's) names the work cells, so changing the
model or sampling settings re-judges, while changing the endpoint URL or limits does not."""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rubricflow.rubrics.model import Rubric
from rubricflow.rubrics.render import Strategy
from rubricflow.settings import endpoint, settings
from rubricflow.tasks.judging import providers
from rubricflow.tasks.judging.secrets import url_credentials

REMOTE_TIMEOUT_S = 60.0
LOCAL_TIMEOUT_S = 300.0  # a small local model on a CPU can take minutes for a long rubric
OFFLINE_MODEL = "rubricflow-offline-judge"


M = TypeVar("M", bound=BaseModel)

SENT: dict[str, Any] = {"sent": True}  # a JudgeConfig field sent in the request body under its own name when set


@functools.cache
def _sent_fields(model: type[BaseModel]) -> tuple[str, ...]:
    """The fields of `model` marked SENT, found once per class (a walk over every field each
    request was ~1% of the reward server's CPU, #55)."""
    return tuple(n for n, f in model.model_fields.items() if f.json_schema_extra == SENT)


class JudgeConfig(BaseModel):
    """A judge setup. Each field's docstring is its help text on the command line, where every field
    but `model` and `base_url` is an option generated from it (rubricflow/cli/judge_options.py): a
    new judge option is one field here. A field marked `SENT` goes into the request body as is."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    model: str = OFFLINE_MODEL
    """Judge model (default: the offline stand-in)."""
    base_url: str | None = None
    """The endpoint (default: the provider's variable, OPENAI_BASE_URL..., else its public API)."""
    provider: str = "openai"
    """The endpoint's wire API (tasks/judging/providers; docs/models.md lists them): `openai` (chat
    completions, any compatible server), `llamacpp` (llama.cpp's servers: chat completions whose
    decisions are held to the levels by a grammar), `anthropic` (the Messages API), ..."""
    strategy: Strategy = "holistic"
    """per_criterion, grouped or holistic: how many criteria one call asks about (default: the rubric's
    surface.execution_strategy, else holistic)."""
    samples: int = Field(default=1, ge=1, le=100)
    """Judgments per cell (repeat sampling)."""
    temperature: float = Field(default=0.0, ge=0, le=2, allow_inf_nan=False)  # nan/inf: refused, not sent
    """The judge's sampling temperature."""
    top_p: float | None = Field(default=None, gt=0, le=1, allow_inf_nan=False, json_schema_extra=SENT)
    """Nucleus sampling: only the most likely tokens whose probabilities add up to this (default: the server's)."""
    seed: int | None = None
    """The sampling seed (repeat samples get seed + sample)."""
    max_tokens: int = Field(default=1024, ge=16)
    """Room for the answer, in tokens."""
    reasoning_tokens: int = Field(default=4096, ge=0)
    """Room for a reasoning model's hidden reasoning (o-series, GPT-5), on top of max_tokens, once the
    server is found to reason (it refuses max_tokens, or reports reasoning tokens): reasoning counts
    against the completion budget, and an answer budget alone ends in an empty answer cut off at the
    limit. Not part of the judge hash: it leaves room, it does not change what is asked."""
    output_mode: Literal["auto", "json_schema", "json_object", "tools", "text", "verdict_tools"] = "auto"
    """How the answer's structure is asked for; auto starts at json_schema and falls back per run."""
    system_prompt: Literal["auto", "system", "user"] = "auto"
    """Where the rubric goes: the system message, the user turn, or auto (a one-time check per run
    moves it to the user turn when the server's chat template drops system messages)."""
    timeout_s: float | None = Field(default=None, gt=0)
    """Seconds for a whole answer; default 60, or 300 for an endpoint on this machine (local models are slow)."""
    call_deadline_s: float | None = Field(default=None, gt=0)
    """Seconds for one model call over all its attempts and back-off waits (tasks/judging/deadline);
    default twice the whole-answer timeout, plus 30 s for back-off waits."""
    max_attempts: int = Field(default=6, ge=1)
    """Tries per call after a transient error (a timeout, a 429, a 5xx)."""
    answer_retries: int = Field(default=2, ge=0)
    """Re-asks after an unusable answer (bad JSON, a truncated answer)."""
    retry_budget: int = Field(default=10_000, ge=0)
    """Retries allowed across the whole run."""
    rpm: float | None = Field(default=None, gt=0)  # None: no limit (0 is refused: it is not "unlimited")
    """Requests per minute limit of the endpoint's key."""
    tpm: float | None = Field(default=None, gt=0)
    """Tokens per minute limit (estimated from the prompt plus max_tokens)."""
    max_in_flight: int = Field(default=64, ge=1)
    """Calls in flight at once."""
    budget_usd: float | None = Field(default=None, ge=0)
    """Stop before spending more than this many USD (per rubric run)."""
    prices: str | None = None
    """Price table YAML (default: genai-prices, or $RUBRICFLOW_PRICES)."""
    batch: bool = False
    """Judge through the provider's batch API (OpenAI's Batch API, Anthropic's Message Batches): half
    price, answers within 24 h."""
    batch_poll_s: float = Field(default=30.0, gt=0)
    """Seconds between polls of a batch."""
    batch_timeout_s: float = Field(default=86_400.0, gt=0)
    """Seconds to wait for a batch before giving up on it (it stays recorded; a later run collects it)."""
    cluster: str | None = None
    """A Dask scheduler, tcp://HOST:PORT (default: $RUBRICFLOW_DASK_ADDRESS), whose workers judge the
    shards; the flow's process still does every warehouse write."""
    limits_url: str | None = None
    """A PostgreSQL URL (default: $RUBRICFLOW_LIMITS_URL) holding each provider key's rpm/tpm buckets,
    for workers on several machines; without one they live in the user's state folder. No password in
    it (the URL is stored with the run): libpq reads PGPASSWORD or ~/.pgpass."""
    logprobs: bool | None = None
    """Ask for top_logprobs and keep a logprob-weighted score beside the sampled one (G-Eval);
    dropped for the run when the endpoint refuses it. Default: on for remote endpoints, off for
    one on this machine (llama.cpp's Python server answers ~6x slower with logprobs). It does not
    change the sampled judgment, so it is not part of the judge hash."""

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, name: str) -> str:
        providers.provider(name)  # an unknown name is refused, naming the known ones
        return name

    @model_validator(mode="after")
    def _no_credentials_in_the_url(self) -> JudgeConfig:
        # The URL is a flow parameter and is stored with the run; a key belongs in OPENAI_API_KEY.
        found = url_credentials(self.base_url) if self.base_url else []
        if found:
            raise ValueError(
                f"--base-url carries credentials ({', '.join(found)}), which would be stored with the "
                f"run and in Prefect: put the key in {providers.provider(self.provider).key_variable} and pass the URL "
                "without it"
            )
        return self

    @model_validator(mode="after")
    def _a_url_with_scheme_and_host(self) -> JudgeConfig:
        # "localhost:8000/v1" would reach no server on every call (a setup no retry fixes): refuse it now.
        parts = urlsplit(self.base_url or "http://x")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"--base-url {self.base_url!r} is not an http:// or https:// URL with a host")
        host = parts.hostname.rstrip(".")
        if host == "invalid" or host.endswith(".invalid"):
            # RFC 6761: such a name never resolves; looking it up would still send a DNS query out.
            raise ValueError(f"--base-url {self.base_url!r}: the host {host!r} cannot exist (RFC 6761), no call sent")
        return self

    @model_validator(mode="after")
    def _no_password_in_the_limits_url(self) -> JudgeConfig:
        url = self.limits_url or ""
        if url and not url.startswith(("postgresql://", "postgres://")):
            raise ValueError(f"--limits must be a postgresql:// URL, not {url.split(':')[0]!r}")
        if any(found != "user" for found in (url_credentials(url) if url else [])):
            raise ValueError(
                "--limits carries a password, which would be stored with the run and in Prefect: "
                "pass the URL without it and put the password in PGPASSWORD or ~/.pgpass"
            )
        return self

    @model_validator(mode="after")
    def _budget_needs_online_calls(self) -> JudgeConfig:
        # The budget reserves each call's cost before it is sent; a batch is paid for as a whole
        # and cannot be stopped part way, so the two are not combined (rather than a silent overrun).
        if self.batch and not providers.provider(self.provider).capabilities.batch:
            raise ValueError(
                f"--batch needs the OpenAI Batch API or Anthropic's Message Batches, which provider "
                f"{self.provider!r} does not offer"
            )
        if self.batch and self.budget_usd is not None:
            raise ValueError(
                "--budget cannot be combined with --batch: a submitted batch cannot be stopped part way; "
                "check the estimate printed before the run instead"
            )
        return self

    @model_validator(mode="after")
    def _cluster_limits_are_shared(self) -> JudgeConfig:
        # rate limits on a cluster: each worker machine would keep its own bucket, and the key's limit be exceeded times the machines
        if self.resolved_cluster() and (self.rpm or self.tpm) and not self.resolved_limits_url():
            raise ValueError(
                "--rpm/--tpm with --cluster need --limits (a PostgreSQL every worker machine reaches): without it "
                "each worker machine keeps its own bucket and the key's limit is exceeded"
            )
        return self

    def for_rubric(self, rubric: Rubric) -> JudgeConfig:
        """This setup as it judges `rubric`: the rubric's execution strategy (surface.execution_strategy,
        seed 001) where no strategy was given; a strategy given (--strategy, strategy=) wins."""
        if self.strategy_source(rubric) != "rubric":
            return self
        return self.model_copy(update={"strategy": rubric.surface.execution_strategy})

    def strategy_source(self, rubric: Rubric) -> Literal["option", "rubric", "default"]:
        """Where the strategy `rubric` is judged with comes from (recorded with the run)."""
        if "strategy" in self.model_fields_set:
            return "option"
        return "rubric" if rubric.surface.execution_strategy else "default"

    def judge_hash(self) -> str:
        """What changes a judgment besides the prompt: model, sampling, strategy. Not URL, limits or
        retries. What the prompt says is each call unit's fingerprint (rubrics/render), in the cell key."""
        identity = {
            "model": self.model,
            "strategy": self.strategy,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
        }
        if self.provider != "openai":  # another wire API asks in other terms (the answer as a tool call)
            identity["provider"] = self.provider
        identity |= self.sent()  # set only: a judge hash of before stays the same
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()

    def sent(self) -> dict[str, Any]:
        """The request-body settings marked SENT that are set (None: the server's default)."""
        return {name: getattr(self, name) for name in _sent_fields(type(self)) if getattr(self, name) is not None}

    def resolved_base_url(self) -> str | None:
        """The endpoint given (the option, else the provider's variable); None: the provider's public API."""
        chosen = providers.provider(self.provider)
        return self.base_url or endpoint(chosen.base_url_variable) or chosen.derived_base_url(self.model) or None

    def names_no_endpoint(self) -> bool:
        """Neither an endpoint nor a model a public API serves: the offline stand-in's name with no
        address, which only a run with nothing to judge can go on with (a gate over landed cells)."""
        return self.model == OFFLINE_MODEL and not self.resolved_base_url()

    def check_endpoint(self) -> None:
        """Before a run that calls the model: a provider with no public endpoint (Azure) needs one
        given, refused in one line (its key must not go to OpenAI's); Vertex AI needs a project,
        and an SDK provider its extra installed. Reading landed judgments
        (`--no-score`) needs none, so this is no validator."""
        providers.provider(self.provider).base_url(self.resolved_base_url())  # a provider's own checks too

    def resolved_cluster(self) -> str | None:
        return self.cluster or settings().dask_address or None

    def resolved_limits_url(self) -> str | None:
        return self.limits_url or settings().limits_url or None

    def on_this_machine(self) -> bool:
        return _on_loopback(self.resolved_base_url() or "")

    def resolved_timeout_s(self) -> float:
        if self.timeout_s is not None:
            return self.timeout_s
        return LOCAL_TIMEOUT_S if self.on_this_machine() else REMOTE_TIMEOUT_S

    def resolved_call_deadline_s(self, timeout_s: float | None = None) -> float:
        """`timeout_s`: resolved_timeout_s() when the caller has it already."""
        return self.call_deadline_s or 2 * (self.resolved_timeout_s() if timeout_s is None else timeout_s) + 30.0

    def wants_logprobs(self) -> bool:
        if not providers.provider(self.provider).capabilities.logprobs:
            return False
        return self.logprobs if self.logprobs is not None else not self.on_this_machine()


def checked_config(settings: dict, calls: bool = False) -> JudgeConfig:
    """A JudgeConfig from options as a user gave them; a bad one is an InputError of one line per
    problem (the CLI and the Python API both check their options here). `calls`: the run will call
    the model, so it needs an endpoint (JudgeConfig.check_endpoint)."""
    config = checked(JudgeConfig, settings)
    if calls:
        config.check_endpoint()
    return config


def checked(model: type[M], settings: dict) -> M:
    """`model` (JudgeConfig, RunOptions) from options as a user gave them; a bad one is an
    InputError of one line per problem."""
    from pydantic import ValidationError

    from rubricflow.errors import InputError

    try:
        return model(**settings)
    except ValidationError as exc:
        raise InputError("; ".join(_problem(e) for e in exc.errors())) from None


def _problem(error: Any) -> str:
    message = str(error["msg"]).removeprefix("Value error, ")
    where = ".".join(str(p) for p in error.get("loc", ()))
    return f"{where}: {message}" if where and error.get("type") != "value_error" else message


def api_key(config: JudgeConfig | None = None) -> str:
    """The key of the config's endpoint (its provider's usual variable, providers/keys.py), from the
    environment only, so it never appears in parameters or logs."""
    if config is None:
        return providers.api_key(None)
    return providers.api_key(config.provider, config.resolved_base_url())


@functools.lru_cache(maxsize=64)
def _on_loopback(url: str) -> bool:
    """Whether `url` names this machine (parsed once per URL: it is asked on every call, #55)."""
    return (urlsplit(url).hostname or "") in ("127.0.0.1", "localhost", "::1")
