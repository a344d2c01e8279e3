"""Reading answers: a chat completion's first choice whatever shape the endpoint gave it, the
judgment it carries (verified against the rubric, weighed by logprobs where there are some), the
tokens it reports, and what the model is told when an answer cannot be used."""

from __future__ import annotations

import json
from typing import Any

from openai.types.chat import ChatCompletion

from rubricflow.rubrics.model import Rubric
from rubricflow.rubrics.render import CallUnit
from rubricflow.tasks.judging import verdict_tools
from rubricflow.tasks.judging.logprobs import answer_logprobs, token_spans, weigh
from rubricflow.tasks.judging.verify import AnswerError, CriterionResult, parse_json_answer, verify_answer


def first_choice(response: Any) -> Any:
    """The first choice of a chat completion, with its message; an AnswerError for any other shape
    (a non-JSON body, no choices, `message: null`): every model path reads answers through this."""
    if not isinstance(response, ChatCompletion):
        raise AnswerError(
            "malformed",
            f"the endpoint answered {type(response).__name__}, not a chat completion: {str(response)[:200]!r}",
        )
    if not response.choices:
        raise AnswerError("empty", "the response has no choices")
    if response.choices[0].message is None:
        raise AnswerError("malformed", "the response's choice has no message")
    return response.choices[0]


def text_parts(content: Any) -> Any:
    """Content given as a list of typed parts, as its text parts in order; anything else as is."""
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return content


def cached_tokens(usage: Any) -> int | None:
    """usage.prompt_tokens_details.cached_tokens, when the provider reports it."""
    cached = getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None)
    return cached if isinstance(cached, int) and not isinstance(cached, bool) and cached >= 0 else None


def reask_note(kind: str, error: str, max_tokens: int) -> str:
    """What the model is told before it answers again: never the same request twice (a deterministic
    model would give the same unusable answer, 555 s for one call on a slow server)."""
    if kind == "truncated":
        return (
            f"Your answer was cut off at {max_tokens} tokens. Answer again with only the JSON object, "
            "each rationale in at most 25 words and no text before or after it."
        )
    if kind == "out_of_scale":
        return f"Your answer had a value outside the scale ({error}). Answer again using only the scale's values."
    return (
        f"Your answer could not be read ({error}). Answer again with only the JSON object the schema asks for, "
        "no text before or after it."
    )


def read_answer(
    rubric: Rubric, response: Any, unit: CallUnit, text: str, row: dict
) -> tuple[list[CriterionResult], list[str], list[str]]:
    """Verified results, declared disqualifiers and warnings of a completion; records the raw answer
    in `row`. Raises AnswerError for an answer that cannot be used (refused, cut off, not JSON)."""
    if not isinstance(response, ChatCompletion):
        row["raw_response"] = str(response)[:2000]
    elif response.choices:
        row["finish_reason"] = response.choices[0].finish_reason
    choice = first_choice(response)
    message = choice.message
    tool_calls = getattr(message, "tool_calls", None) or []
    content = text_parts(tool_calls[0].function.arguments if tool_calls else message.content)
    if tool_calls and (verdict := verdict_tools.answer(tool_calls[0], unit)) is not None:
        content = verdict
    row["raw_response"] = content if content is None or isinstance(content, str) else json.dumps(content)
    if content is not None and not isinstance(content, str):
        raise AnswerError("malformed", f"the answer's content is a {type(content).__name__}, not text")
    if getattr(message, "refusal", None):
        row["raw_response"] = message.refusal
        raise AnswerError("refusal", f"the judge refused: {message.refusal}")
    if choice.finish_reason == "content_filter":
        raise AnswerError("content_filter", "the answer was withheld by a content filter")
    if choice.finish_reason == "length":
        raise AnswerError("truncated", "the answer was cut off at max_tokens")
    answer = parse_json_answer(content)
    results, declared, warnings = verify_answer(rubric, unit, answer, text)
    tokens = answer_logprobs(choice) if not tool_calls else None
    if tokens:
        spelled, spans = token_spans(tokens)
        for r in results:
            if r.status == "scored":
                r.weighted = weigh(rubric.criterion(r.criterion_id).scale, r.value, spelled, spans, r.criterion_id)
    return results, declared, warnings
