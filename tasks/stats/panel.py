"""A panel of judges on one rubric version: how far the judges agree with each other, per
criterion (Krippendorff's alpha over all judges, and Cohen's / quadratic weighted kappa for every
pair of judges, on the categories of the criterion's own scale step). The data comes from
`panel_raters.sql`; the statistics from agreement.py."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Literal

import duckdb
import numpy as np

from rubricflow.errors import CheckFailed
from rubricflow.tasks.stats.agreement import alpha, categories, kappas
from rubricflow.tasks.stats.compare import CompareError, judgment_sets
from rubricflow.warehouse import db


class PanelError(CheckFailed):
    """No panel to measure: fewer than two judges scored the rubric on the corpus."""


@dataclass(frozen=True)
class PanelAgreement:
    criterion_id: str
    judges: int
    texts: int  # texts at least two judges scored
    alpha: float  # Krippendorff's alpha, all judges (nominal for nominal scales, else ordinal)
    mean_kappa: float  # Cohen's kappa, averaged over pairs of judges
    mean_qwk: float  # quadratic weighted kappa, averaged over pairs
    min_qwk: float  # the pair that agrees least
    split_share: float  # share of those texts where the judges do not all give the same score


def panel_agreement(con: duckdb.DuckDBPyConnection, corpus: str, rubric: str) -> tuple[list[str], list[PanelAgreement]]:
    """(the judges, agreement per criterion) of every judge setup that scored `rubric` on `corpus`."""
    try:
        sets = judgment_sets(con, corpus, rubric, None, True, "panel")
    except CompareError as exc:
        raise PanelError(str(exc).removeprefix("side panel: ")) from None
    hashes = {rh for rh, _ in sets}
    if len(hashes) > 1:
        raise PanelError(f"{rubric!r} names {len(hashes)} rubric versions on corpus {corpus!r}: name one (id@version)")
    rows = db.fetch(con, "panel_raters.sql", corpus=corpus, rubric=hashes.pop())
    judges = sorted({r["judge"] for r in rows})
    if len(judges) < 2:
        raise PanelError(
            f"one judge scored {rubric!r} on corpus {corpus!r}; a panel needs two or more "
            "(`rubricflow score --model A --model B ...`)"
        )
    out = []
    for criterion in sorted({r["criterion_id"] for r in rows}):
        found = _criterion_agreement(criterion, [r for r in rows if r["criterion_id"] == criterion], judges)
        if found is not None:
            out.append(found)
    return judges, out


def _criterion_agreement(criterion: str, mine: list[dict], judges: list[str]) -> PanelAgreement | None:
    """One criterion's agreement; None where fewer than two texts were scored by two judges."""
    texts = sorted({r["text_id"] for r in mine})
    by = {(r["judge"], r["text_id"]): r["score"] for r in mine}
    grid = np.array([[by.get((j, t), np.nan) for t in texts] for j in judges])  # judges x texts
    shared = (~np.isnan(grid)).sum(axis=0) >= 2
    if shared.sum() < 2:
        return None
    grid = grid[:, shared]
    codes = _codes(grid, mine[0]["scale_min"], mine[0]["step"])
    level: Literal["nominal", "ordinal"] = "nominal" if mine[0]["scale_kind"] == "nominal" else "ordinal"
    pairs = []
    for a, b in combinations(range(len(judges)), 2):
        both = ~np.isnan(grid[a]) & ~np.isnan(grid[b])
        if both.sum() >= 2:
            pairs.append(kappas(codes[a][both], codes[b][both]))
    rated = [row[~np.isnan(row)] for row in grid.T]
    return PanelAgreement(
        criterion,
        int((~np.isnan(grid)).any(axis=1).sum()),
        int(shared.sum()),
        _safe_alpha(grid, level),
        _defined_mean([p[0] for p in pairs]),
        _defined_mean([p[1] for p in pairs]),
        min((p[1] for p in pairs if p[1] == p[1]), default=float("nan")),
        float(np.mean([len(set(v.tolist())) > 1 for v in rated])),
    )


def _codes(grid: np.ndarray, low: float | None, step: float | None) -> np.ndarray:
    """Judges x texts scores as category codes (-1: not scored), one per step of the criterion's own
    scale by `categories`, as calibrate makes them: width 1 folded a 0-10 scale in halves into 11
    categories and one in quarters into 2. No step (nominal, or a rubric the warehouse kept no
    scale for): one category per score given, so none are folded."""
    given = ~np.isnan(grid)
    if step:
        return np.where(given, categories(np.where(given, grid - (low or 0.0), 0.0), step), -1)
    return np.where(given, np.searchsorted(np.unique(grid[given]), np.where(given, grid, 0.0)), -1)


def _defined_mean(values: list[float]) -> float:
    """The mean of the defined values (a pair of judges who each gave one score has no kappa), NaN
    where none is: numpy's nanmean printed "Mean of empty slice" to the user's terminal there."""
    defined = [v for v in values if v == v]
    return float(np.mean(defined)) if defined else float("nan")


def _safe_alpha(grid: np.ndarray, level: Literal["nominal", "ordinal"]) -> float:
    """Krippendorff's alpha; NaN when the scores leave it undefined (every judge gave one value)."""
    try:
        return alpha(grid, level)
    except (ValueError, ZeroDivisionError):
        return float("nan")
