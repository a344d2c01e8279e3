"""Forge's rubric telemetry (seed 002, section 4) as OpenTelemetry metrics, under the seed's names:
`rubric.retrieval_time_ms` (a histogram: a timer around every library lookup), `rubric.usage_count`
(a counter per rubric id and version, incremented on retrieval), `rubric.total_count` (a gauge: the
rubrics a library holds) and `rubric.calibration_correlation` (a gauge per rubric version, set by
`rubric status` from its latest calibration).

Off unless the `otel` extra is installed AND either `OTEL_METRICS_EXPORTER` asks for it (`console`
or `otlp`; `OTEL_SDK_DISABLED=true` wins) or the host program set a meter provider of its own. Off,
a lookup pays one cached check (bench/library_lookup.py measures lookups either way)."""

from __future__ import annotations

from typing import Any

from rubricflow.errors import InputError
from rubricflow.settings import settings

_STATE: dict[str, Any] = {}  # "instruments": the four instruments, or None when off; once per process


def instruments() -> dict[str, Any] | None:
    """The seed's four instruments, or None when metrics are off (decided once per process)."""
    if "instruments" not in _STATE:
        meter = _meter()
        _STATE["instruments"] = None if meter is None else _create(meter)
    return _STATE["instruments"]


def reset() -> None:
    """Decide again on the next lookup (after the environment or the meter provider changed)."""
    _STATE.clear()


def retrieved(rubric_id: str, version: str, elapsed_ms: float) -> None:
    """One library lookup: its time in the histogram, and one more use of that rubric version."""
    found = instruments()
    if found is None:
        return
    attributes = {"rubric.id": rubric_id, "rubric.version": version}
    found["retrieval"].record(elapsed_ms, attributes)
    found["usage"].add(1, attributes)


def library_size(count: int) -> None:
    found = instruments()
    if found is not None:
        found["total"].set(count)


def calibration(rubric_id: str, version: str, correlation: float) -> None:
    found = instruments()
    if found is not None:
        found["calibration"].set(correlation, {"rubric.id": rubric_id, "rubric.version": version})


def _create(meter: Any) -> dict[str, Any]:
    return {
        "retrieval": meter.create_histogram(
            "rubric.retrieval_time_ms", unit="ms", description="Time of one rubric library lookup (target: P99 < 10 ms)"
        ),
        "usage": meter.create_counter("rubric.usage_count", description="Retrievals of a rubric version"),
        "total": meter.create_gauge("rubric.total_count", description="Rubrics in the library"),
        "calibration": meter.create_gauge(
            "rubric.calibration_correlation", description="Latest mean Pearson r against human labels (target >= 0.7)"
        ),
    }


def _meter() -> Any | None:
    telemetry = settings().telemetry
    if (telemetry.sdk_disabled or "").lower() == "true":
        return None
    try:
        from opentelemetry import metrics
    except ImportError:  # the `otel` extra is not installed
        return None
    provider = metrics.get_meter_provider()
    if type(provider).__name__ != "_ProxyMeterProvider":  # the host program set one up
        return metrics.get_meter("rubricflow")
    exporters = [e.strip() for e in (telemetry.metrics_exporter or "").split(",") if e.strip()]
    if not exporters or exporters == ["none"]:
        return None
    metrics.set_meter_provider(_provider(exporters))
    return metrics.get_meter("rubricflow")


def _provider(exporters: list[str]) -> Any:
    """A meter provider from the standard variables (OTEL_METRICS_EXPORTER, OTEL_EXPORTER_OTLP_*)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource

    readers = []
    for name in exporters:
        if name == "console":
            readers.append(PeriodicExportingMetricReader(ConsoleMetricExporter()))
        elif name == "otlp":
            try:
                from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
            except ImportError:
                raise InputError(
                    "OTEL_METRICS_EXPORTER=otlp needs opentelemetry-exporter-otlp-proto-http installed"
                ) from None
            readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
        elif name != "none":
            raise InputError(f"OTEL_METRICS_EXPORTER names {name!r}; rubricflow supports console, otlp or none")
    resource = Resource.create({} if settings().telemetry.service_name else {"service.name": "rubricflow"})
    return MeterProvider(resource=resource, metric_readers=readers)
