"""The offline drafter's answer to `rubric generate --kind`: its one-binary-criterion-per-rule draft,
reshaped as literally as the kind's instruction primitives say (tasks/improve/primitives.py), so the
kinds can be exercised over real HTTP without a model. Deterministic; not a model."""

from __future__ import annotations

import re

RITUAL = {"id": "because", "field": "rationale", "prefix": "BECAUSE:", "max_words": 35}
RESTATED = "Rationales start with 'BECAUSE:' and have at most 35 words (because)."


def shape(kind: str, draft: dict) -> dict:
    shaper = {"scoring": scoring, "detection": detection, "compliance": compliance, "constraint": constraint}.get(kind)
    if kind in ("scoring", "detection"):  # seed 000's ScoringProfile needs >= 3 criteria
        draft = {**draft, "criteria": _at_least_three(draft["criteria"])}
    return shaper(draft) if shaper else draft


def _at_least_three(criteria: list[dict]) -> list[dict]:
    extra = [
        {
            "id": f"whole-{n}",
            "title": f"The source's rules, as a whole ({n})",
            "description": "Follows every rule of the source throughout the text.",
            "scale": {"kind": "binary", "labels": ["breaks a rule", "follows them"]},
        }
        for n in range(1, 4)
    ]
    return [*criteria, *extra][: max(3, len(criteria))]


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
        pid, lead = f"{c['id']}-words", f"{c['id']}-lead"  # two each: the DetectionProfile's P_patterns >= 5
        patterns.append({"id": pid, "words": words, "flags": "i"})
        patterns.append({"id": lead, "regex": rf"(?m)^\s*{words[0]}\b", "flags": "i"})
        advice.append({"when": [pid, lead], "advice": f"Rewrite the passages that use {', '.join(words)}."})
        criteria.append({**c, "patterns": [pid, lead]})
    # the `inverted` primitive: a criterion's top level ("follows the rule") is clean, the risk its complement
    bands = [{"label": "low risk", "min": 0.7}, {"label": "high risk", "min": 0}]
    scoring = {"formula": "risk = 1 - score; higher score = cleaner.", "labels": bands}
    out = {**draft, "criteria": criteria, "patterns": patterns, "advice": advice, "scoring": scoring}
    out["disqualifiers"] = [{"id": f"{criteria[0]['id']}-floor", "kind": "criterion", "criterion": criteria[0]["id"]}]
    return _ritual(out)


def compliance(draft: dict) -> dict:
    criteria = draft["criteria"][:5]
    rules = [{"id": f"R{n}", "condition": f"If {c['id']} is 0", "verdict": "fail"} for n, c in enumerate(criteria, 1)]
    rules.append({"id": f"R{len(rules) + 1}", "condition": "Otherwise", "verdict": "pass"})
    examples = [  # seed 000's ComplianceProfile counts mapping examples (P_examples >= 2)
        {"id": "E1", "input": "A request.", "output": "A reply that follows every rule.", "verdict": "pass"},
        {"id": "E2", "input": "A request.", "output": "no", "verdict": "fail"},
        {"id": "E3", "input": "A request.", "output": "-", "verdict": "fail"},
    ]
    definitions = [{"term": "COMPLY", "meaning": "The reply does what every rule asks."}]
    verdicts = [{"label": "pass", "score": 1.0}, {"label": "fail", "score": 0.0}]
    out = {**draft, "criteria": criteria, "decision_rules": rules, "mapping_examples": examples}
    return {**out, "definitions": definitions, "verdicts": verdicts, "output": {"constraints": [RITUAL]}}


def constraint(draft: dict) -> dict:
    instructions = [c["description"] for c in draft["criteria"]] or ["Follow the source's rules."]
    example = {"id": "E1", "input": "A request.", "output": " ".join(instructions), "verdict": "ok"}
    out = {k: v for k, v in draft.items() if k != "criteria"}
    return _ritual({**out, "instructions": instructions, "mapping_examples": [example]})
