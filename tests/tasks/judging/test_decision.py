"""Decision mode (rubrics/render.decision_criterion): a rubric that asks for no rationale gets each
scale-only criterion as one token, its level, with the score weighed from the top logprobs as a
full answer's is (G-Eval); the offline judge answers both ways over real HTTP. The expected score
against a full answer's is compared on the real model (tests/flows/test_local_model.py)."""

import asyncio
import hashlib

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.library import resolve
from rubricflow.rubrics.model import Anchor, Evidence, NumericScale, OrdinalScale, OutputContract
from rubricflow.rubrics.render import decision_criterion
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.judge import Cell, Judge, RetryBudget, judge_all
from rubricflow.tasks.judging.providers import client_for
from rubricflow.tasks.judging.ratelimit import RateLimiter
from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig

UNITS = ("puffery", "scaffolding", "meta-talk")  # ordinal 0-3, ordinal 0-3, binary


def _slop(rationale: bool, **changes):
    """llm-slop without its rationale rule, asking for a rationale or not."""
    base = resolve("llm-slop")
    surface = base.surface.model_copy(update={"rationale": rationale})
    return base.model_copy(update={"output": OutputContract(), "surface": surface, **changes})


def _judged(rationale: bool, texts: int = 6) -> tuple[dict, list[dict]]:
    """Each (text, criterion)'s result and its completion row, and the request bodies sent."""
    bundle = compile_or_raise(_slop(rationale))
    written = [f"Certainly! Text {i} is a vibrant tapestry of ideas. " * (1 + i % 4) for i in range(texts)]
    cells = [
        Cell(f"k{i}-{u}", f"t{i}", hashlib.sha256(t.encode()).hexdigest(), u, 0, t)
        for i, t in enumerate(written)
        for u in UNITS
    ]
    with RunningServer(ServerConfig(record=True)) as server:
        config = JudgeConfig(base_url=server.base_url, strategy="per_criterion", logprobs=True)

        async def go():
            client = client_for("openai", server.base_url, 30)
            judge = Judge(bundle, config, client, RateLimiter(max_in_flight=4), RetryBudget(10), "r", "c", None)
            try:
                return await judge_all(judge, cells)
            finally:
                await client.close()

        outcomes = asyncio.run(go())
        bodies = list(server.app.bodies)
    return {(o.completion["text_id"], r.criterion_id): (r, o.completion) for o in outcomes for r in o.judgments}, bodies


def test_a_rubric_asking_no_rationale_is_decided_in_one_token_with_the_same_expected_score():
    full, _ = _judged(rationale=True)
    decided, bodies = _judged(rationale=False)
    assert len(bodies) == 18 and all(b["max_tokens"] == 2 and "response_format" not in b for b in bodies)
    assert all(
        b["top_logprobs"] == 5 and "Answer with only the score of" in b["messages"][0]["content"] for b in bodies
    )
    assert decided.keys() == full.keys()
    # the completions row says how the call went out: one token, not the JSON mode the run asked in
    assert {row["output_mode"] for _, row in decided.values()} == {"decision"}
    assert {row["output_mode"] for _, row in full.values()} == {"json_schema"}
    for key, (result, row) in decided.items():
        answered = full[key][0]
        assert row["completion_tokens"] <= 2 < full[key][1]["completion_tokens"], key
        assert (result.status, result.value, result.unit_score) == ("scored", answered.value, answered.unit_score)
        # weighed from the level's top logprobs (the offline judge hesitates at random there: the
        # distributions differ, the level it wrote is the likeliest in both)
        for weighted in (result.weighted, answered.weighted):
            assert max(weighted.probs, key=weighted.probs.get) == str(result.value), key


def test_only_a_lone_scale_only_criterion_asked_without_rationale_is_a_decision():
    assert decision_criterion(_slop(True), ("puffery",)) is None  # a rationale is asked
    ruled = resolve("llm-slop").model_copy(update={"surface": _slop(False).surface})
    assert decision_criterion(ruled, ("puffery",)) is None  # its output rule on the rationale
    assert decision_criterion(_slop(False), ("puffery",)).id == "puffery"
    assert decision_criterion(_slop(False), ("puffery", "scaffolding")) is None  # two criteria in one call
    rubric = _slop(False)
    changes = (  # evidence asked; a number no token carries; levels of two digits (10)
        {"evidence": Evidence(required=True)},
        {"scale": NumericScale(min=0, max=10)},
        {"scale": OrdinalScale(anchors=(Anchor(value=1), Anchor(value=10)))},
    )
    for change in changes:
        criteria = tuple(c.model_copy(update=change) if c.id == "puffery" else c for c in rubric.criteria)
        assert decision_criterion(rubric.model_copy(update={"criteria": criteria}), ("puffery",)) is None, change


def _bodies(provider: str, rationale: bool) -> dict[str, dict]:
    """Each llm-slop criterion's request body as a judge of `provider` builds it (no call is made)."""
    bundle = compile_or_raise(_slop(rationale))
    config = JudgeConfig(base_url="http://127.0.0.1:9/v1", provider=provider, strategy="per_criterion")
    judge = Judge(bundle, config, client_for(provider, config.base_url, 30), RateLimiter(), RetryBudget(1), "r", "c")
    return {u: judge.request_body(*judge.unit(u, None)[1:], "Text.", judge.mode, 0) for u in UNITS}


def test_a_server_that_takes_a_grammar_holds_a_decision_to_the_levels_in_one_token():
    """llama.cpp's servers (`--provider llamacpp`, Capabilities.decision_grammar) get a GBNF grammar
    whose only sentences are the levels, and max_tokens of the longest level's tokens (1: a one-digit
    level); elsewhere no grammar (OpenAI refuses a field it does not know) and room for a leading space."""
    grammar = _bodies("llamacpp", rationale=False)
    assert grammar["puffery"]["grammar"] == 'root ::= "0" | "1" | "2" | "3"'  # ordinal 0-3
    assert grammar["meta-talk"]["grammar"] == 'root ::= "0" | "1"'  # binary
    assert all(b["max_tokens"] == 1 and "response_format" not in b for b in grammar.values())
    plain = _bodies("openai", rationale=False)
    assert all(b["max_tokens"] == 2 and "grammar" not in b for b in plain.values())
    full = _bodies("llamacpp", rationale=True)  # a full answer: JSON held by the schema, no level grammar
    assert all("grammar" not in b and b["response_format"]["type"] == "json_object" for b in full.values())
