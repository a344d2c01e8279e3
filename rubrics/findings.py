"""What each compiler finding means and a one-line YAML fix for it: `rubric validate` prints
them under every finding, so a code like S5_NO_RITUAL is never left for the reader to decode.
A test holds this table to every code the compiler emits."""

from __future__ import annotations

# code: (what it means, a one-line YAML fix)
FINDINGS: dict[str, tuple[str, str]] = {
    "N1_NO_GOAL": (
        "the judge is not told what the rubric is for",
        "goal: Judge how well a support reply solves the customer's problem.",
    ),
    "N2_NO_STRUCTURE": (
        "nothing to judge by: no criteria, decision rules or examples",
        "criteria: [{id: correct, scale: {kind: binary, labels: [wrong, right]}}]",
    ),
    "N3_NO_OUTPUT_CONTRACT": (
        "the judge's answer has no shape to be checked against",
        "criteria: [{id: correct, scale: {kind: binary, labels: [wrong, right]}}]",
    ),
    "S1_UNANCHORED": (
        "a scale's levels are bare numbers, so judges read them differently",
        "anchors: [{value: 1, description: Wrong.}, {value: 5, description: Exactly right.}]",
    ),
    "S2_SCHEMA_MISALIGNED": (
        "the output template asks for scores under other names than the criteria ids",
        "output: {template: ''}   # drop the template: the schema then follows the criteria",
    ),
    "S3_NOT_MECHANICAL": (
        "no criterion can be checked without the model (none names a pattern or has a mechanical rule)",
        "criteria: [{id: plain, title: Plain, scale: {kind: binary}, patterns: [chatty]}]   # and the pattern chatty",
    ),
    "S4_NO_DISQUALIFIERS": (
        "no hard fail: a text can pass however badly it breaks a must-not",
        "disqualifiers: [{id: leaks-pii, kind: judge, description: Reveals personal data.}]",
    ),
    "S5_NO_RITUAL": (
        "the answer has no fixed marker, so an ignored instruction goes unnoticed",
        "output: {constraints: [{id: because, field: rationale, prefix: 'BECAUSE:', severity: soft}]}",
    ),
    "S6_NOT_RESTATED": (
        "an output constraint is not repeated in the instructions, where the judge reads it",
        "validation: [\"Each rationale begins with 'BECAUSE:'.\"]",
    ),
    "W_NOMINAL_UNSCORED": (
        "a nominal scale's categories carry no score, so the criterion cannot count",
        "categories: [{value: low, score: 1.0}, {value: high, score: 0.5}]",
    ),
    "W_POINTS_IGNORED": (
        "criteria have points but the scoring method does not use them",
        "scoring: {method: points}",
    ),
    "W_REGEX_BACKTRACKING": (
        "the pattern needs backtracking (RE2 refused it): it runs on a slower engine with a timeout",
        "patterns: [{id: p, regex: '\\b(?:in summary|to sum up)\\b'}]   # no lookaround or backreference",
    ),
    "E_VERDICT": (
        "a decision rule or mapping example gives a verdict outside the rubric's verdict space",
        "verdicts: [{label: 'Yes'}, {label: Somewhat}, {label: 'No'}]   # or use one of these in the rule",
    ),
    "E_TEMPLATE": (
        "the JSON output template is not JSON: the judge would be told to answer in a broken shape",
        'output: {template: \'{"score": 0, "rationale": ""}\'}   # valid JSON, or drop the template',
    ),
    "W_WAZA_NO_VERDICT_TOOLS": (
        "a waza body does not end with the set_waza_grade_pass / set_waza_grade_fail instructions: the judge "
        "is not told how to give its verdict (seed 004)",
        'instructions: ["... When the response passes, call `set_waza_grade_pass`; otherwise call '
        '`set_waza_grade_fail` with the reason."]',
    ),
    "W_ECONOMY": (
        "criteria outside the seed framework's 3-7: too many blur together, too few judge one facet only",
        "criteria: [...]   # merge overlapping criteria or split the rubric; add facets to a narrow one",
    ),
    "W_FLAGGED_LEAVES": (
        "more than 20% of the tree's leaves carry audit flags (flag: tags): regenerate the rubric",
        "tags: []   # drop a leaf's flag: tags once its rationale is fixed, or regenerate the tree",
    ),
    "W_UNDESCRIBED": (
        "a criterion has neither title nor description: the judge sees only its id",
        "description: The reply's technical content is right.",
    ),
    "W_UNUSED_PATTERN": (
        "a pattern no criterion, disqualifier or advice rule uses is counted for nothing",
        "patterns: [p1]   # under the criterion that it should count for",
    ),
    "E_CONSTRAINT_SCOPE": (
        "a judgment-scoped output constraint on a field that is not a criterion's (rationale, evidence)",
        "- {id: because, field: rationale, prefix: 'BECAUSE:', scope: judgment}",
    ),
    "E_DUPLICATE_ID": ("two criteria, groups or patterns share an id", "- id: tone-2   # every id unique"),
    "E_EMPTY_CALL_UNIT": (
        "every criterion is limited to genres, so a text of another genre is judged on nothing",
        "- id: correct   # leave at least one criterion without `genre:`",
    ),
    "E_EXAMPLE_SCORE": (
        "an example's score is not a value of its criterion's scale",
        "examples: [{score: 5, text: Exact steps given.}]   # a value the scale has",
    ),
    "E_GOLDEN_SCORE": (
        "a golden expects a score its criterion's scale lacks, or names a criterion the rubric lacks",
        "expected_scores: {correct: 5}   # an existing criterion, a value of its scale",
    ),
    "E_LABELS": (
        "two score labels share a lower bound, so a score between them has two labels",
        "labels: [{label: good, min: 0.7}, {label: poor, min: 0.0}]   # each min different",
    ),
    "E_NO_CRITERIA": (
        "scoring needs criteria; decision rules or a template alone score nothing",
        "criteria: [{id: correct, scale: {kind: binary, labels: [wrong, right]}}]",
    ),
    "E_GUIDANCE_ONLY": (
        "a constraint-profile rubric (a mission and examples, no criteria) is in-context guidance, not a scorer",
        "criteria: [{id: complete, scale: {kind: binary, labels: [no, yes]}}]   # or: rubricflow rubric guidance",
    ),
    "E_POINTS": ("method 'points' but no criterion has positive points", "points: 5   # on a criterion"),
    "E_REGEX": ("a pattern does not compile", "regex: '\\bfoo\\b'   # single quotes keep backslashes"),
    "E_TREE": ("the groups do not form a tree (a cycle, or a node with two parents)", "children: [a, b]"),
    "E_UNKNOWN_CHILD": ("a group names a child that is neither a criterion nor a group", "children: [correct]"),
    "E_UNKNOWN_CRITERION": (
        "a disqualifier or rule names a criterion the rubric lacks",
        "criterion: correct   # an id under criteria",
    ),
    "E_UNKNOWN_PATTERN": (
        "a criterion, disqualifier or advice rule names a pattern the rubric lacks",
        "patterns: [{id: blame, regex: '\\byou failed to\\b'}]",
    ),
    "E_UNKNOWN_ROOT": ("scoring.root names no group", "scoring: {root: overall}   # an id under groups"),
    "E_ZERO_WEIGHTS": (
        "every criterion has weight 0, so the weighted score is undefined",
        "weight: 1   # on a criterion",
    ),
}

FALLBACK = ("see docs/rubrics.md", "")


def explain(code: str) -> tuple[str, str]:
    """What a finding's code means and a one-line YAML fix."""
    return FINDINGS.get(code, FALLBACK)
