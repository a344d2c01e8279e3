"""OpenTelemetry (the `otel` extra): a real scoring flow against the offline judge server, traced
by the console exporter the standard variable asks for, in a process of its own (a tracer
provider is set once per process); span and event attributes checked by name against the GenAI
semantic conventions' own constants, and their figures against the warehouse's rows."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT, rows, write_corpus

pytest.importorskip("opentelemetry.sdk")
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai  # noqa: E402
from opentelemetry.semconv.attributes import server_attributes  # noqa: E402

TRACED_RUN = textwrap.dedent(
    """
    import sys
    from rubricflow.cli.flow_start import start_flows
    start_flows()
    from rubricflow.flows.ingest import ingest_flow
    from rubricflow.flows.score import score_corpus

    corpus, warehouse, base_url = sys.argv[1:4]
    ingest_flow(corpus, warehouse, "c")
    score_corpus("c", "llm-slop", warehouse, {"base_url": base_url}, options={"shard_size": 4})
    """
)


def console_spans(stdout: str) -> list[dict]:
    """The spans the console exporter printed (one indented JSON object each), in the in-memory
    shape: ids as printed, the parent's id or None, kind without its enum's prefix."""
    decoder, spans, at = json.JSONDecoder(), [], 0
    while (at := stdout.find("{\n", at)) >= 0:
        s, at = decoder.raw_decode(stdout, at)
        spans.append(
            {
                "name": s["name"],
                "id": s["context"]["span_id"],
                "parent": s["parent_id"],
                "trace": s["context"]["trace_id"],
                "kind": s["kind"].removeprefix("SpanKind."),
                "attributes": s["attributes"],
                "events": s["events"],
            }
        )
    return spans


def test_a_traced_run_is_one_trace_under_prefects_flow_run_with_the_conventions_attributes(
    tmp_path, thread_judge_server
):
    """Through the standard variable (rubricflow sets the tracer provider up, as a user's command
    does): the run span used to be a root, Prefect's flow-run span started before the provider
    was there (a non-recording span), so one run showed as several traces."""
    server = thread_judge_server()
    corpus = write_corpus(tmp_path / "corpus.jsonl", 10)
    warehouse = tmp_path / "w.duckdb"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")} | {"OTEL_TRACES_EXPORTER": "console"}
    done = subprocess.run(
        [sys.executable, "-c", TRACED_RUN, str(corpus), str(warehouse), server.base_url],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    spans = console_spans(done.stdout)
    [run] = [s for s in spans if s["name"].startswith("rubricflow.run ")]
    shards = [s for s in spans if s["name"].startswith("rubricflow.shard ")]
    calls = [s for s in spans if s["name"] == "chat rubricflow-offline-judge"]
    assert len(shards) == 3 and all(s["parent"] == run["id"] for s in shards)  # 10 cells in shards of 4
    assert len(calls) == 10 and all(c["parent"] in {s["id"] for s in shards} and c["kind"] == "CLIENT" for c in calls)
    flows = {s["attributes"]["prefect.run.id"]: s for s in spans if s["attributes"].get("prefect.run.type") == "flow"}
    [score_flow] = [s for s in flows.values() if s["id"] == run["parent"]]  # the run is the flow run's child
    assert {s["trace"] for s in [run, *shards, *calls]} == {score_flow["trace"]}
    roots = [s for s in spans if s["parent"] is None]  # the ingest's flow run and the scoring's: two traces
    assert sorted(s["id"] for s in roots) == sorted(s["id"] for s in flows.values()) and len(roots) == 2

    tokens = rows(
        warehouse,
        "SELECT text_id, prompt_tokens, completion_tokens, response_id, cached_tokens, finish_reason FROM completions",
    )
    by_text = {t: rest for t, *rest in tokens}
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    for call in calls:
        a = call["attributes"]
        assert a[gen_ai.GEN_AI_OPERATION_NAME] == "chat" and a[gen_ai.GEN_AI_PROVIDER_NAME] == "openai"
        assert a[gen_ai.GEN_AI_REQUEST_MODEL] == "rubricflow-offline-judge"
        assert (a[server_attributes.SERVER_ADDRESS], a[server_attributes.SERVER_PORT]) == ("127.0.0.1", port)
        prompt, completion, response_id, cached, finish = by_text[a["rubricflow.text_id"]]
        assert (a[gen_ai.GEN_AI_USAGE_INPUT_TOKENS], a[gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS]) == (prompt, completion)
        assert a[gen_ai.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == cached
        assert a[gen_ai.GEN_AI_RESPONSE_ID] == response_id
        assert a[gen_ai.GEN_AI_RESPONSE_FINISH_REASONS] == [finish] == ["stop"]
        assert a[gen_ai.GEN_AI_OUTPUT_TYPE] == "json"
    assert any(c["attributes"][gen_ai.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] > 0 for c in calls)  # the prefix seen

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
            unscored = CriterionResult("length", status="missing", reason="no value for length")
            telemetry.record_outcome(span, row, [CriterionResult("tone", 1, 1.0, "polite"), unscored], {})
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
    event, unscored = printed["events"]
    assert event["name"] == "gen_ai.evaluation.result"
    assert event["attributes"] == {
        gen_ai.GEN_AI_EVALUATION_NAME: "tone",
        gen_ai.GEN_AI_EVALUATION_SCORE_VALUE: 1.0,
        gen_ai.GEN_AI_EVALUATION_SCORE_LABEL: "pass",
        gen_ai.GEN_AI_EVALUATION_EXPLANATION: "polite",
        gen_ai.GEN_AI_RESPONSE_ID: "r1",
    }
    assert unscored["attributes"]["error.type"] == "missing"  # why it went unscored, as the conventions' error
    assert unscored["attributes"][gen_ai.GEN_AI_EVALUATION_EXPLANATION] == "no value for length"
