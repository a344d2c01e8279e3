"""OpenTelemetry (the `otel` extra): a real scoring flow against the offline judge server, traced
into the SDK's in-memory exporter in a process of its own (a tracer provider is set once per
process); span and event attributes checked by name against the GenAI semantic conventions'
own constants, and their figures against the warehouse's rows."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT, rows, write_corpus

pytest.importorskip("opentelemetry.sdk")
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai  # noqa: E402

TRACED_RUN = textwrap.dedent(
    """
    import json, sys
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)

    from rubricflow.cli.flow_start import start_flows
    start_flows()
    from rubricflow.flows.ingest import ingest_flow
    from rubricflow.flows.score import score_corpus

    corpus, warehouse, base_url = sys.argv[1:4]
    ingest_flow(corpus, warehouse, "c")
    score_corpus("c", "llm-slop", warehouse, {"base_url": base_url}, options={"shard_size": 4})
    provider.force_flush()
    spans = [
        {
            "name": s.name, "id": s.context.span_id, "parent": s.parent.span_id if s.parent else None,
            "trace": s.context.trace_id, "kind": s.kind.name, "attributes": dict(s.attributes),
            "events": [{"name": e.name, "attributes": dict(e.attributes)} for e in s.events],
        }
        for s in exporter.get_finished_spans()
    ]
    print("SPANS " + json.dumps(spans))
    """
)


def test_a_traced_run_has_run_shard_and_model_call_spans_with_evaluation_events(tmp_path, judge_server):
    server = judge_server()
    corpus = write_corpus(tmp_path / "corpus.jsonl", 10)
    warehouse = tmp_path / "w.duckdb"
    done = subprocess.run(
        [sys.executable, "-c", TRACED_RUN, str(corpus), str(warehouse), server.base_url],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    spans = json.loads(done.stdout.split("SPANS ", 1)[1])
    [run] = [s for s in spans if s["name"].startswith("rubricflow.run ")]
    shards = [s for s in spans if s["name"].startswith("rubricflow.shard ")]
    calls = [s for s in spans if s["name"] == "chat rubricflow-offline-judge"]
    assert len(shards) == 3 and all(s["parent"] == run["id"] for s in shards)  # 10 cells in shards of 4
    assert len(calls) == 10 and all(c["parent"] in {s["id"] for s in shards} and c["kind"] == "CLIENT" for c in calls)
    ours = [run, *shards, *calls]  # Prefect traces its flow and task runs too: the run sits in the flow's trace
    assert {s["trace"] for s in ours} == {run["trace"]} and run["parent"] is not None

    tokens = rows(warehouse, "SELECT text_id, prompt_tokens, completion_tokens, response_id FROM completions")
    by_text = {t: (p, c, r) for t, p, c, r in tokens}
    for call in calls:
        a = call["attributes"]
        assert a[gen_ai.GEN_AI_OPERATION_NAME] == "chat" and a[gen_ai.GEN_AI_PROVIDER_NAME] == "openai"
        assert a[gen_ai.GEN_AI_REQUEST_MODEL] == "rubricflow-offline-judge"
        prompt, completion, response_id = by_text[a["rubricflow.text_id"]]
        assert (a[gen_ai.GEN_AI_USAGE_INPUT_TOKENS], a[gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS]) == (prompt, completion)
        assert a[gen_ai.GEN_AI_RESPONSE_ID] == response_id

    judged = rows(warehouse, "SELECT text_id, criterion_id, unit_score, rationale FROM judgments")
    events = [(call["attributes"]["rubricflow.text_id"], e["attributes"]) for call in calls for e in call["events"]]
    assert all(e["name"] == "gen_ai.evaluation.result" for c in calls for e in c["events"])
    assert len(events) == len(judged) == 30
    assert {
        (
            text,
            a[gen_ai.GEN_AI_EVALUATION_NAME],
            a[gen_ai.GEN_AI_EVALUATION_SCORE_VALUE],
            a[gen_ai.GEN_AI_EVALUATION_EXPLANATION],
        )
        for text, a in events
    } == set(judged)
    labels = {a[gen_ai.GEN_AI_EVALUATION_SCORE_LABEL] for _, a in events}
    assert labels == {"pass", "fail"}


def test_the_console_exporter_is_chosen_by_the_standard_variable_and_off_by_default():
    code = textwrap.dedent(
        """
        from types import SimpleNamespace as NS
        from rubricflow.tasks.judging import telemetry
        from rubricflow.tasks.judging.verify import CriterionResult
        print("tracer", telemetry.tracer() is not None)
        cell = NS(text_id="t1", unit_id="tone", sample=0)
        with telemetry.model_call("m", "openai", NS(temperature=0.0, max_tokens=64), cell) as span:
            row = {"model": "m", "prompt_tokens": 12, "completion_tokens": 3, "response_id": "r1"}
            telemetry.record_outcome(span, row, [CriterionResult("tone", 1, 1.0, "polite")], {})
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    off = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert off.returncode == 0 and off.stdout.strip() == "tracer False", off.stderr
    on = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env | {"OTEL_TRACES_EXPORTER": "console"}
    )
    assert on.returncode == 0 and "tracer True" in on.stdout, on.stderr
    printed = json.loads(on.stdout[on.stdout.index("{") :])
    assert printed["name"] == "chat m" and printed["attributes"][gen_ai.GEN_AI_USAGE_INPUT_TOKENS] == 12
    [event] = printed["events"]
    assert event["name"] == "gen_ai.evaluation.result"
    assert event["attributes"] == {
        gen_ai.GEN_AI_EVALUATION_NAME: "tone",
        gen_ai.GEN_AI_EVALUATION_SCORE_VALUE: 1.0,
        gen_ai.GEN_AI_EVALUATION_SCORE_LABEL: "pass",
        gen_ai.GEN_AI_EVALUATION_EXPLANATION: "polite",
        gen_ai.GEN_AI_RESPONSE_ID: "r1",
    }
