"""`rubricflow judge-server`: serve the offline judge (a deterministic stand-in, not a model)."""

from __future__ import annotations

from pathlib import Path

import typer

from rubricflow.errors import InputError
from rubricflow.settings import variable


def judge_server(
    port: int = typer.Option(8765, help="Port on 127.0.0.1 (0: any free port)."),
    latency_ms: float = typer.Option(0.0, help="Added latency per answer."),
    rpm: float | None = typer.Option(None, help="Enforce this requests/min limit with 429s."),
    no_retry_after: bool = typer.Option(False, help="Send 429s without a Retry-After header."),
    fault_rate: float = typer.Option(0.0, help="Share of requests that get an injected fault."),
    faults: str | None = typer.Option(
        None, help="Which faults to inject, comma-separated (default: every transient one, i.e. all but refusal)."
    ),
    fault_attempts: int = typer.Option(1, help="How many attempts of a faulty request fail."),
    fault_cycle: bool = typer.Option(False, help="Inject the faults in turn (every kind appears), not by request."),
    stall_s: float = typer.Option(3.0, help="How long a `timeout` fault stalls."),
    supports: str = typer.Option(
        "json_schema", help="Richest output mode accepted: json_schema, json_object, tools or text."
    ),
    refusal_status: int = typer.Option(
        400, help="HTTP status of a refused output mode (llama.cpp's Python server: 500)."
    ),
    drop_system: bool = typer.Option(
        False, help="Drop system messages, as a chat template without a system role does."
    ),
    slots: int = typer.Option(0, help="Answer at most this many requests at once; the rest queue (0: no limit)."),
    reasoning_tokens: int = typer.Option(
        0,
        min=0,
        help="Act as a reasoning model (o-series, GPT-5): refuse max_tokens, temperature and logprobs with "
        "OpenAI's 400s, and spend this many hidden reasoning tokens of max_completion_tokens per answer.",
    ),
    batch_delay: float = typer.Option(0.0, help="Seconds a batch (Batch API, Message Batches) stays in progress."),
    batch_fail_rate: float = typer.Option(0.0, help="Share of batch lines (requests) answered with an error."),
    batch_expire: bool = typer.Option(False, help="Batches end expired, with no output (every request expired)."),
    no_logprobs: bool = typer.Option(False, help="Refuse requests for logprobs (400), as many endpoints do."),
    missing_model: list[str] | None = typer.Option(
        None, help="Answer 404 'model not found' for this model name (repeatable): a judge that fails."
    ),
    require_key_env: str | None = typer.Option(
        None, help="Answer 401 unless the request carries the key held in this environment variable."
    ),
    script: Path | None = typer.Option(
        None, help="Answer judge requests from this key file (tasks/standins/scripted_judge.py), not the offline judge."
    ),
) -> None:
    """Serve the OFFLINE judge: a deterministic, model-free stand-in (pattern hits and text statistics)."""
    from rubricflow.tasks.standins.batch_api import BatchConfig
    from rubricflow.tasks.standins.judge_server import (
        FAULTS,
        TRANSIENT_FAULTS,
        JudgeServer,
        ServerConfig,
        bind,
        make_server,
    )

    chosen = tuple(f.strip() for f in faults.split(",") if f.strip()) if faults is not None else TRANSIENT_FAULTS
    unknown = [f for f in chosen if f not in FAULTS]
    if unknown:
        raise InputError(f"unknown faults {unknown}; choose from {', '.join(FAULTS)}")
    config = ServerConfig(
        latency_ms=latency_ms,
        rpm=rpm,
        retry_after=not no_retry_after,
        fault_rate=fault_rate,
        faults=chosen,
        fault_attempts=fault_attempts,
        fault_cycle=fault_cycle,
        stall_s=stall_s,
        supports=supports,
        batch=BatchConfig(delay_s=batch_delay, fail_rate=batch_fail_rate, expire=batch_expire),
        api_key=(variable(require_key_env) or "") if require_key_env else None,
        refusal_status=refusal_status,
        drop_system=drop_system,
        slots=slots,
        reasoning_tokens=reasoning_tokens,
        logprobs=not no_logprobs,
        missing_models=tuple(missing_model or ()),
        script=_script(script),
    )
    try:
        sock = bind(port=port)
    except OSError as exc:
        raise InputError(f"cannot listen on 127.0.0.1:{port}: {exc}") from None
    print(
        f"rubricflow offline judge (a deterministic stand-in, not a model) listening on "
        f"http://127.0.0.1:{sock.getsockname()[1]}/v1",
        flush=True,
    )
    make_server(JudgeServer(config)).run(sockets=[sock])


def _script(path: Path | None):
    """The scripted judge's key file, read now: a bad one is a one-line error before the server starts."""
    if path is None:
        return None
    from rubricflow.tasks.standins.scripted_judge import ScriptError, load_script

    try:
        return load_script(path)
    except ScriptError as exc:
        raise InputError(str(exc)) from None
