"""Agreement statistics between two raters' scores, per criterion, with scipy (not hand-rolled)."""

from __future__ import annotations

from dataclasses import dataclass

from scipy import stats


@dataclass(frozen=True)
class Correlation:
    criterion_id: str
    n: int
    pearson: float
    spearman: float
    kendall_tau_b: float


def correlations(pairs: list[tuple[str, str, float, float]]) -> list[Correlation]:
    """pairs: (criterion_id, text_id, a_score, b_score), pooled over texts (sample level)."""
    by_criterion: dict[str, tuple[list[float], list[float]]] = {}
    for criterion, _, a, b in pairs:
        xs, ys = by_criterion.setdefault(criterion, ([], []))
        xs.append(a)
        ys.append(b)
    out = []
    for criterion, (xs, ys) in sorted(by_criterion.items()):
        out.append(Correlation(
            criterion, len(xs),
            float(stats.pearsonr(xs, ys).statistic),
            float(stats.spearmanr(xs, ys).statistic),
            float(stats.kendalltau(xs, ys, variant="b").statistic),
        ))
    return out
