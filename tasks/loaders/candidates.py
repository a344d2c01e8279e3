"""Candidate-set corpora: n responses to one prompt, judged together (best-of-n). Each set becomes
ONE text of an ordinary corpus, the responses marked `[Response 1]` ... `[Response n]`, so the
judge sees every candidate in one call and best-of-n judging is scoring: the same cells, resume,
retries and landing, with the best-of form of the rubric (rubrics/best_of.py). The metadata keeps
the set (set_id, candidates: n, systems, label: the human's best, 1-based) for the views."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from typing import Any

MARK = re.compile(r"^\[Response (\d+)\]$", re.M)
SET_FIELDS = ("prompt", "candidates", "systems", "set_id", "id", "text", "input", "label")


def render_candidates(candidates: list[str]) -> str:
    """The text the judge reads: every candidate, marked by its number."""
    return "\n\n".join(f"[Response {i}]\n{c}" for i, c in enumerate(candidates, start=1))


def split_candidates(text: str) -> list[str] | None:
    """The candidates of a rendered set, or None for any other text. Only the marks numbered 1, 2, ...
    in order cut the text, so a response that quotes a later mark cannot move a boundary."""
    cuts: list[re.Match] = []
    for m in MARK.finditer(text):
        if int(m.group(1)) == len(cuts) + 1 and (cuts or m.start() == 0):
            cuts.append(m)
    if len(cuts) < 2:
        return None
    ends = [m.start() - 2 for m in cuts[1:]] + [len(text)]
    return [text[m.end() + 1 : end] for m, end in zip(cuts, ends, strict=True)]


def is_candidate_set(record: Any) -> bool:
    return isinstance(record, dict) and isinstance(record.get("candidates"), list)


def expand_sets(records: Iterator[tuple[int, Any, str | None]]) -> Iterator[tuple[int, Any, str | None]]:
    """Set rows (row number, record, error) as one text row each; a bad set is one error row."""
    for number, record, error in records:
        if error or record is None:
            yield number, record, error
            continue
        text_id = record.get("set_id") or record.get("id")
        problem = _problem(record)
        if problem:
            yield number, {"text_id": text_id}, problem
            continue
        candidates = record["candidates"]
        set_id = str(text_id or hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()[:16])
        label = record.get("label")
        meta = {k: v for k, v in record.items() if k not in SET_FIELDS}
        meta.update(set_id=set_id, candidates=len(candidates), systems=record.get("systems"), label=label)
        yield (
            number,
            {**meta, "text_id": set_id, "text": render_candidates(candidates), "input": record["prompt"]},
            None,
        )


def _problem(record: dict) -> str | None:
    """Why a set cannot be judged, naming the field, or None."""
    candidates = record["candidates"]
    if not isinstance(record.get("prompt"), str) or not record["prompt"].strip():
        return "candidate set without prompt"
    if len(candidates) < 2 or not all(isinstance(c, str) and c.strip() for c in candidates):
        return "candidates: at least 2 non-empty responses (strings) are required"
    systems = record.get("systems")
    if systems is not None and (not isinstance(systems, list) or len(systems) != len(candidates)):
        return f"systems: one name per candidate ({len(candidates)}) is required"
    label = record.get("label")
    if label is not None and (isinstance(label, bool) or label not in range(1, len(candidates) + 1)):
        return f"label {label!r} is not a candidate number 1..{len(candidates)}"
    return None
