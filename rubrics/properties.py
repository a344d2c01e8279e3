"""The seed framework's 16 property predicates (P_mission .. P_validation) as values, and the four
property profiles (Scoring, Detection, Compliance, Constraint) defined from them.

Seed 000, section 4.1-4.2: a profile is a conjunction of predicates; Detection is Scoring plus
pattern-backed, inverted scoring with advice. The compiler names a rubric's profile from here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from .model import BinaryScale, NominalScale, OrdinalScale, Rubric

ECONOMY = (3, 7)  # the seed's recommended criteria count
# An author's formula that reports risk as the score's complement (AntiLLMY: `risk = 15 - score`).
_RISK_FORMULA = re.compile(r"\brisk\s*=\s*\d+(?:\.\d+)?\s*-\s*score\b", re.I)


def described_levels(criterion) -> int:
    """How many distinct anchors the criterion's scale has (seed 000: P_anchored and S1 count
    ">= 2 distinct anchors"): two levels worded alike anchor one meaning, and a binary scale's
    two outcomes are its anchors."""
    scale = criterion.scale
    if isinstance(scale, OrdinalScale):
        return len({_words(a.label, a.description) for a in scale.anchors} - {_words()})
    if isinstance(scale, NominalScale):
        return len(scale.categories)
    if isinstance(scale, BinaryScale):
        return len({_words(label) for label in scale.labels} - {_words()})
    return 0


def _words(*texts: str) -> tuple[str, ...]:
    """Texts compared as a reader sees them: case and spacing aside."""
    return tuple(" ".join(t.lower().split()) for t in texts if t.strip())


def _fraction(rubric: Rubric, test: Callable) -> float:
    if not rubric.criteria:
        return 0.0
    return sum(1 for c in rubric.criteria if test(c)) / len(rubric.criteria)


def _aligned(rubric: Rubric) -> float:
    """Fraction of criterion ids the author's output template names (the generated schema names all)."""
    template = rubric.output.template
    if not template.strip():
        return 1.0 if rubric.criteria else 0.0
    return _fraction(rubric, lambda c: c.id in template)


def rituals(rubric: Rubric) -> int:
    """Seed 000's ritual constraints ("a fixed prefix (e.g., 'BECAUSE:'), word count, or key order
    requirement"): P_ritual counts them and S5 holds when there is one, so the two never disagree."""
    fixed = sum(
        1
        for c in rubric.output.constraints
        if c.prefix or c.suffix or c.min_words is not None or c.max_words is not None or c.min_items is not None
    )
    return fixed + int(rubric.surface.enforce_key_order)


def _mirrors(rubric: Rubric) -> int:
    """Output constraints stated again elsewhere (validation, instructions, role constraints)."""
    restated = " ".join(rubric.validation + rubric.instructions + rubric.role.constraints)
    return sum(1 for c in rubric.output.constraints if (c.prefix and c.prefix in restated) or c.id in restated)


def properties(rubric: Rubric) -> dict[str, bool | int | float]:
    """The 16 predicates of seed 000 section 4.1, each as the value the seed gives it."""
    r = rubric
    anchored = [c for c in r.criteria if described_levels(c) >= 2]
    return {
        "P_mission": bool(r.goal.strip() or r.metadata.description.strip()),
        "P_criteria": len(anchored),
        "P_anchored": _fraction(r, lambda c: described_levels(c) >= 2),
        "P_mechanical": _fraction(r, lambda c: bool(c.mechanical_rules or c.patterns)),
        "P_dq": len(r.disqualifiers),
        "P_schema": bool(r.criteria or r.output.template.strip() or r.output.constraints),
        "P_aligned": _aligned(r),
        "P_ritual": rituals(r),
        "P_mirror": _mirrors(r),
        "P_patterns": len(r.patterns),
        "P_examples": len(r.mapping_examples),
        "P_economy": ECONOMY[0] <= len(r.criteria) <= ECONOMY[1],
        "P_inverted": r.scoring.invert or bool(_RISK_FORMULA.search(r.scoring.formula)),
        "P_decision": bool(r.decision_rules),
        "P_advice": len(r.advice),
        "P_validation": len(r.validation),
    }


def _scoring(p: dict) -> list[bool]:
    return [
        bool(p["P_mission"]),
        p["P_criteria"] >= 3,
        p["P_anchored"] >= 0.8,
        bool(p["P_schema"]),
        p["P_dq"] >= 1,
        not p["P_decision"],
    ]


# Each profile as the list of its conjuncts (seed 000 section 4.2), in the order they are tried.
PROFILES: dict[str, Callable[[dict], list[bool]]] = {
    "detection": lambda p: [
        *_scoring(p),
        p["P_patterns"] >= 5,
        p["P_mechanical"] >= 0.8,
        bool(p["P_inverted"]),
        p["P_advice"] >= 1,
    ],
    "compliance": lambda p: [
        bool(p["P_mission"]),
        p["P_criteria"] >= 2,
        bool(p["P_schema"]),
        bool(p["P_decision"]),
        p["P_examples"] >= 2,
    ],
    "scoring": _scoring,
    "constraint": lambda p: [bool(p["P_mission"]), p["P_examples"] >= 1, p["P_criteria"] == 0],
}


def seed_profile(rubric: Rubric) -> str | None:
    """The first profile whose every conjunct holds, or None."""
    p = properties(rubric)
    return next((name for name, conjuncts in PROFILES.items() if all(conjuncts(p))), None)


def describe(rubric: Rubric) -> str:
    """The predicates as one JSON line (for `rubric show`)."""
    return json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in properties(rubric).items()})


# The property lattice (seed 000 section 4.3): each node with the nodes it implies, bottom up. A
# node holds when its own condition and every node below it hold, so the derived nodes (Stable,
# Aligned, Economic, WellFormed) are read off the predicates, never judged apart from them.
LATTICE_NODES: dict[str, tuple[Callable[[dict], bool], tuple[str, ...]]] = {
    "Mission": (lambda p: bool(p["P_mission"]), ()),
    "Criteria": (lambda p: p["P_criteria"] >= 1, ("Mission",)),
    "Anchored": (lambda p: p["P_anchored"] == 1.0, ("Criteria",)),
    "Template": (lambda p: bool(p["P_schema"]), ()),
    "Schema": (lambda p: bool(p["P_schema"]), ("Mission", "Template")),
    "Mirror": (lambda p: p["P_mirror"] >= 1, ()),
    "Ritual": (lambda p: p["P_ritual"] >= 1, ("Schema", "Mirror")),
    "Small": (lambda p: bool(p["P_economy"]), ()),
    "Stable": (lambda p: True, ("Anchored", "Ritual")),
    "Aligned": (lambda p: p["P_aligned"] == 1.0, ("Schema", "Criteria")),
    "Economic": (lambda p: True, ("Criteria", "Small")),
    "WellFormed": (lambda p: True, ("Stable", "Aligned", "Economic")),
}


def lattice_nodes(rubric: Rubric) -> dict[str, bool]:
    """Every node of the seed's property lattice for the rubric, bottom up (dict order)."""
    p = properties(rubric)
    held: dict[str, bool] = {}
    for node, (own, below) in LATTICE_NODES.items():
        held[node] = own(p) and all(held[b] for b in below)
    return held
