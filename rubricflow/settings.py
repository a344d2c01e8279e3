"""Every environment variable rubricflow reads, in one settings tree (pydantic-settings), each with
what it does: the RUBRICFLOW_* variables at the top, Prefect's, OpenTelemetry's and the providers'
endpoints below them. The modules read `settings()` (or are handed a value), never os.environ:
this module, the secrets scrubber and the CLI's entry point are the only readers (a structure test
holds it), and docs/settings.md is generated from this tree (`python -m rubricflow.settings_page`).
Values are read when asked, so a variable set after import counts; each stays text here and the
module that uses it says what a bad value means."""

from __future__ import annotations

import os
from functools import cached_property
from typing import Any

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class PrefectSettings(BaseSettings):
    """Prefect's own variables, as rubricflow reads them to find (or not replace) a Prefect server."""

    model_config = SettingsConfigDict(env_prefix="PREFECT_", extra="ignore")

    api_url: str | None = Field(
        default=None, description="Your own Prefect server's API: rubricflow then starts none of its own."
    )
    home: str | None = Field(
        default=None, description="Prefect's home folder (default ~/.prefect); each home gets its own local server."
    )
    profiles_path: str | None = Field(
        default=None, description="Prefect's profiles file (default PREFECT_HOME/profiles.toml), read for an API URL."
    )
    profile: str | None = Field(default=None, description="The active Prefect profile (default: the file's `active`).")


class TelemetrySettings(BaseSettings):
    """The OpenTelemetry SDK's standard variables that decide whether rubricflow sets up exporters."""

    model_config = SettingsConfigDict(env_prefix="OTEL_", extra="ignore")

    sdk_disabled: str | None = Field(default=None, description="true: no spans and no metrics are exported.")
    traces_exporter: str | None = Field(
        default=None, description="Span exporters, comma-separated (console, otlp); none set: no spans."
    )
    metrics_exporter: str | None = Field(
        default=None, description="Metric exporters, comma-separated (console, otlp); none set: no metrics."
    )
    service_name: str | None = Field(default=None, description="The service name on spans (default: rubricflow).")


class EndpointSettings(BaseSettings):
    """Where each provider's API is, when neither --base-url nor --model's endpoint says (the keys
    are read only when a call is made: see docs/settings.md's key table)."""

    model_config = SettingsConfigDict(extra="ignore")

    openai_base_url: str | None = Field(
        default=None, description="The OpenAI-compatible endpoint (default: OpenAI's public API)."
    )
    anthropic_base_url: str | None = Field(
        default=None, description="Anthropic's Messages API endpoint (default: Anthropic's public API)."
    )
    gemini_base_url: str | None = Field(
        default=None, description="Gemini's generateContent endpoint (default: Google's public API)."
    )
    azure_openai_base_url: str | None = Field(
        default=None, description="An Azure OpenAI deployment's URL (Azure has no public default)."
    )
    azure_openai_endpoint: str | None = Field(
        default=None,
        description="An Azure OpenAI resource (https://RESOURCE.openai.azure.com); --model: the deployment.",
    )
    azure_openai_api_version: str | None = Field(
        default=None, description="Azure OpenAI's data-plane api-version (default 2024-10-21)."
    )
    aws_endpoint_url_bedrock_runtime: str | None = Field(
        default=None,
        description="Bedrock's runtime endpoint for --provider bedrock (default: https://bedrock-runtime.REGION.amazonaws.com).",
    )
    aws_region: str | None = Field(
        default=None, description="The AWS region of --provider bedrock (default: AWS_DEFAULT_REGION, else us-east-1)."
    )
    aws_default_region: str | None = Field(default=None, description="The AWS region when AWS_REGION is not set.")
    google_vertex_base_url: str | None = Field(
        default=None,
        description="Vertex AI's endpoint for --provider vertex (default: LOCATION-aiplatform.googleapis.com).",
    )
    google_cloud_project: str | None = Field(
        default=None, description="The Google Cloud project of --provider vertex (required for it)."
    )
    google_cloud_location: str | None = Field(
        default=None, description="The Vertex AI location of --provider vertex (default: global)."
    )
    xdg_cache_home: str | None = Field(
        default=None, description="The user's cache folder (default ~/.cache), under which the state folder lies."
    )
    ari_paperbench_rubric_dir: str | None = Field(
        default=None,
        description="A folder of PaperBench venue templates searched first by --venue (seed 003's ARI override).",
    )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RUBRICFLOW_", extra="ignore", frozen=True)

    warehouse: str | None = Field(
        default=None, description="The warehouse file (default: warehouse/rubricflow.duckdb; set but empty: refused)."
    )
    library: str | None = Field(default=None, description="More rubric library folders, separated by `:`.")
    prices: str | None = Field(default=None, description="A price table YAML (USD per 1M tokens) over genai-prices'.")
    lock_wait_s: str | None = Field(
        default=None, description="Seconds a writer waits for a busy warehouse (default 60)."
    )
    duckdb_memory: str | None = Field(
        default=None, description="DuckDB's memory limit (e.g. 1GB), past which it spills to disk (default: DuckDB's)."
    )
    dask_address: str | None = Field(default=None, description="The Dask scheduler whose workers judge (as --cluster).")
    dask_insecure: str | None = Field(default=None, description="1: accept a plain tcp:// Dask scheduler (no TLS).")
    dask_tls_ca: str | None = Field(default=None, description="The CA certificate of the Dask cluster's TLS.")
    dask_tls_cert: str | None = Field(default=None, description="This client's certificate for the Dask cluster.")
    dask_tls_key: str | None = Field(default=None, description="This client's private key for the Dask cluster.")
    cluster_silence_s: str | None = Field(
        default=None, description="Seconds without word from a cluster shard before it is tried again elsewhere."
    )
    cluster_stall_s: str | None = Field(
        default=None,
        description="Seconds a cluster shard may send heartbeats but no judged cell before it is given up "
        "(default: one cell's worst case).",
    )
    cluster_deadline_s: str | None = Field(
        default=None, description="Seconds a cluster run may take over every shard and attempt (default: none)."
    )
    limits_url: str | None = Field(default=None, description="PostgreSQL holding each key's rate limits (as --limits).")
    state_dir: str | None = Field(
        default=None, description="The user's state folder (default: ~/.cache/rubricflow; set but empty: refused)."
    )
    prefect_server: str | None = Field(
        default=None, description="shared (default): the local Prefect server every command shares; else Prefect's own."
    )
    prefect_idle_s: str | None = Field(
        default=None, description="Seconds the shared Prefect server and the warm worker stay up unused."
    )
    warm_worker: str | None = Field(
        default=None, description="0 or empty: run every flow command in its own process, never the warm worker."
    )
    warm_worker_wait_s: str | None = Field(
        default=None, description="Seconds a command waits for the warm worker's answer."
    )
    progress_every_s: str | None = Field(
        default=None, description="Seconds between updates of a run's progress artifact."
    )
    debug: str | None = Field(default=None, description="1: tracebacks and Prefect's error logs in full (as --debug).")
    serve_poll_s: str | None = Field(
        default=None, description="Seconds between `rubricflow serve`'s looks for ended nights."
    )

    @cached_property
    def prefect(self) -> PrefectSettings:
        """Prefect's variables (PREFECT_*), read when asked (each group costs ~1 ms to read)."""
        return PrefectSettings()

    @cached_property
    def telemetry(self) -> TelemetrySettings:
        """OpenTelemetry's variables (OTEL_*)."""
        return TelemetrySettings()

    @cached_property
    def endpoints(self) -> EndpointSettings:
        """The providers' endpoints and the user's cache folder."""
        return EndpointSettings()


# The tree, top to bottom: each group's variables are its fields, named with its prefix.
GROUPS: dict[str, type[BaseSettings]] = {
    "RUBRICFLOW_": Settings,
    "PREFECT_": PrefectSettings,
    "OTEL_": TelemetrySettings,
    "": EndpointSettings,
}


_built: tuple[Any, Settings] | None = None


def path_setting(value: str | None, variable: str) -> str | None:
    """A path variable's value, None where it is not set. One set but empty (a shell variable that
    expanded to nothing: `RUBRICFLOW_WAREHOUSE=$DIR` with DIR unset) is refused: read as unset, a
    command wrote to the default warehouse in the current folder and ended successful."""
    if value is not None and not value.strip():
        from rubricflow.errors import InputError

        raise InputError(f"{variable} is set but empty: unset it for the default, or name a path")
    return value


def settings() -> Settings:
    """Every variable rubricflow reads, as it is now: the tree is built again whenever the environment
    changed since the last call (it reads nothing else), so a variable set after import counts. A
    score called it ~30 times, each ~3 ms of pydantic-settings work; the tree is frozen, so a caller
    cannot change what the next one reads."""
    global _built
    built = _built
    if built is None or built[0] != _environ_now():
        built = _built = (_environ_now(), Settings())
    return built[1]


def _environ_now() -> Any:
    """What `settings()` compares to know whether the environment changed: os.environ's own store
    (bytes, compared in C) where CPython keeps one; else its items, decoded one by one (~60 us at
    100 variables: ~3% of the reward server's CPU, #55)."""
    raw = getattr(os.environ, "_data", None)
    return dict(raw) if isinstance(raw, dict) else tuple(sorted(os.environ.items()))


def variable(name: str) -> str | None:
    """A variable whose name is given elsewhere, read now: a provider's key (never stored, so it
    never reaches parameters or logs) or the variable `rubricflow server --require-key-env` names."""
    return os.environ.get(name)


def environment() -> dict[str, str]:
    """The whole environment as it is now: what a child process inherits (a copy; writing to it
    changes nothing)."""
    return dict(os.environ)


def endpoint(name: str) -> str | None:
    """One of the endpoint variables (EndpointSettings' fields, by its name) read now, without building
    the tree: a provider's URL is looked up for every client a judge keys."""
    if name.lower() not in EndpointSettings.model_fields:
        raise KeyError(f"{name} is no endpoint setting: add it to EndpointSettings")
    return os.environ.get(name) or None
