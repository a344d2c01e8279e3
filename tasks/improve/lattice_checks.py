"""The lattice properties seed 000 makes mechanical (section 4.1's predicates: P_anchored, P_aligned,
P_mechanical, P_dq, P_ritual, P_mirror, P_economy), measured from the rubric itself on the validators'
0-3 levels. `rubric refine` reads these instead of asking a model: a count or a fraction needs no
opinion, and a small model's judgment of one is noise (Gemma 3 270M gave the weak rubric's economy
what its anchors say of a good one). Only the mission, which the seed's predicate reduces to "non-empty",
stays with its validator rubric."""

from __future__ import annotations

from collections.abc import Callable

from rubricflow.rubrics.model import Rubric
from rubricflow.rubrics.properties import ECONOMY, author_criteria, described_levels, properties


def _fraction_level(done: int, of: int) -> int:
    """None of `of` -> 0, under half -> 1, half or more -> 2, all -> 3."""
    if of == 0 or done == 0:
        return 0
    return 3 if done == of else 2 if 2 * done >= of else 1


def anchors(r: Rubric) -> tuple[int, str]:
    criteria = author_criteria(r)  # not the verdict a rubric of decision rules asks
    done = sum(1 for c in criteria if described_levels(c) >= 2)
    return _fraction_level(done, len(criteria)), f"{done} of {len(criteria)} criteria have >= 2 described levels"


def schema(r: Rubric) -> tuple[int, str]:
    aligned = properties(r)["P_aligned"]
    level = 0 if not r.criteria else 3 if aligned == 1.0 else 2 if aligned >= 0.5 else 1
    return level, f"the output names {aligned:.0%} of the criterion ids"


def mechanical(r: Rubric) -> tuple[int, str]:
    using = [c.id for c in r.criteria if c.patterns]
    ruled = [c.id for c in r.criteria if c.mechanical_rules]
    share = properties(r)["P_mechanical"]  # the seed's Detection profile asks >= 0.8
    level = 3 if (using and ruled) or share >= 0.8 else 2 if using or ruled else 1 if r.patterns else 0
    return level, f"{len(r.patterns)} patterns; criteria using one: {len(using)}; with mechanical rules: {len(ruled)}"


def disqualifiers(r: Rubric) -> tuple[int, str]:
    precise = sum(1 for d in r.disqualifiers if d.kind in ("pattern", "criterion"))
    level = max(_fraction_level(precise, len(r.disqualifiers)), 1) if r.disqualifiers else 0  # judge-declared: vague
    return level, f"{len(r.disqualifiers)} disqualifiers, {precise} firing on a pattern or a criterion floor"


def ritual(r: Rubric) -> tuple[int, str]:
    prefixed = any(c.prefix for c in r.output.constraints)
    capped = any(c.max_words is not None for c in r.output.constraints)
    n = properties(r)["P_ritual"]
    level = 3 if prefixed and capped else 2 if n else 1 if r.validation else 0
    return level, f"{n} ritual output constraints (prefix: {prefixed}, word cap: {capped})"


def mirror(r: Rubric) -> tuple[int, str]:
    n, of = properties(r)["P_mirror"], len(r.output.constraints)
    level = 0 if not of else 3 if n == of else 2 if n else 1
    return level, f"{n} of {of} output constraints restated in validation or instructions"


def economy(r: Rubric) -> tuple[int, str]:
    n = len(author_criteria(r))
    low, high = ECONOMY
    level = 3 if low <= n <= high else 2 if 0 < n < low or n <= high + 2 else 1 if n <= high + 4 else 0
    return level, f"{n} criteria ({low} to {high} recommended)"


CHECKS: dict[str, Callable[[Rubric], tuple[int, str]]] = {
    "anchors": anchors,
    "schema": schema,
    "mechanical": mechanical,
    "disqualifiers": disqualifiers,
    "ritual": ritual,
    "mirror": mirror,
    "economy": economy,
}
