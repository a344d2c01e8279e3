"""The seed framework's instruction primitives (one per lattice property, worded for rubricflow's native
format) and the generators composed from them, one per rubric kind: scoring, detection, compliance
and constraint. `rubric generate --kind` puts a kind's composition in the drafting prompt and holds
the draft to the kind's profile."""

from __future__ import annotations

from rubricflow.errors import InputError

PRIMITIVES: dict[str, str] = {
    "mission": "State the mission in `goal`: a single sentence that names the evaluation domain and output type.",
    "criteria_structure": "Define 3 to 5 criteria, each with an `id` (C1, C2, ...), a `title` and a `weight`. "
    "Each criterion MUST have >= 2 anchors with observable, "
    "non-subjective descriptions: an ordinal scale with a description for every level, or a binary scale with labels.",
    "disqualifiers": "Define at least 1 disqualifier for auto-fail conditions (kind `pattern` or `criterion`). "
    "Disqualifiers are binary (fire or don't); do not use soft penalties for major violations.",
    "output_schema": "The output has one field per criterion id (rubricflow derives the JSON schema from the "
    "criteria); do not write a free-form `output.template` naming other fields.",
    "scoring": "Set `scoring`: how criterion scores combine (`method`, `formula` in words) and `labels` "
    "mapping score ranges to human-readable classifications.",
    "mechanical": "At least one criterion should include `mechanical_rules` or name `patterns` with concrete, "
    "regex-checkable or keyword-checkable conditions.",
    "ritual": "Include at least one 'useful weirdness' constraint in the output schema: a fixed prefix "
    "(e.g., 'BECAUSE:'), word count, or key order requirement (an `output.constraints` entry with `prefix` or "
    "`max_words`, or `surface.enforce_key_order: true`).",
    "mirror": "State critical constraints in at least 2 locations: rubric definition AND output schema. If criteria "
    "demand a format, the output_schema must also demand that format (the criterion's description and an "
    "`output.constraints` entry; `validation` may restate it too).",
    "pattern_library": "Include a `patterns` library of named regular expressions or word lists; each criterion "
    "names the patterns it uses.",
    "inverted": "Scoring is INVERTED: higher score = cleaner. Anchor every criterion so its top level is the clean "
    "one (no hits), and state the risk as the score's complement in `scoring.formula` (`risk = 1 - score`), with "
    "`labels` as risk bands (the cleanest at the highest score). Leave `scoring.invert` false: it reports "
    "1 - aggregate, for criteria whose top level is the most hits.",
    "advice": "Include `advice` rules mapping pattern ids to concrete fix instructions.",
    "definitions": "Include `definitions` for key terms (e.g. COMPLY, REFUSAL, SOFT_REFUSAL).",
    "decision_logic": "Include `decision_rules` R1, R2, ... (each `{id, condition, verdict}`) that map criterion "
    "values to verdicts (Yes/Somewhat/No or Pass/Partial/Fail), and the verdict space as `verdicts` (e.g. "
    "`[{label: Yes, score: 1.0}, {label: Somewhat, score: 0.5}, {label: No, score: 0.0}]`).",
    "xml_output": "Output schema should use XML tags, not JSON. Write an `output.template` of XML tags (e.g. "
    "`<Rationale>...</Rationale><Judgement>Yes|Somewhat|No</Judgement>`) and the note `must_use_xml_tags: true` "
    "in `output.notes`.",
    "mapping_examples": "Include at least 3 `mapping_examples` (`{id: E1, input, output, verdict}`): an input "
    "scenario, an output and the verdict the decision rules give it (one of `verdicts`).",
    "instructions": "Give no criteria: state the constraints as `instructions` the output must follow.",
    "icl_example": "Include at least 1 `mapping_examples` entry (`{id: E1, input, output, verdict: ok}`) showing an "
    "output that follows the instructions.",
}

KINDS: dict[str, tuple[str, ...]] = {
    "scoring": (
        "mission",
        "criteria_structure",
        "disqualifiers",
        "output_schema",
        "scoring",
        "mechanical",
        "ritual",
        "mirror",
    ),
    "detection": (
        "mission",
        "criteria_structure",
        "disqualifiers",
        "output_schema",
        "scoring",
        "pattern_library",
        "inverted",
        "advice",
        "ritual",
        "mirror",
    ),
    "compliance": (
        "mission",
        "criteria_structure",
        "disqualifiers",
        "definitions",
        "decision_logic",
        "xml_output",
        "mapping_examples",
        "ritual",
    ),
    "constraint": ("mission", "instructions", "icl_example", "ritual", "mirror"),
}


def compose(kind: str) -> str:
    """The kind's generator: its primitives, numbered, in the seed's order."""
    if kind not in KINDS:
        raise InputError(f"unknown rubric kind {kind!r}; choose one of {', '.join(KINDS)}")
    steps = "\n".join(f"{n}. {PRIMITIVES[p]}" for n, p in enumerate(KINDS[kind], 1))
    return f"Rubric kind: {kind}. Follow these rules (they take precedence over the above):\n{steps}"
