"""Reading answers: a chat completion's first choice whatever shape the endpoint gave it, the
judgment it carries (verified against the rubric, weighed by logprobs where there are some), the
tokens it reports, and what the model is told when an answer cannot be used."""

from __future__ import annotations

import json
from typing import Any

from openai.types.chat import ChatCompletion

from rubricflow.rubrics.model import Criterion, Rubric
from rubricflow.rubrics.render import CallUnit, decision_criterion
from rubricflow.tasks.judging import verdict_tools
from rubricflow.tasks.judging.logprobs import answer_logprobs, token_spans, weigh, weigh_bare
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
    decided = decision_criterion(rubric, unit.criteria)
    if decided is not None:  # the level alone (one token): cut off after it is the expected end
        return _read_decision(rubric, decided, unit, content, choice, text)
    if choice.finish_reason == "length":
        raise AnswerError("truncated", "the answer was cut off at max_tokens")
    answer = parse_json_answer(content)
    results, declared, warnings = verify_answer(rubric, unit, answer, text)
    tokens = answer_logprobs(choice) if not tool_calls else None
    if tokens:
        spelled, spans = token_spans(tokens)
        for r in results:
            if r.status == "scored" and r.overruled is None:  # logprobs of the word it wrote, not the rules'
                r.weighted = weigh(rubric.criterion(r.criterion_id).scale, r.value, spelled, spans, r.criterion_id)
    return results, declared, warnings


def _read_decision(
    rubric: Rubric, criterion: Criterion, unit: CallUnit, content: str | None, choice: Any, text: str
) -> tuple[list[CriterionResult], list[str], list[str]]:
    """A decision's answer (rubrics/render.decision_criterion): its first word is the level, read
    as the criterion's value and checked as any answer's is; the weighted score comes from the top
    logprobs of the level's token."""
    words = (content or "").replace('"', " ").split()
    if not words:
        raise AnswerError("parse", "empty answer")
    level = words[0].strip(".,;:")
    value: Any = int(level) if level.lstrip("-").isdigit() else level
    results, declared, warnings = verify_answer(rubric, unit, {"criteria": {criterion.id: {"value": value}}}, text)
    tokens = answer_logprobs(choice)
    if tokens and results[0].status == "scored" and results[0].overruled is None:
        results[0].weighted = weigh_bare(criterion.scale, results[0].value, tokens)
    return results, declared, warnings
