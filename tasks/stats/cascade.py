"""Choosing where a cheap judge is trusted: the threshold of a judge cascade (Jung et al., "Trust or
Escalate", ICLR 2025).

The cheap judge answers every text; the strong judge only those whose cheap confidence is below a
threshold. The threshold is chosen on a calibration sample judged by both, by fixed-sequence
testing: candidate thresholds from the strictest down, each tested for H0 "the texts kept at this
threshold disagree with the strong judge more often than 1 - target" with an exact binomial
(Clopper-Pearson) bound at level delta; the walk stops at the first one not rejected. With
probability at least 1 - delta, the texts the chosen threshold keeps agree with the strong judge
at least at the target rate (on texts drawn like the calibration sample)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scipy import stats


@dataclass
class Threshold:
    value: float  # keep the cheap answer where confidence >= value (inf: escalate everything)
    kept: int  # calibration texts kept at it
    disagreements: int  # of those, how many the strong judge answered differently
    upper_bound: float | None  # the Clopper-Pearson upper bound on their disagreement rate


def margin_confidence(expected: float, boundaries: Sequence[float]) -> float:
    """How far the cheap judge's expected score lies from the nearest score where its verdict changes
    (the pass threshold, a label's lower bound): continuous, so the threshold search can separate
    near-misses from clear calls, where a share of a few re-asks takes only a handful of values and
    leaves nothing to certify. Scores are on the unit scale, so 1.0 is the surest: with no boundary
    every answer is one verdict (never infinity, which stands for "escalate everything")."""
    return min((round(abs(expected - b), 9) for b in boundaries), default=1.0)  # 9: rubrics/scoring.py's digits


def conservative_agreement(agree: Sequence[bool | None]) -> list[bool]:
    """Calibration texts the strong judge failed to judge count as disagreements: dropping them would
    leave a sample that is easier than the texts the threshold is used on (failures come with hard
    texts), and counting them against the cheap judge keeps the guarantee."""
    return [bool(a) for a in agree]


def disagreement_bound(disagreements: int, kept: int, delta: float) -> float:
    """The one-sided (1 - delta) Clopper-Pearson upper bound on a disagreement rate."""
    if kept == 0:
        return 1.0
    if disagreements >= kept:
        return 1.0
    return float(stats.beta.ppf(1 - delta, disagreements + 1, kept - disagreements))


def choose_threshold(confidence: list[float], agree: list[bool], target: float, delta: float) -> Threshold:
    """The lowest threshold fixed-sequence testing certifies (see the module docstring)."""
    if not 0 < target < 1 or not 0 < delta < 1:
        raise ValueError("the agreement target and delta must lie strictly between 0 and 1")
    pairs = sorted(zip(confidence, agree, strict=True), key=lambda p: -p[0])
    # The sequence starts where a threshold keeps enough texts that no disagreement at all could
    # pass (fewer can never be certified, and would end the walk at once). It depends on the
    # confidences only, not on the agreements tested, so the order is fixed before testing.
    least = math.ceil(math.log(delta) / math.log(target))
    chosen = Threshold(math.inf, 0, 0, None)
    kept = disagreements = 0
    for i, (value, agreed) in enumerate(pairs):
        kept += 1
        disagreements += not agreed
        if kept < least or (i + 1 < len(pairs) and pairs[i + 1][0] == value):
            continue  # too few yet, or ties: a threshold keeps all texts of one confidence or none
        bound = disagreement_bound(disagreements, kept, delta)
        if bound > 1 - target:
            break
        chosen = Threshold(value, kept, disagreements, bound)
    return chosen
