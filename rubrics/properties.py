"""The seed framework's 16 property predicates (P_mission .. P_validation) as values, and the four
property profiles (Scoring, Detection, Compliance, Constraint) defined from them.

Seed 000, section 4.1-4.2: a profile is a conjunction of predicates; Detection is Scoring plus
pattern-backed, inverted scoring with advice. The compiler names a rubric's profile from here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from .model import BinaryScale, Criterion, NominalScale, OrdinalScale, Rubric
from .verdict_form import VERDICT_TAG

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


def author_criteria(rubric: Rubric) -> tuple[Criterion, ...]:
    """The criteria the author wrote: not the verdict criterion a rubric of decision rules asks
    (rubrics/verdict_form.py), which the seed's ComplianceJudge ("Criterion(x3)") does not count."""
    return tuple(c for c in rubric.criteria if VERDICT_TAG not in c.tags)


def names(text: str, ident: str) -> bool:
    """Whether `text` names the id as a whole word: `C1` is not named by `C10`, nor `word` by `words`."""
    return re.search(rf"(?<![\w.-]){re.escape(ident)}(?![\w-])", text) is not None


def _fraction(rubric: Rubric, test: Callable) -> float:
    criteria = author_criteria(rubric)
    if not criteria:
        return 0.0
    return sum(1 for c in criteria if test(c)) / len(criteria)


def _aligned(rubric: Rubric) -> float:
    """Fraction of criterion ids the author's output template names, JSON or XML alike (the generated
    schema names all)."""
    template = rubric.output.template
    if not template.strip():
        return 1.0 if author_criteria(rubric) else 0.0
    return _fraction(rubric, lambda c: names(template, c.id))


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
    """Output constraints stated again in another of seed 000's locations ("rubric definition, output
    schema, and/or validation section"): the criteria's own words, validation, instructions, role
    constraints. P_mirror counts them and S6 holds when there is one."""
    definition = [t for c in rubric.criteria for t in (c.description, c.notes, *c.mechanical_rules)]
    restated = " ".join((*definition, *rubric.validation, *rubric.instructions, *rubric.role.constraints))
    return sum(1 for c in rubric.output.constraints if (c.prefix and c.prefix in restated) or names(restated, c.id))


def properties(rubric: Rubric) -> dict[str, bool | int | float]:
    """The 16 predicates of seed 000 section 4.1, each as the value the seed gives it."""
    r = rubric
    anchored = [c for c in author_criteria(r) if described_levels(c) >= 2]
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
        "P_economy": ECONOMY[0] <= len(author_criteria(r)) <= ECONOMY[1],
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


# Seed 000's sufficient conditions S1-S6 (section 3.2) read off the predicates, so the compiler's
# lattice, the WellFormed node and the P_* values `rubric show` prints never disagree.
SUFFICIENT: dict[str, Callable[[dict], bool]] = {
    "S1": lambda p: p["P_anchored"] == 1.0,  # every criterion has >= 2 distinct anchors (and there is one)
    "S2": lambda p: p["P_aligned"] == 1.0,  # the output template names every criterion id
    "S3": lambda p: p["P_mechanical"] > 0,  # "at least one criterion includes <mechanical_rules> or <uses_patterns>"
    "S4": lambda p: p["P_dq"] >= 1,
    "S5": lambda p: p["P_ritual"] >= 1,
    "S6": lambda p: p["P_mirror"] >= 1,
}


def _well_formed(p: dict) -> bool:
    """Seed 000: `WellFormed(R) := R in Ob(Rub) AND S1(R) AND ... AND S6(R)`."""
    return all(holds(p) for holds in SUFFICIENT.values())


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
    "WellFormed": (_well_formed, ("Stable", "Aligned", "Economic")),
}


def lattice_nodes(rubric: Rubric) -> dict[str, bool]:
    """Every node of the seed's property lattice for the rubric, bottom up (dict order)."""
    p = properties(rubric)
    held: dict[str, bool] = {}
    for node, (own, below) in LATTICE_NODES.items():
        held[node] = own(p) and all(held[b] for b in below)
    return held
