"""Pair corpora: two responses to one prompt, judged against each other. Each pair becomes two
texts of an ordinary corpus, one per order (`<pair_id>:ab` shows response A first, `<pair_id>:ba`
response B first), so pairwise judging is scoring: the same cells, resume, retries, rate limits
and landing, with a pairwise form of the rubric (rubrics/pairwise.py). The views read the pair
back from each text's metadata (pair_id, order, label, system_a, system_b)."""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterator
from typing import Any

FIRST, SECOND = "[Response A]", "[Response B]"
LABELS = ("a", "b", "tie")
PAIR_FIELDS = ("prompt", "response_a", "response_b")


def render_pair(first: str, second: str) -> str:
    """The text the judge reads: both responses, marked by position."""
    return f"{FIRST}\n{first}\n\n{SECOND}\n{second}"


def split_pair(text: str) -> tuple[str, str] | None:
    """The two responses of a rendered pair (the last marker splits them: a response that quotes
    the marker cannot move the boundary forward)."""
    if not text.startswith(FIRST + "\n"):
        return None
    body = text[len(FIRST) + 1 :]
    cut = body.rfind(f"\n\n{SECOND}\n")
    return None if cut < 0 else (body[:cut], body[cut + len(SECOND) + 3 :])


def is_pair_record(record: Any) -> bool:
    return isinstance(record, dict) and ("response_a" in record or "chosen_instruction" in record)


def expand_pairs(
    records: Iterator[tuple[int, Any, str | None]], seed: int = 0
) -> Iterator[tuple[int, Any, str | None]]:
    """Pair rows (row number, record, error) as two text rows each; a bad pair is one error row."""
    for number, record, error in records:
        if error or record is None:
            yield number, record, error
            continue
        if "chosen_instruction" in record:
            record, error = from_prometheus_preference(record, number, seed)
            if error:
                yield number, {"text_id": None}, error
                continue
        missing = [f for f in PAIR_FIELDS if not isinstance(record.get(f), str) or not record[f].strip()]
        if missing:
            yield number, {"text_id": record.get("pair_id")}, f"pair without {', '.join(missing)}"
            continue
        label = record.get("label")
        if label is not None and str(label).strip().lower() not in LABELS:
            yield number, {"text_id": record.get("pair_id")}, f"label {label!r} is not one of a, b, tie"
            continue
        pair_id = str(record.get("pair_id") or record.get("id") or _digest(record)[:16])
        meta = {k: v for k, v in record.items() if k not in PAIR_FIELDS + ("pair_id", "id", "text", "input")}
        meta.update(pair_id=pair_id, label=None if label is None else str(label).strip().lower())
        for order, first, second in (
            ("ab", record["response_a"], record["response_b"]),
            ("ba", record["response_b"], record["response_a"]),
        ):
            yield (
                number,
                {
                    **meta,
                    "text_id": f"{pair_id}:{order}",
                    "order": order,
                    "text": render_pair(first, second),
                    "input": record["prompt"],
                },
                None,
            )


def from_prometheus_preference(record: dict, number: int, seed: int) -> tuple[dict, str | None]:
    """A human preference pair given as two Prometheus grading prompts (the HHH alignment set:
    `chosen_instruction`, `rejected_instruction`): the instruction, both responses and the rubric
    taken out of their blocks; which response is `a` is drawn per pair (seeded), so the position
    carries no information, and the label says where the chosen one went."""
    chosen, rejected = _blocks(record.get("chosen_instruction")), _blocks(record.get("rejected_instruction"))
    if not chosen.get("response") or not rejected.get("response") or not chosen.get("instruction"):
        return {}, "a preference pair without `###The instruction to evaluate:` and `###Response to evaluate:` blocks"
    chosen_first = random.Random(f"{seed}:{number}:{chosen['instruction']}").random() < 0.5
    a, b = (chosen["response"], rejected["response"]) if chosen_first else (rejected["response"], chosen["response"])
    pair = {
        "pair_id": f"{record.get('source', 'pair')}-{number:04d}",
        "prompt": chosen["instruction"],
        "response_a": a,
        "response_b": b,
        "label": "a" if chosen_first else "b",
    }
    if record.get("source"):
        pair["source"] = record["source"]
    if chosen.get("rubric"):
        pair["rubric"] = chosen["rubric"]
    return pair, None


_BLOCK = re.compile(
    r"^###(The instruction to evaluate|Response to evaluate|Score Rubrics):\s*\n(.*?)(?=^###|\Z)", re.M | re.S
)


def _blocks(prompt: Any) -> dict[str, str]:
    names = {
        "The instruction to evaluate": "instruction",
        "Response to evaluate": "response",
        "Score Rubrics": "rubric",
    }
    if not isinstance(prompt, str):
        return {}
    return {names[m.group(1)]: m.group(2).strip() for m in _BLOCK.finditer(prompt)}


def _digest(record: dict) -> str:
    return hashlib.sha256("\x1f".join(str(record.get(f, "")) for f in PAIR_FIELDS).encode()).hexdigest()
