"""Output constraints (seed 001's OutputConstraint variants, TokenConstraint included) checked on
plain values: the judge's answer while it is read (tasks/judging/verify.py), the text's whole
answer for judgment-scoped ones, and the warehouse's refresh (warehouse/judgment_constraints.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

from .model import OutputConstraint, Rubric


class Judged(Protocol):
    """One criterion's reading of an answer, as far as a constraint looks at it."""

    criterion_id: str
    status: str
    rationale: str | None
    evidence: list[str]


_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """Tokens as a TokenConstraint counts them: words and punctuation marks. Tokenizer-free, so the
    same answer counts the same on every judge model (a model's own BPE count runs ~30% higher)."""
    return len(_TOKEN.findall(text))


def check_constraint(c: OutputConstraint, value: Any) -> str | None:
    """Why `value` breaks constraint `c`, or None."""
    items: list[Any] | None
    if isinstance(value, list):
        items = value
        text = " ".join(map(str, value))
    else:
        text = "" if value is None else str(value)
        items = [p for p in text.split(c.separator)] if c.separator else None
    words = len(text.split())
    problems = []
    if c.prefix and not text.startswith(c.prefix):
        problems.append(f"does not start with {c.prefix!r}")
    if c.suffix and not text.rstrip().endswith(c.suffix):
        problems.append(f"does not end with {c.suffix!r}")
    if c.min_words is not None and words < c.min_words:
        problems.append(f"{words} words < {c.min_words}")
    if c.max_words is not None and words > c.max_words:
        problems.append(f"{words} words > {c.max_words}")
    if c.min_chars is not None and len(text) < c.min_chars:
        problems.append(f"{len(text)} chars < {c.min_chars}")
    if c.max_chars is not None and len(text) > c.max_chars:
        problems.append(f"{len(text)} chars > {c.max_chars}")
    if c.min_tokens is not None or c.max_tokens is not None:
        tokens = count_tokens(text)
        if c.min_tokens is not None and tokens < c.min_tokens:
            problems.append(f"{tokens} tokens < {c.min_tokens}")
        if c.max_tokens is not None and tokens > c.max_tokens:
            problems.append(f"{tokens} tokens > {c.max_tokens}")
    if items is not None:
        if c.min_items is not None and len(items) < c.min_items:
            problems.append(f"{len(items)} items < {c.min_items}")
        if c.max_items is not None and len(items) > c.max_items:
            problems.append(f"{len(items)} items > {c.max_items}")
    said = [phrase for phrase in c.forbid if phrase.lower() in text.lower()]
    if said:
        problems.append(f"contains {', '.join(map(repr, said))}")
    missing = [phrase for phrase in c.require if phrase not in text]  # as rubrify's TokenConstraint: case as written
    if missing:
        problems.append(f"does not contain {', '.join(map(repr, missing))}")
    return "; ".join(problems) or None


def judgment_problems(rubric: Rubric, results: Sequence[Judged]) -> list[tuple[OutputConstraint, str]]:
    """The judgment-scoped constraints the text's whole answer breaks: each criterion field joined
    over every scored criterion, in the rubric's order (rationales one per line, evidence as one list)."""
    order = {c.id: n for n, c in enumerate(rubric.criteria)}
    scored = sorted((r for r in results if r.status == "scored"), key=lambda r: order.get(r.criterion_id, 0))
    problems = []
    for c in rubric.output.constraints:
        if c.scope != "judgment" or not scored:
            continue
        if c.field == "rationale":
            value: Any = "\n".join(r.rationale or "" for r in scored)
        else:
            value = [e for r in scored for e in r.evidence]
        problem = check_constraint(c, value)
        if problem:
            problems.append((c, problem))
    return problems
