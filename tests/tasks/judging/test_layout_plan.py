"""The prompt layout planner (tasks/judging/layout_plan.py) and the layouts it chooses between
(rubrics/render.arranged): the choice follows the token counts and the provider's cache rules, and
a layout changes where the shared prefix is, never what a judgment says."""

import asyncio
import hashlib
import json

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.library import resolve
from rubricflow.rubrics.render import arranged, unarranged
from rubricflow.tasks.judging import layout_plan
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.judge import Cell, Judge, RetryBudget, judge_all
from rubricflow.tasks.judging.layout_plan import Shape, choose
from rubricflow.tasks.judging.providers import client_for
from rubricflow.tasks.judging.ratelimit import RateLimiter
from rubricflow.tasks.standins.judge_server import JudgeServer, RunningServer, ServerConfig

UNITS_765 = (765,) * 8  # an llm-slop-sized call unit, eight criteria


def test_short_texts_share_the_rubric_and_long_ones_share_the_text():
    short = choose(Shape(10_000, 10_000 * 100, (765,) * 3))
    assert short.layout == "rubric-first" and short.minimum_tokens == 3 * 765 + 3 * 1_000_000
    long = choose(Shape(2_000, 2_000 * 4_000, UNITS_765))
    assert long.layout == "text-first" and "(0 shared): uncached rubric-first 64,006,120 vs text-first" in long.reason
    assert long.minimum_tokens == long.uncached["text-first"]
    forced = choose(Shape(2_000, 2_000 * 4_000, UNITS_765), "rubric-first")
    assert forced.layout == "rubric-first" and forced.reason.startswith("asked for (--layout rubric-first)")


def test_the_providers_cache_minimum_moves_the_choice():
    """200-token texts, 765-token units, 8 criteria: a local server caches the units (rubric-first),
    OpenAI caches no prefix under 1,024 tokens, so the unit is paid by every text either way."""
    shape = Shape(1_000, 1_000 * 200, UNITS_765)
    assert choose(shape, cache_minimum=0).layout == "rubric-first"
    assert layout_plan.uncached_tokens(shape, "rubric-first", 1024) == 8 * 200_000 + 1_000 * 8 * 765
    assert layout_plan.cache_minimum("openai", None) == 1024
    assert layout_plan.cache_minimum("openai", "http://127.0.0.1:8000/v1") == 0
    assert layout_plan.cache_minimum("anthropic", "http://127.0.0.1:8000") == 1024


def test_a_text_first_prompt_holds_the_same_words_and_reads_back():
    text_first = arranged("RUBRIC", "TEXT", "text-first", "\n\nAbout your previous answer: x")
    assert text_first[1]["content"].startswith("TEXT") and "RUBRIC" in text_first[1]["content"]
    assert unarranged(text_first[0]["content"], text_first[1]["content"].split("\n\nAbout")[0]) == ("RUBRIC", "TEXT")
    assert unarranged("RUBRIC", "TEXT") == ("RUBRIC", "TEXT")


def _judged(layout: str, provider: str = "openai", texts: int = 12, samples: int = 2) -> tuple[list, JudgeServer]:
    """Texts x samples at temperature 0.8 on the offline judge, in one layout; the judgments and the
    server (its recorded request bodies, its stats)."""
    bundle = compile_or_raise(resolve("llm-slop"))
    written = [f"Certainly! Text {i} is a vibrant tapestry. " * (1 + i % 3) for i in range(texts)]
    cells = [
        Cell(f"k{i}-{u}-{s}", f"t{i}", hashlib.sha256(t.encode()).hexdigest(), u, s, t)
        for i, t in enumerate(written)
        for u in ("puffery", "scaffolding", "meta-talk")
        for s in range(samples)
    ]
    with RunningServer(ServerConfig(record=True)) as server:
        config = JudgeConfig(
            base_url=server.base_url,
            temperature=0.8,
            samples=samples,
            strategy="per_criterion",
            provider=provider,
        )

        async def go():
            client = client_for(provider, server.base_url, 30)
            judge = Judge(bundle, config, client, RateLimiter(max_in_flight=4), RetryBudget(10), "r", "c", None, layout)
            try:
                return await judge_all(judge, cells)
            finally:
                await client.close()

        outcomes = asyncio.run(go())
    judged = [(o.completion["cell_key"], r.criterion_id, r.value) for o in outcomes for r in o.judgments]
    return sorted(judged, key=lambda j: j[:2]), server.app


def test_judgments_do_not_change_with_the_layout():
    """The same judge, rubric and texts: the same verdicts (sampled at temperature 0.8) in either layout."""
    rubric_first, server = _judged("rubric-first", texts=6)
    text_first, _ = _judged("text-first", texts=6)
    assert rubric_first == text_first and len(rubric_first) == 6 * 3 * 2 and server.stats.requests == 36


def test_openai_gets_a_prompt_cache_key_per_rubric_unit_or_per_text_as_laid_out():
    for layout, shared_by in (("rubric-first", "unit"), ("text-first", "text")):
        _, server = _judged(layout, texts=3, samples=1)
        keys: dict[str, set] = {}
        for body in server.bodies:
            user = body["messages"][1]["content"]
            text = next(t for t in ("Text 0", "Text 1", "Text 2") if t in user)
            unit = next(u for u in ("### puffery", "### scaffolding", "### meta-talk") if u in json.dumps(body))
            keys.setdefault(text if shared_by == "text" else unit, set()).add(body["prompt_cache_key"])
        assert len(keys) == 3 and all(len(k) == 1 for k in keys.values()), (layout, keys)
        assert len(set().union(*keys.values())) == 3


def test_anthropic_gets_cache_control_on_the_shared_block_and_reports_cache_reads(monkeypatch):
    """Rubric-first: the breakpoint after the rubric unit (the system field); text-first: after the
    system's shared sections and after the fenced text, whose later criteria read it from the cache."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    _, server = _judged("rubric-first", "anthropic", texts=2, samples=1)
    assert all(b["system"][0]["cache_control"] == {"type": "ephemeral"} for b in server.bodies)
    judged, server = _judged("text-first", "anthropic", texts=2, samples=1)
    [first, *_] = server.bodies
    text_block, rubric_block = first["messages"][0]["content"]
    assert text_block["cache_control"] == {"type": "ephemeral"} and "<<<END TEXT" in text_block["text"]
    assert "cache_control" not in rubric_block and "### " in rubric_block["text"]
    assert server.cache.cached_tokens > 0 and len(judged) == 6
