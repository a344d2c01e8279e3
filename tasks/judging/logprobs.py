"""Logprob-weighted scores (G-Eval): when the endpoint returns `top_logprobs`, a criterion's score
is the probability-weighted mean over the scale's values at the token where the judge wrote its
value, kept beside the sampled value with the distribution it came from.

Why: a sampled 3 on a 1-5 scale hides whether the judge hesitated between 2 and 4; the weighted
score is finer-grained and agrees better with human scores (Liu et al. 2023, G-Eval). It is only
computed where it is well defined: binary and ordinal scales whose values are each one token
(no value's digits a prefix of another's, so not 1..10), and nominal scales whose categories the
value's first token tells apart. Numeric scales keep only the sampled value.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from rubricflow.rubrics.model import BinaryScale, NominalScale, OrdinalScale, ScaleError

TOP_LOGPROBS = 5  # alternatives asked per token: a 1-5 scale fits, and every provider allows 5


@dataclass
class Weighted:
    unit_score: float  # sum of p(value) * unit(value) over the scale values seen
    probs: dict[str, float]  # value -> probability, normalised over the values seen
    mass: float  # the probability the alternatives put on scale values at all (1.0: all of it)


def token_spans(content: list[Any]) -> tuple[str, list[tuple[int, Any]]]:
    """The text the tokens spell and each token's start offset in it."""
    text, spans = "", []
    for entry in content:
        spans.append((len(text), entry))
        text += getattr(entry, "token", "") or ""
    return text, spans


def value_offset(text: str, criterion_id: str) -> int | None:
    """Where the criterion's value starts in the answer text: after `"<id>": {... "value":` or a
    bare `"<id>":`. None when the key is not found."""
    key = re.compile(r"(?<!\\)" + re.escape(json.dumps(criterion_id)) + r"\s*:\s*")
    for match in key.finditer(text):
        rest = match.end()
        if text.startswith("{", rest):
            inner = re.compile(r'(?<!\\)"value"\s*:\s*').search(text, rest)
            if inner:
                return inner.end()
        else:
            return rest
    return None


def _token_at(spans: list[tuple[int, Any]], offset: int) -> int | None:
    for i, (start, entry) in enumerate(spans):
        if start <= offset < start + len(getattr(entry, "token", "") or ""):
            return i
    return None


def _clean(token: str) -> str:
    return token.strip().lstrip(":").strip().strip('"').strip()


def _value_of(scale: Any, piece: str) -> Any | None:
    """The scale value a token's text stands for, or None."""
    if not piece:
        return None
    if isinstance(scale, NominalScale):
        matches = [c for c in scale.domain() if c.startswith(piece)]
        return matches[0] if len(matches) == 1 else None
    try:
        return scale.normalize(int(piece) if re.fullmatch(r"-?\d+", piece) else piece)
    except ScaleError:
        return None


def weighable(scale: Any) -> bool:
    """Scales whose every value is told apart by one token."""
    if isinstance(scale, (BinaryScale, OrdinalScale)):
        names = [str(v) for v in scale.domain()]
        return not any(a != b and b.startswith(a) for a in names for b in names)
    return isinstance(scale, NominalScale)


def weigh(scale: Any, sampled: Any, text: str, spans: list[tuple[int, Any]], criterion_id: str) -> Weighted | None:
    """The weighted score of one criterion, or None when the answer's tokens cannot carry it (no
    logprobs at the value, a value spread over tokens, alternatives that are not scale values)."""
    if not weighable(scale):
        return None
    offset = value_offset(text, criterion_id)
    index = None if offset is None else _token_at(spans, offset)
    if index is None or offset is None:
        return None
    start, entry = spans[index]
    if not _clean(entry.token[offset - start :]) and index + 1 < len(spans):  # the token was only the opening quote
        index += 1
        start, entry = spans[index]
    return weigh_token(scale, sampled, entry)


def weigh_bare(scale: Any, sampled: Any, content: list[Any]) -> Weighted | None:
    """The weighted score of a decision (an answer that is the level alone): its first token that
    is not blank carries the level and its alternatives."""
    entry = next((e for e in content if _clean(getattr(e, "token", "") or "")), None)
    return None if entry is None or not weighable(scale) else weigh_token(scale, sampled, entry)


def weigh_token(scale: Any, sampled: Any, entry: Any) -> Weighted | None:
    """The weighted score at the token `entry` where the sampled value was written: the scale
    values among its top alternatives, weighed by their probabilities."""
    choices = [entry] + list(getattr(entry, "top_logprobs", None) or [])
    seen: dict[str, float] = {}
    probs: dict[Any, float] = {}
    for alt in choices:
        token, logprob = getattr(alt, "token", None), getattr(alt, "logprob", None)
        if token is None or token in seen or not isinstance(logprob, (int, float)) or math.isnan(logprob):
            continue
        seen[token] = logprob
        value = _value_of(scale, _clean(token))
        if value is not None:
            probs[value] = probs.get(value, 0.0) + math.exp(logprob)
    try:
        chosen = scale.normalize(sampled)
    except ScaleError:
        return None
    if _value_of(scale, _clean(entry.token)) != chosen:  # the token is not the sampled value's
        return None
    units = {v: scale.unit(v) for v in probs}
    scored = {v: p for v, p in probs.items() if units[v] is not None}
    mass = sum(scored.values())
    if mass <= 0:
        return None
    return Weighted(
        unit_score=sum(p * units[v] for v, p in scored.items()) / mass,
        probs={str(v): p / mass for v, p in sorted(scored.items(), key=lambda kv: str(kv[0]))},
        mass=min(1.0, mass),
    )


def answer_logprobs(choice: Any) -> list[Any] | None:
    """The content tokens' logprobs of a choice, when the endpoint returned them."""
    logprobs = getattr(choice, "logprobs", None)
    content = getattr(logprobs, "content", None)
    return content if isinstance(content, list) and content else None
