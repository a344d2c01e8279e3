"""The judge loop, layer by layer, against the offline judge over real HTTP on 127.0.0.1: transport
retries (transient errors, bounded per call and by the run's retry budget), the output-mode
fallback (json_schema -> tools -> text), and re-asks after an unusable answer."""

import asyncio
import hashlib
import statistics

import pytest
from openai import AsyncOpenAI

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.library import resolve
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.judge import Cell, Judge, Prompt, RetryBudget, judge_all
from rubricflow.tasks.judging.ratelimit import RateLimiter
from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig

BUNDLE = compile_or_raise(resolve("llm-slop"))
TEXTS = [
    "The council approved the road budget by seven votes to two.",
    "Certainly! Nestled in the heart of town, this vibrant place plays a vital role.",
]


def cells(n: int = 1) -> list[Cell]:
    out = []
    for i in range(n):
        text = TEXTS[i % len(TEXTS)] + f" ({i})"
        out.append(
            Cell(
                cell_key=f"k{i}",
                text_id=f"t{i}",
                text_sha256=hashlib.sha256(text.encode()).hexdigest(),
                unit_id="_all",
                sample=0,
                text=text,
            )
        )
    return out


def judge_cells(server_config: ServerConfig, n: int = 1, retry_budget: int = 100, **config):
    """Judge n cells with a fresh Judge; returns (outcomes, judge, server stats)."""
    with RunningServer(server_config) as server:
        judge_config = JudgeConfig(base_url=server.base_url, **config)

        async def go():
            client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
            judge = Judge(
                BUNDLE, judge_config, client, RateLimiter(max_in_flight=4), RetryBudget(retry_budget), "run-1", "corpus"
            )
            try:
                return await judge_all(judge, cells(n)), judge
            finally:
                await client.close()

        outcomes, judge = asyncio.run(go())
        return outcomes, judge, server.app.stats


def faults(*kinds: str, attempts: int = 1) -> ServerConfig:
    return ServerConfig(fault_rate=1.0, faults=kinds, fault_attempts=attempts)


def test_a_clean_call_is_one_attempt_and_every_criterion_scored():
    [outcome], _, stats = judge_cells(ServerConfig())
    row = outcome.completion
    assert row["status"] == "ok" and row["attempts"] == 1 and row["output_mode"] == "json_schema"
    assert {r.criterion_id for r in outcome.judgments} == {c.id for c in BUNDLE.rubric.criteria}
    assert all(r.status == "scored" for r in outcome.judgments) and stats.requests == 1


def test_transient_errors_are_retried_until_the_answer_comes():
    [outcome], _, stats = judge_cells(faults("500", attempts=2))
    assert outcome.completion["status"] == "ok" and outcome.completion["attempts"] == 3 and stats.requests == 3


def test_transient_errors_stop_at_max_attempts_and_land_unscored():
    [outcome], _, stats = judge_cells(faults("503", attempts=99), max_attempts=3)
    row = outcome.completion
    assert row["status"] == "failed" and row["error_kind"] == "transient" and row["attempts"] == 3
    assert stats.requests == 3
    assert all(r.status == "unscored" and r.reason.startswith("transient:") for r in outcome.judgments)


def test_the_run_retry_budget_bounds_retries_across_cells():
    outcomes, judge, stats = judge_cells(faults("500", attempts=1), n=4, retry_budget=2)
    assert sorted(o.completion["status"] for o in outcomes) == ["failed", "failed", "ok", "ok"]
    assert judge.retries.used == 2 and stats.requests == 6


@pytest.mark.parametrize("supports, mode", [("tools", "tools"), ("text", "text")])
def test_an_endpoint_without_structured_output_gets_the_next_mode(supports, mode):
    outcomes, judge, _ = judge_cells(ServerConfig(supports=supports), n=3)
    assert judge.mode == mode  # learned once for the run
    assert all(o.completion["status"] == "ok" and o.completion["output_mode"] == mode for o in outcomes)


def test_a_forced_mode_the_endpoint_refuses_is_final_not_retried():
    [outcome], _, stats = judge_cells(ServerConfig(supports="text"), output_mode="json_schema")
    row = outcome.completion
    assert row["status"] == "failed" and row["error_kind"] == "deterministic" and stats.requests == 1


def test_an_unusable_answer_is_asked_again():
    [outcome], _, stats = judge_cells(faults("malformed", attempts=1))
    assert outcome.completion["status"] == "ok" and stats.requests == 2


def test_an_answer_unusable_every_time_lands_unscored_after_the_re_asks():
    [outcome], _, stats = judge_cells(faults("malformed", attempts=99), answer_retries=2)
    row = outcome.completion
    assert row["status"] == "failed" and row["error_kind"] == "parse" and stats.requests == 3
    assert all(r.status == "unscored" and r.reason.startswith("parse:") for r in outcome.judgments)


@pytest.mark.parametrize("fault", ["truncated", "malformed", "out_of_range"])
def test_a_re_ask_changes_the_request_and_never_repeats_a_deterministic_call(fault):
    """#21: an answer cut off at max_tokens was asked again with the identical request at
    temperature 0, and ran to max_tokens again (555 s for one call on llama.cpp)."""
    [outcome], _, stats = judge_cells(faults(fault, attempts=2), answer_retries=2)
    assert outcome.completion["status"] == "ok" and stats.requests == 3
    assert stats.repeats_after_an_answer == 0


def test_the_re_ask_says_what_was_wrong_in_the_user_turn_and_keeps_max_tokens():
    _, judge, _ = judge_cells(ServerConfig(), max_tokens=400)
    prompt = Prompt("system", {}, "user", 10, 12)
    first = judge.reasked(prompt, "truncated", "cut off")
    second = judge.reasked(first, "truncated", "cut off", 3)
    assert "cut off at 400 tokens" in first.feedback and "(ask 2 of 3)" in first.feedback
    assert "(ask 3 of 3)" in second.feedback and second.prompt_tokens == first.prompt_tokens  # replaced, not piled up
    body = judge.request_body("s", {}, "u", "json_schema", 0, second.feedback)
    assert [m["role"] for m in body["messages"]] == ["system", "user"] and body["max_tokens"] == 400
    assert body["messages"][1]["content"].startswith("u\n\nAbout your previous answer: (ask 3 of 3)")
    scale = judge.reasked(prompt, "out_of_scale", "out of scale: 9 is not on 1-5")
    assert "9 is not on 1-5" in scale.feedback


def test_a_refusal_is_not_asked_again():
    [outcome], _, stats = judge_cells(faults("refusal", attempts=99))
    assert outcome.completion["error_kind"] == "refusal" and stats.requests == 1
    assert outcome.completion["raw_response"] == "I can't help with that."


# Finding 3 of the reliability pass: one odd 200 answer used to fail the whole shard's gather.
HOSTILE_OUTCOME = {
    "deep_json": "failed",
    "usage_missing": "ok",
    "usage_null": "ok",
    "text_plain": "failed",
    "html_page": "failed",
    "message_null": "failed",
    "content_parts": "ok",
    "content_number": "failed",
    "echo_headers": "failed",
    "echo_in_answer": "ok",
}


@pytest.mark.slow  # real back-off waits and timeouts: seconds each
@pytest.mark.parametrize("fault", sorted(HOSTILE_OUTCOME))
def test_a_hostile_answer_costs_its_own_cell_only(fault):
    outcomes, _, stats = judge_cells(faults(fault, attempts=99), n=4, answer_retries=1)
    assert len(outcomes) == 4  # every cell has its outcome: nothing raised out of the judge loop
    for o in outcomes:
        row = o.completion
        assert row["status"] == HOSTILE_OUTCOME[fault], (fault, row["error_kind"], row["error"])
        if row["status"] == "failed":
            assert row["error_kind"] and row["error"] and all(r.reason for r in o.judgments)
        else:
            assert all(r.status == "scored" for r in o.judgments)
    assert stats.faults[fault] >= 4


@pytest.mark.slow  # real back-off waits and timeouts: seconds each
@pytest.mark.parametrize("fault", ["html_page", "text_plain", "message_null"])
def test_a_200_that_is_no_chat_completion_is_a_gateway_hiccup_retried_then_planned_again(fault):
    """F30: a proxy's HTML page (or plain text, or `message: null`) with status 200 was final."""
    [once], _, stats = judge_cells(faults(fault, attempts=1))
    assert once.completion["status"] == "ok" and once.completion["attempts"] == 2 and stats.requests == 2
    [always], _, _ = judge_cells(faults(fault, attempts=99), max_attempts=3)
    row = always.completion
    assert row["status"] == "failed" and row["error_kind"] == "transient" and row["attempts"] == 3, row["error"]


@pytest.mark.slow  # real back-off waits and timeouts: seconds each
def test_a_server_that_drips_bytes_cannot_outlast_the_timeout():
    """A slow drip used to defeat --timeout (each read arrives in time, the answer never ends)."""
    import time

    started = time.monotonic()
    [outcome], _, stats = judge_cells(faults("slow_drip", attempts=1), timeout_s=1.0)
    assert outcome.completion["status"] == "ok" and outcome.completion["attempts"] == 2  # timed out, then answered
    assert time.monotonic() - started < 15


def test_a_catastrophic_pattern_cannot_hang_the_offline_judge():
    """`(a+)+$` or `(a|aa)+$` against "aaaa...!" backtrack for hours in Python (RE2 runs them linearly):
    it used to hang the offline judge and `rubric test` (reliability pass)."""
    import time

    from rubricflow.rubrics.compiler import compile_or_raise
    from rubricflow.rubrics.model import Rubric
    from rubricflow.rubrics.render import call_units, output_schema, render_system_prompt, render_user_message
    from rubricflow.tasks.standins import offline_judge

    rubric = Rubric.model_validate(
        {
            "metadata": {"id": "evil"},
            "goal": "no runaway regex",
            "patterns": [{"id": "evil", "regex": "(a+)+$"}, {"id": "worse", "regex": "(a|aa)+$"}],
            "criteria": [{"id": "c", "patterns": ["evil", "worse"]}],
        }
    )
    compile_or_raise(rubric)
    unit = call_units(rubric, "holistic")[0]
    system = render_system_prompt(rubric, unit)
    started = time.monotonic()
    answer = offline_judge.judge(
        system, render_user_message("a" * 60 + "!", "", ""), output_schema(rubric, unit), 0.0, None
    )
    assert time.monotonic() - started < 20 and "c" in answer["criteria"]  # backtracking: 2^60 steps, never done


# Real servers (issue: real model servers): how they refuse an output mode, drop system
# messages and queue requests, reproduced by the offline judge's switches.


@pytest.mark.parametrize("status", [400, 422, 500])
def test_a_server_taking_json_object_is_found_whatever_status_it_refuses_with(status):
    """llama.cpp's Python server answers json_schema with a 500 naming response_format: that is
    a refusal of the mode, never an outage to retry."""
    outcomes, judge, stats = judge_cells(ServerConfig(supports="json_object", refusal_status=status), n=5)
    assert judge.mode == "json_object" and all(o.completion["output_mode"] == "json_object" for o in outcomes)
    assert all(o.completion["status"] == "ok" for o in outcomes)
    assert stats.requests <= 2 * 5  # at most one refusal per cell (those in flight before the switch), never retried
    assert judge.retries.used == 0


def test_a_forced_output_mode_is_used_as_given():
    outcomes, judge, _ = judge_cells(ServerConfig(supports="json_object"), n=2, output_mode="json_object")
    assert all(o.completion["output_mode"] == "json_object" and o.completion["status"] == "ok" for o in outcomes)


def test_a_server_that_drops_system_messages_gets_the_rubric_in_the_user_turn():
    outcomes, judge, stats = judge_cells(ServerConfig(drop_system=True), n=3)
    assert judge.layout == "user" and stats.probes == 2  # found once per run, by two one-token probes
    assert all(o.completion["prompt_layout"] == "user" and o.completion["status"] == "ok" for o in outcomes)
    # the rubric reached the judge: its patterns were applied (the slop text is caught)
    slop = next(o for o in outcomes if o.completion["text_id"] == "t1")
    assert any(r.unit_score is not None and r.unit_score < 1 for r in slop.judgments)


def test_a_server_that_keeps_system_messages_keeps_the_system_layout():
    outcomes, judge, stats = judge_cells(ServerConfig(), n=2)
    assert judge.layout == "system" and stats.probes == 2
    assert all(o.completion["prompt_layout"] == "system" for o in outcomes)
    _, judge, stats = judge_cells(ServerConfig(drop_system=True), n=1, system_prompt="user")
    assert judge.layout == "user" and stats.probes == 0  # told, not checked


@pytest.mark.slow  # real back-off waits and timeouts: seconds each
def test_a_server_that_queues_is_not_flooded_and_nothing_times_out():
    """One request at a time, 0.3 s each: calls in flight wait in its queue; the adaptive limit
    finds that latency grows with the calls in flight and backs off, and nothing times out."""
    outcomes, judge, stats = judge_cells(ServerConfig(slots=1, latency_ms=300), n=24, timeout_s=2.5, max_in_flight=64)
    assert all(o.completion["status"] == "ok" for o in outcomes)
    assert stats.requests == 24  # no timeouts, no retries
    # The controller (judge_cells' RateLimiter: a ceiling of 4) cut its limit on the queue it saw. Its
    # last value is no test: it may have climbed back to the ceiling after the last cut before the run
    # ended (CI's stop 61 failed on `limit < 4` with 4; 3 of 15 runs here ended at 4, cut after call 11 or 19).
    concurrency = judge.limiter.concurrency
    assert concurrency.cut_after > 0 and concurrency.ceiling == 4


def test_cached_prompt_tokens_are_recorded():
    """A provider's prefix-cache count (usage.prompt_tokens_details.cached_tokens) lands per cell;
    the offline judge reports a cached system prompt when the previous call had the same one."""
    outcomes, _, _ = judge_cells(ServerConfig(), n=4, max_in_flight=1, system_prompt="system")
    cached = sorted(o.completion["cached_tokens"] for o in outcomes)
    assert cached[0] == 0 and all(c > 100 for c in cached[1:])  # the first call warms the cache


def test_latency_is_the_servers_time_and_waiting_in_the_client_is_kept_apart():
    """Issue 22: latency_ms counted the time a call waited for a slot, which the concurrency
    controller read as an overloaded server. Eight cells, four in flight, a server that takes
    200 ms: every latency is about 200 ms; the second four waited about that long in the client.
    """
    outcomes, _, _ = judge_cells(ServerConfig(latency_ms=200), n=8)
    rows = sorted((o.completion for o in outcomes), key=lambda r: r["queue_ms"])
    latencies = [r["latency_ms"] for r in rows]
    assert min(latencies) >= 200 and statistics.median(latencies) < 340, latencies
    assert all(r["queue_ms"] < 100 for r in rows[:4]) and all(r["queue_ms"] >= 100 for r in rows[4:])
    # the four that waited: their wait is not in their latency (counting it gave ~queue + 200 ms);
    # relative, so a pause of the loaded machine (CI saw 325 ms first calls) is no failure
    assert all(r["latency_ms"] < r["queue_ms"] + 180 for r in rows[4:]), [
        (r["latency_ms"], r["queue_ms"]) for r in rows
    ]


def test_the_judge_sends_exactly_the_rendered_unit_whose_fingerprint_keys_its_cells():
    """One rendering (rubrics/render) for planning, the estimate and the judge: the request's system
    text is the unit's in that mode (the schema suffix included), its user turn the unit's template,
    and the completion row carries the fingerprint the plan put in the cell key."""
    from rubricflow.rubrics.render import render, render_user_message

    [outcome], judge, _ = judge_cells(ServerConfig())
    rendered = render(BUNDLE.rubric, judge.config.strategy).unit(outcome.completion["unit_id"], None)
    assert outcome.completion["unit_hash"] == rendered.fingerprint
    unit, system, schema = judge.unit(rendered.unit.id, "a genre no criterion names")
    for mode in ("json_schema", "json_object", "tools", "text"):
        body = judge.request_body(system, schema, rendered.user("the text"), mode, 0)
        assert body["messages"][0]["content"] == rendered.system_for(mode)
        assert body["messages"][1]["content"] == render_user_message("the text")
        assert ("JSON Schema of the answer" in rendered.system_for(mode)) == (mode in ("json_object", "text"))


def test_a_second_endpoint_in_the_same_process_gets_its_own_judge():
    """The process keeps one Judge per run id; judging one rubric against a server that has since
    stopped, then against another with the same judge settings, must reach the second (a shared id
    sent every call to the first server's port)."""
    from rubricflow.tasks.improve.goldens import judge_text

    with RunningServer() as first:
        config = JudgeConfig(base_url=first.base_url)
        assert judge_text(BUNDLE, config, "a", TEXTS[0]).errors == []
    with RunningServer() as second:
        judged = judge_text(BUNDLE, JudgeConfig(base_url=second.base_url), "a", TEXTS[0])
        assert judged.errors == [] and second.app.stats.requests >= 1
