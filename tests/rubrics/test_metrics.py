"""Forge's rubric telemetry (seed 002, section 4) as OpenTelemetry metrics under the seed's names:
a real `rubricflow` process with the standard OTEL_METRICS_EXPORTER=console prints the retrieval
histogram, the usage counter per rubric version and the library's size; without it, nothing."""

import json
import os
import subprocess

import pytest

from tests.conftest import EXE

pytest.importorskip("opentelemetry.sdk.metrics")


def show(*refs: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    args = [EXE, "rubric", "show", *refs] if len(refs) == 1 else [EXE, "rubric", "diff", *refs]
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env=base | env)


def exported_metrics(stdout: str) -> dict[str, list[dict]]:
    """Metric name -> its data points, from the console exporter's JSON document(s) on stdout."""
    found: dict[str, list[dict]] = {}
    start = stdout.find('{\n    "resource_metrics"')
    assert start >= 0, stdout[-2000:]
    document, _ = json.JSONDecoder().raw_decode(stdout[start:])
    for resource in document["resource_metrics"]:
        for scope in resource["scope_metrics"]:
            for metric in scope["metrics"]:
                found.setdefault(metric["name"], []).extend(metric["data"]["data_points"])
    return found


def test_lookups_are_timed_and_counted_per_rubric_version_under_the_seeds_names():
    done = show("llm-slop", "llm-slop", OTEL_METRICS_EXPORTER="console")
    assert done.returncode == 0, done.stderr
    metrics = exported_metrics(done.stdout)
    (usage,) = [p for p in metrics["rubric.usage_count"] if p["attributes"]["rubric.id"] == "llm-slop"]
    assert usage["value"] == 2  # `rubric diff` looked it up twice
    (timing,) = [p for p in metrics["rubric.retrieval_time_ms"] if p["attributes"]["rubric.id"] == "llm-slop"]
    assert timing["count"] == 2 and 0 < timing["sum"] < 20  # milliseconds, two lookups
    (size,) = metrics["rubric.total_count"]
    assert size["value"] >= 10  # the built-in library


def test_no_metrics_unless_asked():
    done = show("llm-slop")
    assert done.returncode == 0, done.stderr
    assert "resource_metrics" not in done.stdout and "rubric.usage_count" not in done.stdout
