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
    criteria = [
        Criterion(
            id=c.id,
            title=c.title,
            description=_question(c),
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
        instructions=INSTRUCTIONS + rubric.instructions,
    )


def _question(c: Criterion) -> str:
    """The criterion as a comparison, with what its scale says a good response is."""
    best = ""
    anchors = getattr(c.scale, "anchors", None)
    if anchors:
        top = max(anchors, key=lambda a: a.value)
        best = f" At its best: {top.label + ' - ' if top.label else ''}{top.description}".rstrip(" -")
    return f"Which response better meets this criterion? {c.description}{best}".strip()
