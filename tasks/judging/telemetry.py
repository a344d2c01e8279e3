"""OpenTelemetry traces of scoring, with the GenAI semantic conventions: a span per run, per shard
and per model call (`chat {model}`: gen_ai.request.model, gen_ai.usage.input_tokens, ...), and one
`gen_ai.evaluation.result` event per judgment on its call's span (gen_ai.evaluation.name = the
criterion, score.value, score.label, explanation). A command sets the tracer provider up before
Prefect starts its flow run (rubricflow/cli/flow_start.py), so the run span is the child of
Prefect's flow-run span and a run is one trace.

Off unless the `otel` extra is installed AND either the standard variables ask for it
(`OTEL_TRACES_EXPORTER=console` or `otlp`; `OTEL_SDK_DISABLED=true` wins) or the host program set
a tracer provider of its own. Off, every hook is one cached check returning a shared no-op, so
scoring pays nothing measurable (bench/telemetry.py). Shards judged in another process (Dask
workers) start their own trace, tagged with the run id."""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Iterator
from typing import Any

from rubricflow.errors import InputError
from rubricflow.settings import settings

_STATE: dict[str, Any] = {}  # "tracer": the tracer, or None when off; resolved once per process
_RUN_CONTEXT: dict[str, Any] = {}  # run id -> the run span's context, the parent of its shards' spans
EVALUATION_EVENT = "gen_ai.evaluation.result"


def tracer() -> Any | None:
    """The tracer, or None when telemetry is off (decided once per process)."""
    if "tracer" not in _STATE:
        _STATE["tracer"] = _configured()
    return _STATE["tracer"]


def reset() -> None:
    """Decide again on the next hook (after the environment or the tracer provider changed)."""
    _STATE.clear()


def _configured() -> Any | None:
    telemetry = settings().telemetry
    if (telemetry.sdk_disabled or "").lower() == "true":
        return None
    exporters = [e.strip() for e in (telemetry.traces_exporter or "").split(",") if e.strip()]
    if (not exporters or exporters == ["none"]) and "opentelemetry.trace" not in sys.modules:
        return None  # nothing asked and no host could have set a provider: not even the import (~40 ms)
    try:
        from opentelemetry import trace
    except ImportError:  # the `otel` extra is not installed
        return None
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):  # the host set one up
        return trace.get_tracer("rubricflow")
    if not exporters or exporters == ["none"]:
        return None
    trace.set_tracer_provider(_provider(exporters))
    return trace.get_tracer("rubricflow")


def _provider(exporters: list[str]) -> Any:
    """A tracer provider from the standard variables: OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES
    name the resource, OTEL_TRACES_EXPORTER the exporters, OTEL_EXPORTER_OTLP_* the OTLP target."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor

    resource = Resource.create({} if settings().telemetry.service_name else {"service.name": "rubricflow"})
    provider = TracerProvider(resource=resource)
    for name in exporters:
        if name == "console":
            provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
        elif name == "otlp":
            try:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            except ImportError:
                raise InputError(
                    "OTEL_TRACES_EXPORTER=otlp needs opentelemetry-exporter-otlp-proto-http installed"
                ) from None
            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        elif name != "none":
            raise InputError(f"OTEL_TRACES_EXPORTER names {name!r}; rubricflow supports console, otlp or none")
    return provider


@contextlib.contextmanager
def run_span(run_id: str, corpus_id: str, rubric: str, model: str) -> Iterator[None]:
    """The span of one scoring run; its shards' spans are its children (in this process)."""
    t = tracer()
    if t is None:
        yield
        return
    from opentelemetry import trace

    attributes = {"rubricflow.run_id": run_id, "rubricflow.corpus_id": corpus_id, "rubricflow.rubric": rubric}
    with t.start_as_current_span(f"rubricflow.run {rubric}", attributes=attributes | {"gen_ai.request.model": model}):
        _RUN_CONTEXT[run_id] = trace.set_span_in_context(trace.get_current_span())
        try:
            yield
        finally:
            _RUN_CONTEXT.pop(run_id, None)


async def traced_shard(judging: Any, run_id: str, shard: str, cells: int) -> Any:
    """Await a shard's judging inside its span, so every model call's span is its child."""
    t = tracer()
    if t is None:
        return await judging
    attributes = {"rubricflow.run_id": run_id, "rubricflow.shard": shard, "rubricflow.cells": cells}
    with t.start_as_current_span(f"rubricflow.shard {shard}", context=_RUN_CONTEXT.get(run_id), attributes=attributes):
        return await judging


_OFF = contextlib.nullcontext()  # what every call hook returns when telemetry is off: no allocation


def model_call(model: str, provider: str, config: Any, cell: Any) -> contextlib.AbstractContextManager[Any]:
    """The span of one cell's model call(s) (re-asks included), `chat {model}`; None when off."""
    t = tracer()
    return _OFF if t is None else _call_span(t, model, provider, config, cell)


@contextlib.contextmanager
def _call_span(t: Any, model: str, provider: str, config: Any, cell: Any) -> Iterator[Any]:
    from opentelemetry.trace import SpanKind

    attributes = {
        "gen_ai.operation.name": "chat",
        **_endpoint(provider, getattr(config, "base_url", None), model),
        "gen_ai.request.model": model,
        "gen_ai.request.temperature": config.temperature,
        "gen_ai.request.max_tokens": config.max_tokens,
        "rubricflow.text_id": cell.text_id,
        "rubricflow.unit_id": cell.unit_id,
        "rubricflow.sample": cell.sample,
    }
    with t.start_as_current_span(f"chat {model}", kind=SpanKind.CLIENT, attributes=attributes) as span:
        yield span


@functools.lru_cache(maxsize=64)
def _endpoint(provider: str, base_url: str | None, model: str) -> dict[str, Any]:
    """gen_ai.provider.name as the conventions spell it (aws.bedrock, gcp.vertex_ai...) and the
    server.address / server.port the calls go to (the provider's public API when none is given);
    once per endpoint, not per call."""
    from urllib.parse import urlsplit

    from rubricflow.settings import endpoint
    from rubricflow.tasks.judging import providers

    chosen = providers.provider(provider)
    try:
        given = base_url or endpoint(chosen.base_url_variable) or chosen.derived_base_url(model)
        url = urlsplit(chosen.base_url(given))
    except (InputError, ValueError):  # no public endpoint and none given (Azure), no project (Vertex): no address
        return {"gen_ai.provider.name": chosen.otel_name}
    port = url.port or (443 if url.scheme == "https" else 80)
    return {"gen_ai.provider.name": chosen.otel_name, "server.address": url.hostname, "server.port": port}


def record_outcome(span: Any | None, row: dict, results: list, thresholds: dict[str, float]) -> None:
    """The call's response figures on its span, and one gen_ai.evaluation.result event per
    criterion judged, labelled pass or fail by the criterion's pass threshold (`thresholds`)."""
    if span is None:
        return
    mode = row.get("output_mode")
    figures = {
        "gen_ai.response.model": row.get("model"),
        "gen_ai.response.id": row.get("response_id"),
        "gen_ai.response.finish_reasons": [row["finish_reason"]] if row.get("finish_reason") else None,
        "gen_ai.output.type": None if mode is None else "text" if mode in ("text", "decision") else "json",
        "gen_ai.usage.input_tokens": row.get("prompt_tokens"),  # cached tokens included, as the conventions ask
        "gen_ai.usage.output_tokens": row.get("completion_tokens"),
        "gen_ai.usage.cache_read.input_tokens": row.get("cached_tokens"),
        "error.type": row.get("error_kind"),
    }
    span.set_attributes(_scrubbed(figures))
    for r in results:
        event = {
            "gen_ai.evaluation.name": r.criterion_id,
            "gen_ai.evaluation.score.value": r.unit_score,
            "gen_ai.evaluation.score.label": _label(r.unit_score, thresholds.get(r.criterion_id, 0.5)),
            "gen_ai.evaluation.explanation": r.rationale or r.reason,
            "gen_ai.response.id": row.get("response_id"),
            "error.type": None if r.unit_score is not None else r.status,  # why it went unscored, as the event's error
        }
        span.add_event(EVALUATION_EVENT, _scrubbed(event))


def _scrubbed(attributes: dict[str, Any]) -> dict[str, Any]:
    """The attributes set, each text scrubbed of the key and credential shapes (tasks/judging/secrets):
    an endpoint that echoes the request puts the key into rationales and ids, and a span leaves the
    process as surely as a warehouse row does."""
    from rubricflow.tasks.judging.secrets import scrub

    def clean(value: Any) -> Any:
        return (
            scrub(value) if isinstance(value, str) else [clean(v) for v in value] if isinstance(value, list) else value
        )

    return {k: clean(v) for k, v in attributes.items() if v is not None}


def _label(unit_score: float | None, threshold: float) -> str | None:
    return None if unit_score is None else "pass" if unit_score >= threshold else "fail"
