"""The seed framework's property lattice as rubrics: one small validator rubric per property (mission,
anchors, schema alignment, mechanical, disqualifiers, ritual, mirror, economy), each a single
criterion with the seed's 0-3 anchors and the patterns a judge can check mechanically in the
rubric's YAML. Because each validator is an ordinary rubric, it is compiled, hashed, judged through
the hardened client and recorded like any other; the meta-evaluation is their composition."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from rubricflow.errors import InputError
from rubricflow.rubrics.compiler import Bundle, compile_or_raise
from rubricflow.rubrics.documents import rubric_from_data

LEVELS = 3  # the seed's validators score 0..3


@dataclass(frozen=True)
class Property:
    id: str
    title: str
    question: str
    anchors: tuple[str, str, str, str]  # levels 0..3, as the seed's MissionValidator writes them
    good: tuple[tuple[str, str], ...] = ()  # (id, regex) a well-formed rubric's YAML matches
    bad: tuple[tuple[str, str, str], ...] = ()  # (id, regex, advice) a flaw the YAML shows
    primitive: str = ""  # the seed's instruction primitive that teaches this property
    ops: tuple[str, ...] = ()  # the refine mutations aimed at it (tasks/improve/refine_ops.py)


# The criteria list of a YAML dump: items start "- ", their lines "  "; the next top-level key ends it.
_CRITERIA_3_TO_7 = r"(?m)^criteria:\n(?:- [^\n]*\n(?:  [^\n]*\n)*){3,7}[a-z]"
_CRITERIA_8_PLUS = r"(?m)^criteria:\n(?:- [^\n]*\n(?:  [^\n]*\n)*){8}"

PROPERTIES: tuple[Property, ...] = (
    Property(
        "mission",
        "Mission specification",
        "Does the rubric state one precise, scoped mission: the domain judged and the output given?",
        (
            "No mission or mission is vague imperative ('OBEY').",  # seed 000's MissionValidator, word for word
            "Mission exists but is generic ('evaluate text').",
            "Mission specifies domain and evaluation type.",
            "Mission is precise, scoped, and actionable.",
        ),
        good=(("scoped-goal", r"(?m)^goal: [^\n]{60,}"),),
        bad=(
            (
                "generic-goal",
                r"(?mi)^goal: '?(?:rate|evaluate|judge|score|assess|grade|review) (?:the |this |a )?\w+\.?'?$",
                "State the mission in one sentence naming the domain, what is judged and the output.",
            ),
        ),
        primitive="Every rubric MUST state its mission (`goal`) in a single sentence that names the "
        "evaluation domain and output type.",
        ops=("set_goal",),
    ),
    Property(
        "anchors",
        "Anchored criteria",
        "Does every criterion have at least two distinct, observable anchors for its levels?",
        (
            "No criterion has described anchors.",
            "A few criteria have anchors.",
            "Most criteria have described anchors.",
            "Every criterion has >= 2 distinct, observable anchors.",
        ),
        good=(("described-anchor", r"(?m)^\s*- value: -?\d+\n\s+(?:label|description): "),),
        bad=(
            ("numeric-scale", r"(?m)^\s+kind: numeric$", "Replace a bare number range with anchored levels."),
            ("bare-anchor", r"(?m)^\s*- value: -?\d+\n\s*- value:", "Describe what a text at each level looks like."),
        ),
        primitive="Each criterion MUST have >= 2 anchors (an ordinal scale with a description for every "
        "level, or a binary scale with labels) with observable, non-subjective descriptions.",
        ops=("rewrite_criterion",),
    ),
    Property(
        "schema",
        "Schema alignment",
        "Does each criterion map to one output field (one criterion id, one score), with no drifting template?",
        (
            "No criteria or output fields to align.",
            "The output template names fields no criterion defines.",
            "Most criteria map to an output field.",
            "One criterion, one id, one output field, for every criterion.",
        ),
        good=(("criterion-ids", r"(?m)^\s*- id: \S+"),),
        bad=(("free-template", r"(?m)^\s+template: ", "Let the criteria ids define the output fields."),),
        primitive="The output must contain one field per criterion id; do not write a free-form template "
        "that names fields the criteria do not define.",
        ops=("rewrite_criterion", "remove_criterion"),
    ),
    Property(
        "mechanical",
        "Mechanical checkability",
        "Do criteria carry patterns or mechanical rules a judge can verify without opinion?",
        (
            "Nothing is mechanically checkable.",
            "Patterns or rules exist but no criterion uses them.",
            "Some criteria use patterns or mechanical rules.",
            "Criteria name patterns and mechanical rules the judge can check.",
        ),
        good=(("pattern-library", r"(?m)^patterns:"), ("mechanical-rules", r"(?m)^\s+mechanical_rules:")),
        primitive="At least one criterion should include mechanical_rules or patterns with concrete, "
        "regex-checkable or keyword-checkable conditions.",
        ops=("add_pattern", "rewrite_criterion"),
    ),
    Property(
        "disqualifiers",
        "Disqualifier completeness",
        "Are the major failure modes binary disqualifiers, precise about when they fire?",
        (
            "No disqualifiers.",
            "Disqualifiers are vague.",
            "Some failure modes are disqualifiers.",
            "Major failure modes are precise, binary disqualifiers.",
        ),
        good=(
            ("disqualifier-list", r"(?m)^disqualifiers:"),
            ("precise-trigger", r"(?m)^\s+kind: (?:pattern|criterion)$"),
        ),
        primitive="Define at least 1 disqualifier for auto-fail conditions; disqualifiers are binary "
        "(fire or don't) and name a pattern or a criterion floor.",
        ops=("add_disqualifier",),
    ),
    Property(
        "ritual",
        "Ritual uniqueness",
        "Does the output carry a 'useful weirdness' constraint: a fixed prefix, a word cap?",
        (
            "No ritual constraint.",
            "A format is asked for in prose only.",
            "One ritual constraint.",
            "A fixed prefix and a word cap pin the output.",
        ),
        good=(("ritual-prefix", r"(?m)^\s+prefix: "), ("word-cap", r"(?m)^\s+max_words: ")),
        primitive="Include at least one 'useful weirdness' constraint in the output: a fixed prefix "
        "(e.g. 'BECAUSE:') and a word count.",
        ops=("add_output_constraint",),
    ),
    Property(
        "mirror",
        "Policy mirroring",
        "Are critical constraints stated in at least two places (definition and validation)?",
        (
            "No constraint is restated.",
            "Constraints are stated once.",
            "Some constraints are restated.",
            "Every critical output constraint is restated in validation.",
        ),
        good=(
            ("validation-list", r"(?m)^validation:"),
            ("restated-prefix", r"(?m)^validation:\n(?:- [^\n]*\n)*- [^\n]*BECAUSE"),
        ),
        primitive="State critical constraints in at least 2 locations: the output constraints AND the validation list.",
        ops=("add_output_constraint", "add_validation"),
    ),
    Property(
        "economy",
        "Economy",
        "Are there 3 to 7 criteria, none scoring what another scores?",
        (
            "Far too many or overlapping criteria.",
            "Too many criteria, some overlapping.",
            "A few criteria too many, or one overlap.",
            "3 to 7 distinct criteria.",
        ),
        good=(("three-to-seven", _CRITERIA_3_TO_7),),
        bad=(("eight-or-more", _CRITERIA_8_PLUS, "Merge overlapping criteria until 3 to 7 remain."),),
        primitive="Define 3 to 7 criteria; merge criteria that score the same property.",
        ops=("merge_criteria", "remove_criterion"),
    ),
)
BY_ID = {p.id: p for p in PROPERTIES}


def chosen(names: str | None) -> tuple[str, ...]:
    """The properties named (comma-separated), in lattice order; all of them for None."""
    if not names:
        return tuple(BY_ID)
    wanted = {n.strip() for n in names.split(",") if n.strip()}
    unknown = sorted(wanted - set(BY_ID))
    if unknown or not wanted:
        raise InputError(
            f"--properties: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(BY_ID)}"
        )
    return tuple(p for p in BY_ID if p in wanted)


def validator_data(prop: Property) -> dict:
    """The validator rubric as a native document: one criterion, the property's patterns; a flaw
    pattern is tied to advice (a judge counts it against the criterion, and the advice says how to fix it)."""
    patterns = [{"id": pid, "regex": rx} for pid, rx in prop.good]
    patterns += [{"id": pid, "regex": rx} for pid, rx, _ in prop.bad]
    return {
        "metadata": {
            "id": f"lattice-{prop.id}",
            "version": "1.0.0",
            "title": f"Lattice property: {prop.title}",
            "artifact_type": "rubric",
            "tags": ["meta", "lattice", prop.id],
        },
        "goal": f"Judge one property of a rubric given as its YAML document: {prop.question}",
        "instructions": ["The text under review is a rubric document; judge the rubric, not the topic it scores."],
        "criteria": [
            {
                "id": prop.id,
                "title": prop.title,
                "description": prop.question,
                "scale": {
                    "kind": "ordinal",
                    "anchors": [{"value": i, "description": text} for i, text in enumerate(prop.anchors)],
                },
                "patterns": [p["id"] for p in patterns],
            }
        ],
        "patterns": patterns,
        "advice": [{"when": [pid], "advice": advice} for pid, _, advice in prop.bad],
    }


@cache
def validator(property_id: str) -> Bundle:
    """The compiled validator rubric of one lattice property."""
    prop = BY_ID[property_id]
    return compile_or_raise(rubric_from_data(validator_data(prop), f"lattice-{prop.id}"), f"lattice-{prop.id}")
