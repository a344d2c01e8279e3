"""The pairwise form of a rubric: the same criteria, each asked as "which of the two responses
meets it better: a, b or tie?" (a nominal scale whose unit score is 1 for a, 0 for b, 0.5 for a
tie). It is a rubric like any other, with a content hash of its own, so pairwise judging runs
through the scoring pipeline unchanged; the texts it judges are rendered pairs (tasks/loaders/pairs.py)."""

from __future__ import annotations

from .model import Criterion, Metadata, NominalScale, Rubric

VERDICT_SCALE = {
    "kind": "nominal",
    "categories": [
        {"value": "a", "score": 1.0, "description": "Response A meets this criterion better"},
        {"value": "b", "score": 0.0, "description": "Response B meets this criterion better"},
        {"value": "tie", "score": 0.5, "description": "neither is better by this criterion"},
    ],
}
INSTRUCTIONS = (
    "The TEXT holds two responses to the INPUT, marked [Response A] and [Response B]. For each "
    "criterion, decide which response meets it better: `a`, `b`, or `tie` when neither does. Judge "
    "what the responses say, not their order or their length; in the rationale, name what decides it.",
)


def pairwise_rubric(rubric: Rubric) -> Rubric:
    """The rubric's criteria as a/b/tie verdicts, with their patterns (signals the judge may look
    for in either response); disqualifiers, groups and goldens are left out (they describe one
    text, not a comparison)."""
    invert = rubric.scoring.invert
    criteria = [
        Criterion(
            id=c.id,
            title=c.title,
            description=_question(c, invert),
            weight=c.weight,
            importance=c.importance,
            scale=NominalScale.model_validate(VERDICT_SCALE),
            genre=c.genre,
            tags=c.tags,
            patterns=c.patterns,
        )
        for c in rubric.criteria
    ]
    m = rubric.metadata
    provenance = dict(m.provenance) | {"pairwise_of": f"{m.id}@{m.version}"}
    return Rubric(
        metadata=Metadata(
            id=f"{m.id}-pairwise",
            version=m.version,
            title=f"{m.title or m.id} (pairwise)",
            artifact_type=m.artifact_type,
            tags=m.tags + ("pairwise",),
            description=m.description,
            provenance=provenance,
        ),
        goal=f"Compare two responses: {rubric.goal}" if rubric.goal else "Compare two responses.",
        role=rubric.role,
        inputs=rubric.inputs,
        criteria=tuple(criteria),
        definitions=rubric.definitions,
        patterns=rubric.patterns,
        advice=rubric.advice,
        instructions=INSTRUCTIONS + ((RISK_NOTE,) if invert else ()) + rubric.instructions,
    )


# An inverted rubric's criteria measure risk (scoring.invert: the top anchor is the most of it), so
# the better response is the one with less: asked as "meets it better", with the top anchor as the
# best, a judge preferred the riskier response and the reward ranked the group backwards.
RISK_NOTE = (
    "The criteria measure risk: each scale's top level is the most of what it describes. The better "
    "response by a criterion is the one that shows LESS of it."
)


def _question(c: Criterion, invert: bool = False) -> str:
    """The criterion as a comparison, with what its scale says a good response is (an inverted
    rubric's: its lowest level, the least risk)."""
    best = ""
    anchors = getattr(c.scale, "anchors", None)
    if anchors:
        top = (min if invert else max)(anchors, key=lambda a: a.value)
        best = f" At its best: {top.label + ' - ' if top.label else ''}{top.description}".rstrip(" -")
    ask = "shows less of what this criterion measures" if invert else "better meets this criterion"
    return f"Which response {ask}? {c.description}{best}".strip()
