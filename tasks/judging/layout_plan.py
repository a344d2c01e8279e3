"""The prompt layout planner: which part of a run's prompts is the shared prefix a cache can serve.

A cell's prompt is its rubric unit and its text (rubrics/render.arranged lays them out). Rubric-first
shares the unit across every text (cheap when texts are short and many); text-first shares the text
across its criteria (cheap when texts are long and judged on many criteria). The planner compares
what each layout would leave uncached under the provider's cache rules (OpenAI and Anthropic serve
no prefix under 1,024 tokens) and picks the cheaper; it also names the minimum the judgments need:
each distinct prefix paid once, in the better layout (what a perfect cache would charge)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlparse

from rubricflow.rubrics.render import LAYOUTS, TEXT_FIRST_SYSTEM, sections
from rubricflow.tasks.judging.costs import CHARS_PER_TOKEN, USER_WRAPPER_CHARS

CHOICES = ("auto", *LAYOUTS)
HOSTED_CACHE_MINIMUM = 1024  # OpenAI's and Anthropic's shortest cached prefix (tokens)


@dataclass(frozen=True)
class Shape:
    """What the planner reads of a run: its texts, their tokens, and the rubric units' tokens."""

    texts: int  # texts with cells to judge
    text_tokens: int  # their user messages' tokens together (text, input, context and the fence)
    unit_tokens: tuple[int, ...]  # each call unit's rubric (system text) tokens: a text's criteria calls
    shared_tokens: int = 0  # of each unit's: the sections every unit has (a text-first prompt's head)

    @classmethod
    def of(cls, texts: int, text_chars: int, unit_systems: list[str], shared: frozenset[str] = frozenset()) -> Shape:
        """From characters, as the cost estimate counts them (costs.CHARS_PER_TOKEN)."""
        tokens = (text_chars + texts * USER_WRAPPER_CHARS) // CHARS_PER_TOKEN
        head = sum(len(p) for p in sections(unit_systems[0]) if p in shared) if unit_systems else 0
        units = tuple(len(s) // CHARS_PER_TOKEN for s in unit_systems)
        return cls(texts, tokens, units, head // CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Choice:
    layout: str
    reason: str
    minimum_tokens: int  # each distinct prefix once, in the better layout
    uncached: dict[str, int]  # what each layout would leave uncached, by layout


def cache_minimum(provider: str, base_url: str | None) -> int:
    """The shortest prefix the endpoint's cache serves: hosted OpenAI and Anthropic 1,024 tokens; a
    self-hosted server (vLLM, SGLang, llama.cpp) caches any whole block."""
    host = urlparse(base_url or "").hostname or ""
    if provider == "anthropic" or not base_url or host.endswith(("openai.com", "anthropic.com", "azure.com")):
        return HOSTED_CACHE_MINIMUM
    return 0


def uncached_tokens(shape: Shape, layout: str, cache_minimum: int = 0) -> int:
    """Prompt tokens left uncached by a cache big enough for the run, with calls sharing a prefix
    run together. Rubric-first pays each text once per criterion and each unit once (once per text
    when the unit is under the cache minimum). Text-first pays the rubric's shared sections once,
    each text once and each unit's own sections after every text (under the minimum: every call)."""
    n, t, units = shape.texts, shape.text_tokens, shape.unit_tokens
    if not n or not units:
        return 0
    if layout == "rubric-first":
        return len(units) * t + sum(u if u >= cache_minimum else n * u for u in units)
    head = len(TEXT_FIRST_SYSTEM) // CHARS_PER_TOKEN + shape.shared_tokens
    own = n * sum(max(0, u - shape.shared_tokens) for u in units)
    if head + t / n < cache_minimum:  # nothing a text's calls share is long enough to be cached
        return len(units) * (n * head + t) + own
    return (head if head >= cache_minimum else n * head) + t + own


def minimum_tokens(shape: Shape) -> int:
    """Each distinct prefix once (a perfect cache, no minimum), in the layout where that is least."""
    return min(uncached_tokens(shape, layout) for layout in LAYOUTS)


def choose(shape: Shape, asked: str = "auto", cache_minimum: int = 0) -> Choice:
    """The layout to use and why: the one asked for, or (auto) the one leaving fewer tokens uncached;
    a tie keeps rubric-first."""
    uncached = {layout: uncached_tokens(shape, layout, cache_minimum) for layout in LAYOUTS}
    per_text = shape.text_tokens // max(1, shape.texts)
    per_unit = sum(shape.unit_tokens) // max(1, len(shape.unit_tokens))
    facts = (
        f"{shape.texts:,} texts of ~{per_text:,} tokens, {len(shape.unit_tokens)} call units of ~{per_unit:,}"
        f" ({shape.shared_tokens:,} shared)"
        f"{f', cache minimum {cache_minimum:,}' if cache_minimum else ''}: uncached "
        + " vs ".join(f"{layout} {tokens:,}" for layout, tokens in uncached.items())
    )
    if asked != "auto":
        return Choice(asked, f"asked for (--layout {asked}); {facts}", minimum_tokens(shape), uncached)
    layout = "text-first" if uncached["text-first"] < uncached["rubric-first"] else "rubric-first"
    return Choice(layout, f"auto: {facts}", minimum_tokens(shape), uncached)
