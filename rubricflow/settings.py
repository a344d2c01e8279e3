"""Every RUBRICFLOW_* environment variable, in one settings object (pydantic-settings), each with
what it does: the modules read `settings()` instead of os.environ, and docs/operations.md lists
these fields (a test holds the two equal). Values are read when asked, so a variable set after
import counts; each stays text here and the module that uses it says what a bad value means."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RUBRICFLOW_", extra="ignore")

    warehouse: str | None = Field(
        default=None, description="The warehouse file (default: warehouse/rubricflow.duckdb)."
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
    state_dir: str | None = Field(default=None, description="The user's state folder (default: ~/.cache/rubricflow).")
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


def settings() -> Settings:
    """The RUBRICFLOW_* variables as they are now."""
    return Settings()
