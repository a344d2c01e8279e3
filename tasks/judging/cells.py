"""What one judge call works on and gives back: the work `Cell`, its `Outcome` (the completion row
and the judgments that land), the `Prompt` of one ask before the output mode is chosen and the
`Attempts` it cost; moved out of judge.py, which re-exports them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rubricflow.tasks.judging.verify import CriterionResult


@dataclass
class Cell:
    cell_key: str
    text_id: str
    text_sha256: str
    unit_id: str
    sample: int
    text: str
    input: str | None = None
    context: str | None = None
    genre: str | None = None


@dataclass
class Outcome:
    """What lands for one cell: one completion row and one judgment per criterion of its unit."""

    completion: dict[str, Any]
    judgments: list[CriterionResult] = field(default_factory=list)


def nothing_fit(response: Any) -> bool:
    """An answer cut off at the limit with no visible text (nor a tool call): all the budget went to
    hidden reasoning, so only more room can help."""
    try:
        choice = response.choices[0]
        message = choice.message
        return choice.finish_reason == "length" and not (message.content or "").strip() and not message.tool_calls
    except (AttributeError, IndexError, TypeError):
        return False


@dataclass(frozen=True)
class Prompt:
    """One cell's request before the output mode is chosen; `prompt_tokens` is the conservative
    estimate the rate limit and the budget reserve for it (see costs.TokenEstimator)."""

    system: str
    schema: dict
    user: str
    raw_tokens: int  # TokenEstimator.raw of system + user, counted once per cell
    prompt_tokens: int
    feedback: str = ""  # a re-ask: what was wrong with the last answer, added to the user message
    feedback_tokens: int = 0  # the part of prompt_tokens the feedback adds
    max_tokens: int | None = None  # a re-ask's larger allowance (an answer left empty at the limit)


@dataclass
class Attempts:
    """What one cell's calls cost in time: `server_s` from sending each request to the last byte
    of its answer (the server's own time: what the concurrency controller and `latency_ms` read),
    `queued_s` waiting in this client for a slot and the rate limits (`queue_ms`)."""

    count: int = 0
    server_s: float = 0.0
    queued_s: float = 0.0
