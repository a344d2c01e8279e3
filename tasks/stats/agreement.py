"""Agreement statistics between raters, per criterion: scipy, statsmodels and the krippendorff
package do the statistics; this module only arranges the data for them."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats


def bootstrap_mean_ci(
    values, counts, resamples: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile interval of the mean of a sample given as distinct values and their counts.

    Drawing n rows with replacement is the same as drawing multinomial counts over the distinct
    values, so the paired bootstrap over millions of deltas costs resamples x distinct values.
    The values are sorted first: the seeded draw depends on their order, and SQL hands them over
    in whatever order its hash aggregate ends in, so the same data gave different intervals.
    Values equal to 8 decimals are one value: scores are stored to 9, so the deltas of one score
    change differ by 1e-9 (-0.166666667, -0.166666666), and split in two they drew other resamples;
    the means are kept to 7 (deltas that cancel gave -6.6e-11, an interval "below 0" the gate read
    as a significant drop)."""
    values, which = np.unique(np.round(np.asarray(values, dtype=float), 8), return_inverse=True)
    counts = np.bincount(which.ravel(), weights=np.asarray(counts, dtype=float)).astype(np.int64)
    n = int(counts.sum())
    if n < 2:
        return None
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    chunk = max(1, 20_000_000 // max(1, len(values)))  # bound memory: chunk x distinct values counts
    for start in range(0, resamples, chunk):
        draws = rng.multinomial(n, counts / n, size=min(chunk, resamples - start))
        means[start : start + len(draws)] = draws @ values / n
    means = np.round(means, 7)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return float(lo) + 0.0, float(hi) + 0.0  # -0.0 as 0.0


def categories(scores, step: float = 1.0) -> np.ndarray:
    """Scores as integer category codes: averaged ratings round to the nearest category, halves
    up (1.5 -> 2, 2.5 -> 3), never to even, which would fold two half-point levels into one."""
    return np.floor(np.asarray(scores, dtype=float) / step + 0.5).astype(int)


def confusion(a_codes, b_codes) -> tuple[list[int], np.ndarray]:
    """The contingency table of two raters over the full range of codes (kappa weights need it)."""
    a_codes, b_codes = np.asarray(a_codes), np.asarray(b_codes)
    levels = list(range(int(min(a_codes.min(), b_codes.min())), int(max(a_codes.max(), b_codes.max())) + 1))
    table = np.zeros((len(levels), len(levels)), dtype=int)
    np.add.at(table, (a_codes - levels[0], b_codes - levels[0]), 1)
    return levels, table


def kappas(a_codes, b_codes) -> tuple[float, float]:
    """(Cohen's kappa, quadratic weighted kappa) of two raters' category codes (statsmodels)."""
    _, table = confusion(a_codes, b_codes)
    if len(table) < 2:
        return float("nan"), float("nan")
    from statsmodels.stats import (
        inter_rater,  # imported when used: it starts threads, and the warm worker forks with none alive
    )

    with (
        warnings.catch_warnings()
    ):  # statsmodels' z statistic divides by 0 for a constant rater; kappa is still defined
        warnings.simplefilter("ignore", RuntimeWarning)
        return (
            _zeroed(float(inter_rater.cohens_kappa(table).kappa)),
            _zeroed(float(inter_rater.cohens_kappa(table, wt="quadratic").kappa)),
        )


def _zeroed(value: float) -> float:
    """Rounding noise around 0 (-2e-16 for a constant rater) as 0.0, never printed as "-0.000"."""
    return 0.0 if abs(value) < 1e-12 else value


def fleiss(codes_by_rater: np.ndarray) -> float:
    """Fleiss' kappa over texts x raters codes (every rater rated every text)."""
    from statsmodels.stats import (
        inter_rater,  # imported when used: it starts threads, and the warm worker forks with none alive
    )

    table, _ = inter_rater.aggregate_raters(codes_by_rater)
    return float(inter_rater.fleiss_kappa(table))


def alpha(data_by_rater, level: Literal["nominal", "ordinal", "interval", "ratio"] = "ordinal") -> float:
    """Krippendorff's alpha over raters x texts (NaN = not rated); NaN where it is undefined (one
    value in all the ratings, or no text rated by two raters: `alpha_undefined` says which)."""
    import krippendorff  # imported when used, like statsmodels

    if alpha_undefined(data_by_rater):
        return float("nan")
    return float(
        krippendorff.alpha(reliability_data=np.asarray(data_by_rater, dtype=float), level_of_measurement=level)
    )


def alpha_undefined(data_by_rater) -> str:
    """Why Krippendorff's alpha is undefined for these ratings ("" where it is defined): the
    package raised, and one such criterion cost the whole calibration its figures."""
    data = np.asarray(data_by_rater, dtype=float)
    if not ((~np.isnan(data)).sum(axis=0) >= 2).any():
        return "no text was rated by two of them"
    if len(np.unique(data[~np.isnan(data)])) < 2:
        return "every rating is the same"
    return ""


@dataclass(frozen=True)
class RaterAgreement:
    """One criterion: a judge against the human consensus, and the humans among themselves."""

    criterion_id: str
    n: int
    pearson: float
    spearman: float
    kendall_tau_b: float
    cohen_kappa: float
    qwk: float
    levels: list[int]
    confusion: list[list[int]]  # rows: judge's category, columns: the humans' consensus category
    humans: int
    fleiss_kappa: float | None  # humans among themselves (needs >= 2 humans rating every text)
    alpha_humans: float | None  # Krippendorff's alpha (ordinal), humans only
    alpha_with_judge: float | None  # ... with the judge as one more rater
    human_pearson: float | None  # baseline: each human vs the mean of the others, averaged
    human_qwk: float | None
    judge_scores: tuple[float, ...] = ()  # the paired scores themselves, for the report's scatter
    human_scores: tuple[float, ...] = ()
    fleiss_texts: int | None = None  # Fleiss' kappa counts only the texts EVERY human rated: how many
    note: str = ""  # why a statistic is undefined (constant scores)


MIN_CORRELATION_TEXTS = 3


@np.errstate(all="ignore")
def rater_agreement(
    scores: dict[str, dict[str, dict[str, float]]], judge: str, humans: list[str], step: float = 1.0
) -> list[RaterAgreement]:
    """scores[criterion][rater][text_id]. The consensus is the mean of the humans who rated a text;
    kappas and confusion matrices use categories of width `step`."""
    out = []
    warnings.simplefilter("ignore", stats.ConstantInputWarning)  # constant scores: the statistic is nan, said as such
    for criterion, by_rater in sorted(scores.items()):
        people = [h for h in humans if h in by_rater]
        if judge not in by_rater or not people:
            continue
        texts = sorted(t for t in by_rater[judge] if any(t in by_rater[h] for h in people))
        if len(texts) < 2:  # said by the caller (`unpaired`): a criterion with one text has no statistic
            continue
        grid = np.array([[by_rater[h].get(t, np.nan) for t in texts] for h in people])  # humans x texts
        consensus = np.nanmean(grid, axis=0)
        j = np.array([by_rater[judge][t] for t in texts])
        jc, hc = categories(j, step), categories(consensus, step)
        cohen, qwk = kappas(jc, hc)
        levels, table = confusion(jc, hc)
        full = ~np.isnan(grid).any(axis=0)
        many = len(people) >= 2
        few, note = len(texts) < MIN_CORRELATION_TEXTS, _why_undefined(judge, j, consensus)
        baseline: tuple[float | None, float | None] = (None, None)
        if many:
            *baseline, unknown = _human_baseline(grid, step)  # type: ignore[assignment]
            note = "; ".join(n for n in (note, unknown, _alpha_note(grid, j)) if n)
        out.append(
            RaterAgreement(
                criterion,
                len(texts),
                np.nan if few else float(stats.pearsonr(j, consensus).statistic),
                np.nan if few else float(stats.spearmanr(j, consensus).statistic),
                np.nan if few else float(stats.kendalltau(j, consensus, variant="b").statistic),
                cohen,
                qwk,
                levels,
                table.tolist(),
                len(people),
                fleiss(categories(grid[:, full].T, step)) if many and full.sum() > 1 else None,
                alpha(grid) if many else None,
                alpha(np.vstack([grid, j])) if many else None,
                *baseline,
                tuple(j.tolist()),
                tuple(consensus.tolist()),
                int(full.sum()) if many else None,
                note,
            )
        )
    return out


def _why_undefined(judge: str, j: np.ndarray, consensus: np.ndarray) -> str:
    """Why a statistic is n/a: too few texts (two points lie on a line: r = +/-1 whatever the
    agreement), or a rater who gave every text the same score."""
    said = (
        [f"{len(j)} texts: correlations need {MIN_CORRELATION_TEXTS} (n/a)"] if len(j) < MIN_CORRELATION_TEXTS else []
    )
    said += [
        f"{who} gave every text the same score ({values[0]:g}): correlations are undefined (n/a) "
        "and kappa cannot exceed 0"
        for who, values in ((judge, j), ("the humans", consensus))
        if np.all(values == values[0])
    ]
    return "; ".join(said)


def _alpha_note(grid: np.ndarray, j: np.ndarray) -> str:
    """Why Krippendorff's alpha is n/a, among the humans or with the judge ("" where it is not)."""
    said = []
    for who, data in (("the humans", grid), ("the humans and the judge", np.vstack([grid, j]))):
        why = alpha_undefined(data)
        if why:
            said.append(f"Krippendorff's alpha of {who} is undefined (n/a): {why}")
    return "; ".join(said)


def _human_baseline(grid: np.ndarray, step: float) -> tuple[float, float, str]:
    """Each human against the mean of the other humans (what the judge is held to), averaged, and
    why r is n/a where it is: a human who shares fewer than MIN_CORRELATION_TEXTS texts with the
    others (two points give r = +/-1 whatever the agreement) or gave every shared text one score."""
    pearsons, qwks, few, constant = [], [], 0, 0
    for i in range(len(grid)):
        rest = np.delete(grid, i, axis=0)
        rated = (~np.isnan(rest)).sum(axis=0)  # a text no other human rated has no mean (not a warning)
        others = np.where(rated > 0, np.nansum(rest, axis=0) / np.maximum(rated, 1), np.nan)
        ok = ~np.isnan(grid[i]) & ~np.isnan(others)
        if ok.sum() > 1:
            qwks.append(kappas(categories(grid[i][ok], step), categories(others[ok], step))[1])
        if ok.sum() < MIN_CORRELATION_TEXTS:
            few += 1
            pearsons.append(np.nan)
        else:
            mine, theirs = grid[i][ok], others[ok]
            constant += bool(np.all(mine == mine[0]) or np.all(theirs == theirs[0]))
            pearsons.append(stats.pearsonr(mine, theirs).statistic)
    said = [f"{few} share fewer than {MIN_CORRELATION_TEXTS} texts with the others"] if few else []
    said += [f"{constant} (or the others' mean) gave every shared text one score"] if constant else []
    defined = [r for r in pearsons if r == r]
    why = f"human r {'averages' if defined else 'is n/a:'} {len(defined)} of {len(grid)} humans: {' and '.join(said)}"
    return (
        float(np.mean(defined)) if defined else float("nan"),
        float(np.mean(qwks)) if qwks else float("nan"),
        why if said else "",
    )
