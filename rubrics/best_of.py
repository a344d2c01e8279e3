"""The best-of-n form of a rubric: n candidate responses judged in ONE call. OpenAI Evals' best-of-n
graders (`choice_strings: from_n`, one `{completion}` slot the samples fill: `best.yaml`) ask one
question of all candidates at once, "which of these {n} is best?"; judging them as pairs would ask
n(n-1) questions instead, each without the other candidates in view. The form has one criterion per
candidate (`response-1` ... `response-n`: how well that response meets the rubric, 1-5) and one
`winner` (a choice of 1..n, weight 0: it names the best, the candidates' scores make the text's
score). It is a rubric like any other, so it runs through the scoring pipeline unchanged; the texts
it judges are rendered candidate sets (tasks/loaders/candidates.py), and the `best_of_candidates`
view reads one row per candidate back, with the winner marked."""

from __future__ import annotations

from rubricflow.errors import InputError

from .importers.evals import PAIR_NOTE
from .model import Criterion, Metadata, NominalScale, OrdinalScale, Rubric

WINNER = "winner"
QUALITY_SCALE = {
    "kind": "ordinal",
    "anchors": [
        {"value": 1, "label": "poor", "description": "meets none of the rubric's criteria"},
        {"value": 3, "label": "adequate", "description": "meets some criteria, misses others"},
        {"value": 5, "label": "excellent", "description": "meets every criterion fully"},
    ],
}

# An inverted rubric's criteria measure risk (the top of each scale is the most of it): a candidate is
# better the less of it it shows. Asked how well it "meets every criterion", a judge ranked the group
# backwards (the pairwise form says so too: rubrics/pairwise.py RISK_NOTE).
RISK_QUALITY_SCALE = {
    "kind": "ordinal",
    "anchors": [
        {"value": 1, "label": "poor", "description": "shows much of what the rubric's criteria measure"},
        {"value": 3, "label": "adequate", "description": "shows some of it"},
        {"value": 5, "label": "excellent", "description": "shows none of it"},
    ],
}


def candidate_id(i: int) -> str:
    """The criterion of the i-th candidate (1-based), as the view and the offline judge read it."""
    return f"response-{i}"


def best_of_rubric(rubric: Rubric, n: int) -> Rubric:
    """The rubric asked of n candidates at once: one judgment per candidate, and the winner."""
    if n < 2:
        raise InputError(f"best-of-n needs at least 2 candidates per set, found {n}")
    asked = "the rubric's criteria, listed in the instructions"
    criteria_once: tuple[str, ...] = (_criteria_line(rubric),)  # stated once, not in each of the n criteria
    if "best_of_n" in rubric.metadata.provenance:  # a grader that only picks (Evals' from_n): its prompt is the rubric
        asked, criteria_once = "the rubric (as the grader prompt above asks)", ()
    patterns = tuple(dict.fromkeys(p for c in rubric.criteria for p in c.patterns))
    risk = rubric.scoring.invert  # its criteria measure risk: a candidate is judged on how little it shows
    criteria = [
        Criterion(
            id=candidate_id(i),
            title=f"Response {i}",
            description=f"How well [Response {i}] {'does on' if risk else 'meets'} {asked}, judged beside the others.",
            scale=OrdinalScale.model_validate(RISK_QUALITY_SCALE if risk else QUALITY_SCALE),
            patterns=patterns,
        )
        for i in range(1, n + 1)
    ]
    criteria.append(
        Criterion(
            id=WINNER,
            title="Best response",
            description=f"The number of the best of the {n} responses.",
            scale=NominalScale.model_validate(
                {
                    "kind": "nominal",
                    "categories": [
                        {"value": str(i), "score": 1.0, "description": f"Response {i}"} for i in range(1, n + 1)
                    ],
                }
            ),
            weight=0.0,
        )
    )
    m = rubric.metadata
    provenance = dict(m.provenance) | {"best_of": f"{m.id}@{m.version}", "best_of_n": str(n)}
    return Rubric(
        metadata=Metadata(
            id=f"{m.id}-best-of-{n}",
            version=m.version,
            title=f"{m.title or m.id} (best of {n})",
            artifact_type=m.artifact_type,
            tags=m.tags + ("best-of-n",),
            description=m.description,
            provenance=provenance,
        ),
        goal=f"Compare {n} responses and pick the best: {rubric.goal}".rstrip(": "),
        role=rubric.role,
        inputs=rubric.inputs,
        criteria=tuple(criteria),
        definitions=rubric.definitions,
        patterns=rubric.patterns,
        advice=rubric.advice,  # which patterns count against a response (the pairwise form keeps them too)
        instructions=(_instruction(n),)
        + criteria_once
        + tuple(i for i in rubric.instructions if not i.startswith(PAIR_NOTE)),
    )


def _criteria_line(rubric: Rubric) -> str:
    """The rubric's criteria, each response's yardstick, in one instruction: repeated in each of the n
    candidate criteria they made a fifth of a group call's prompt (llm-slop's best of 8: 8.6k
    characters, 6.9k with them once), and a real judge pays each repeat in tokens."""
    asked = "; ".join(f"{c.title or c.id}: {c.description}".strip(": ") for c in rubric.criteria)
    if rubric.scoring.invert:
        return f"The rubric's criteria measure risk: a response is better the less it shows of each: {asked}"
    return f"The rubric's criteria, on which each response is judged: {asked}"


def _instruction(n: int) -> str:
    return (
        f"The TEXT holds {n} responses to the INPUT, marked [Response 1] to [Response {n}] ({{n}} is {n}; "
        "a grader's {completion} slot is all of them). Judge each response on its own criterion, "
        "comparing it with the others, then name the best one as `winner` (its number). Judge what the "
        "responses say, not their order or their length."
    )
