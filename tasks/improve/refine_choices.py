"""`rubric refine --choose`: for a property the seed makes mechanical, the operations that raise it are
made by rule (merge the criteria whose ids share a first word, anchor a bare criterion, add the seed's
BECAUSE: ritual, restate it, a criterion-floor disqualifier) and listed, numbered; the model only
chooses which to apply: a short JSON answer a small model gives where it cannot write a mutation's
JSON (Gemma 3 270M's free proposals ran to their token cap). What it chooses is measured like any
proposal, so a bad choice is refused, never kept."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from rubricflow.rubrics.model import Criterion, Rubric
from rubricflow.rubrics.properties import described_levels
from rubricflow.tasks.improve import lattice
from rubricflow.tasks.judging.prompts import REFINE_MARK
from rubricflow.tasks.judging.verify import AnswerError, parse_json_answer

Option = tuple[str, list[dict]]  # (what it does, in one line; the mutations)
RITUAL = {"id": "because", "field": "rationale", "prefix": "BECAUSE:", "max_words": 35}
CHOOSE_MARK = "## Options"
ANSWER_FORMAT = (
    'Answer with one JSON object and nothing else: its key "choose" holds the list of the numbers of the '
    "options you choose."
)
MAX_CHOICES = 3  # a round's most: Gemma 3 270M, constrained to option numbers, repeats one to the cap


def _title(c: Criterion) -> str:
    return (c.title or c.id.replace("-", " ")).strip()


def _merges(r: Rubric) -> list[Option]:
    groups: dict[str, list[Criterion]] = {}
    for c in r.criteria:
        groups.setdefault(c.id.split("-")[0], []).append(c)
    out = []
    for group in (g for g in groups.values() if len(g) > 1):
        kept = max(group, key=described_levels)  # an anchored member's scale survives the merge
        into = {**kept.model_dump(mode="json"), "id": group[0].id}
        into["description"] = " ".join(c.description or _title(c) for c in group)
        into["patterns"] = sorted({p for c in group for p in c.patterns})
        ids = [c.id for c in group]
        out.append((f"merge {' + '.join(ids)}", [{"op": "merge_criteria", "ids": ids, "into": into}]))
    return out


def _anchors(r: Rubric) -> list[Option]:
    out = []
    for c in (c for c in r.criteria if described_levels(c) < 2):
        what = (c.description or _title(c)).rstrip(".")
        levels = [f"Not so: {what}.", f"Rarely so: {what}.", f"Mostly so: {what}.", f"Throughout: {what}."]
        scale = {"kind": "ordinal", "anchors": [{"value": i, "description": d} for i, d in enumerate(levels)]}
        out.append(
            (
                f"anchor {c.id} (4 described levels)",
                [{"op": "rewrite_criterion", "id": c.id, "changes": {"scale": scale}}],
            )
        )
    return out


def _disqualifiers(r: Rubric) -> list[Option]:
    return [
        (
            f"disqualify a text at the floor of {c.id}",
            [
                {
                    "op": "add_disqualifier",
                    "disqualifier": {"id": f"{c.id}-floor", "kind": "criterion", "criterion": c.id},
                }
            ],
        )
        for c in r.criteria
        if not any(d.criterion == c.id for d in r.disqualifiers)
    ]


def _ritual(r: Rubric) -> list[Option]:
    return [
        (
            "rationales start with BECAUSE: and run at most 35 words",
            [{"op": "add_output_constraint", "constraint": RITUAL}],
        )
    ]


def _mirror(r: Rubric) -> list[Option]:
    restated = " ".join(r.validation + r.instructions + r.role.constraints)
    constraints = [c.model_dump(mode="json", exclude_none=True) for c in r.output.constraints] or [RITUAL]
    out: list[Option] = []
    for c in constraints:
        if c.get("prefix") and c["prefix"] not in restated and c["id"] not in restated:
            text = f"Rationales start with '{c['prefix']}' ({c['id']})."
            ops: list[dict] = [] if r.output.constraints else [{"op": "add_output_constraint", "constraint": RITUAL}]
            out.append((f"restate {c['id']} in validation", [*ops, {"op": "add_validation", "text": text}]))
    return out


BY_PROPERTY: dict[str, Callable[[Rubric], list[Option]]] = {
    "economy": _merges,
    "anchors": _anchors,
    "disqualifiers": _disqualifiers,
    "ritual": _ritual,
    "mirror": _mirror,
}


def options(rubric: Rubric, target: str, attempt: int = 1) -> list[Option]:
    """The rule-made operations aimed at `target` (none for a property without rules: a free proposal),
    in an order of their own per property and attempt (a hash of each label), so that a model that
    answers the same numbers every time chooses different operations: a copy is not a choice."""
    made = BY_PROPERTY.get(target, lambda _: [])(rubric)
    return sorted(made, key=lambda o: hashlib.sha256(f"{target}|{attempt}|{o[0]}".encode()).hexdigest())


def messages(rubric: Rubric, target: str, offered: list[Option], tried: list[str], attempt: int) -> list[dict]:
    """A short prompt: the property, the criteria one a line, the numbered options; answer the numbers.
    The answer's format is said in words, with no example to copy (Gemma 3 270M answered the old
    prompt's example, `{"choose": [1, 2]}`, to the letter)."""
    prop = lattice.BY_ID[target]
    system = (
        f"{REFINE_MARK}: raise one property of the rubric, {prop.title} ({prop.question}). {prop.primitive}\n"
        f"Choose the options that do it. {ANSWER_FORMAT}"
    )
    lines = [f"## Criteria of {rubric.metadata.id}"]
    lines += [f"- {c.id}: {c.description or _title(c)}" for c in rubric.criteria]
    lines += [CHOOSE_MARK] + [f"{n}. {label}" for n, (label, _) in enumerate(offered, 1)]
    if tried:
        lines += ["## Already chosen, and rejected"] + [f"- {t}" for t in tried]
    if attempt > 1:
        lines.append(f"## Attempt {attempt}")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]


def schema(offered: list[Option]) -> dict:
    """The answer's JSON Schema: 1 to MAX_CHOICES of the offered numbers. It rides in the request's
    response_format, so a server that constrains by it (llama.cpp's grammar) can only answer in
    the format, with option numbers, and briefly (Gemma 3 270M, told the format in words alone,
    wrote other JSON to its token cap)."""
    numbers = {"type": "integer", "enum": list(range(1, len(offered) + 1))}
    listed = {"type": "array", "items": numbers, "minItems": 1, "maxItems": min(MAX_CHOICES, len(offered))}
    return {"type": "object", "properties": {"choose": listed}, "required": ["choose"]}


def chosen(content: str, offered: list[Option]) -> list[int]:
    """The option numbers an answer chose (a number, or a digit string; out of range ignored); an
    AnswerError if it names none."""
    answer = parse_json_answer(content)
    raw = answer.get("choose", next((v for v in answer.values() if isinstance(v, list | int | str)), None))
    numbers = [
        int(n) if isinstance(n, str) and n.strip().isdigit() else n for n in (raw if isinstance(raw, list) else [raw])
    ]
    picks = sorted({n for n in numbers if isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= len(offered)})
    if not picks:
        raise AnswerError("schema", f"chose no option 1 to {len(offered)}: {content[:120]!r}")
    return picks


def picked(content: str, offered: list[Option]) -> str:
    """The chosen options' mutations as a proposal's answer ({"mutations": [...]}); an AnswerError if
    the answer names no option."""
    return json.dumps({"mutations": [m for n in chosen(content, offered) for m in offered[n - 1][1]]})


def said(content: str, offered: list[Option]) -> str:
    """What an answer chose, for the changelog and the progress line: `3, 7 of 12: label; label`."""
    try:
        picks = chosen(content, offered)
    except AnswerError:
        return ""
    return f"chose {', '.join(map(str, picks))} of {len(offered)}: " + "; ".join(offered[n - 1][0] for n in picks)
