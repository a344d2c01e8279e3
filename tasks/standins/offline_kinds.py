"""The offline drafter's answer to `rubric generate --kind`: its one-binary-criterion-per-rule draft,
reshaped as literally as the kind's instruction primitives say (tasks/improve/primitives.py), so the
kinds can be exercised over real HTTP without a model. Deterministic; not a model."""

from __future__ import annotations

import re

RITUAL = {"id": "because", "field": "rationale", "prefix": "BECAUSE:", "max_words": 35}
RESTATED = "Rationales start with 'BECAUSE:' and have at most 35 words (because)."


def shape(kind: str, draft: dict) -> dict:
    shaper = {"scoring": scoring, "detection": detection, "compliance": compliance, "constraint": constraint}.get(kind)
    return shaper(draft) if shaper else draft


def _ritual(draft: dict) -> dict:
    return {**draft, "output": {"constraints": [RITUAL]}, "validation": [RESTATED]}


def scoring(draft: dict) -> dict:
    criteria = []
    for c in draft["criteria"][:5]:
        rule = c["description"].rstrip(".").lower()
        levels = [
            f"Breaks the rule ({rule}) throughout.",
            "Breaks it often.",
            "Breaks it once.",
            "Follows it throughout.",
        ]
        scale = {"kind": "ordinal", "anchors": [{"value": i, "description": d} for i, d in enumerate(levels)]}
        criteria.append({**c, "scale": scale})
    first = criteria[0]["id"] if criteria else None
    out = {
        **draft,
        "criteria": criteria,
        "scoring": {"labels": [{"label": "weak", "min": 0}, {"label": "strong", "min": 0.7}]},
    }
    if first:
        out["disqualifiers"] = [{"id": f"{first}-floor", "kind": "criterion", "criterion": first}]
    return _ritual(out)


def detection(draft: dict) -> dict:
    criteria, patterns, advice = [], [], []
    for c in draft["criteria"][:5]:
        words = sorted({w for w in re.findall(r"[a-z]{5,}", c["description"].lower())})[:3] or ["placeholder"]
        pid = f"{c['id']}-words"
        patterns.append({"id": pid, "words": words, "flags": "i"})
        advice.append({"when": [pid], "advice": f"Rewrite the passages that use {', '.join(words)}."})
        criteria.append({**c, "patterns": [pid]})
    out = {**draft, "criteria": criteria, "patterns": patterns, "advice": advice, "scoring": {"invert": True}}
    return _ritual(out)


def compliance(draft: dict) -> dict:
    criteria = draft["criteria"][:5]
    rules = [f"R{n}: if {c['id']} is 0, the verdict is fail" for n, c in enumerate(criteria, 1)]
    rules.append(f"R{len(rules) + 1}: otherwise the verdict is pass")
    goldens = [
        {"name": "follows-every-rule", "output": "A reply that follows every rule.", "expected": "pass"},
        {"name": "breaks-a-rule", "output": "no", "expected": "fail"},
        {"name": "empty-reply", "output": "-", "expected": "fail"},
    ]
    definitions = [{"term": "COMPLY", "meaning": "The reply does what every rule asks."}]
    out = {**draft, "criteria": criteria, "decision_rules": rules, "goldens": goldens, "definitions": definitions}
    return {**out, "output": {"constraints": [RITUAL]}}


def constraint(draft: dict) -> dict:
    instructions = [c["description"] for c in draft["criteria"]] or ["Follow the source's rules."]
    golden = {"name": "follows-the-instructions", "output": " ".join(instructions)}
    out = {k: v for k, v in draft.items() if k != "criteria"}
    return _ritual({**out, "instructions": instructions, "goldens": [golden]})
