"""Fit a rubric to human labels from scores already in the warehouse, with no judge call: the
criterion weights (non-negative least squares shrunk toward the rubric's own weights by an inner
cross-validation, rescaled to the rubric's total weight), the pass
threshold and the decision labels' cut-offs (where an isotonic fit of the human scores on the
rubric's score crosses the human boundary). The scores fitted are a judge's judgments, or another
rater's labels (a published judge's scores imported with `rubricflow labels`).

Figures are k-fold cross-validated by text with a seeded shuffle: each fold is fitted on the others
and measured on itself, for equal weights, the rubric's own weights and the fitted ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import semver
from scipy.optimize import isotonic_regression, nnls
from scipy.stats import pearsonr, spearmanr

from rubricflow.errors import InputError
from rubricflow.rubrics.compiler import Bundle
from rubricflow.rubrics.model import DecisionLabel, Rubric
from rubricflow.warehouse import db


class FitError(InputError):
    """Nothing to fit: no scores, no labels, too few texts, or a rubric shape fitting cannot change."""


@dataclass
class FitData:
    text_ids: list[str]
    criteria: list[str]
    scores: np.ndarray  # texts x criteria, unit scores in [0, 1]
    target: np.ndarray  # the human score per text
    source: str  # judge:<hash> | rater:<name>
    left_out: int  # texts with a label but not every criterion scored


@dataclass
class Fitted:
    weights: dict[str, float]
    shrinkage: float = 1.0  # 0: the rubric's own weights, 1: the least-squares fit
    pass_threshold: float | None = None
    label_mins: list[float] | None = None


@dataclass
class FitReport:
    folds: int
    seed: int
    texts: int
    held_out: dict[str, dict[str, float | None]]  # equal | rubric | fitted -> metric -> mean over folds
    fitted: Fitted
    per_fold: list[dict] = field(default_factory=list)


def check_fittable(rubric: Rubric, label_at: list[float] | None = None) -> None:
    if rubric.groups or rubric.scoring.method != "weighted_mean" or rubric.scoring.invert:
        raise FitError(
            f"{rubric.metadata.id}: fitting handles flat weighted-mean rubrics; this one has "
            f"{'groups' if rubric.groups else 'scoring method ' + rubric.scoring.method}"
        )
    if label_at and len(label_at) != len(rubric.scoring.labels) - 1:
        raise FitError(
            f"--label-at gives {len(label_at)} human boundaries; {rubric.metadata.id}'s "
            f"{len(rubric.scoring.labels)} labels need {max(len(rubric.scoring.labels) - 1, 0)}"
        )
    if label_at and label_at != sorted(label_at):
        raise FitError(f"--label-at boundaries must rise: {label_at}")


def load(
    con: duckdb.DuckDBPyConnection,
    corpus: str,
    bundle: Bundle,
    target_raters: list[str],
    target_criterion: str,
    judge_hash: str | None = None,
    rater: str | None = None,
) -> FitData:
    """Per-text unit scores of the rubric's criteria (a judge's, or `rater`'s labels on the rubric's
    scales) beside the mean of the target raters' labels on `target_criterion`."""
    rubric = bundle.rubric
    criteria = [c.id for c in rubric.criteria]
    if rater is not None:
        rows = db.fetch(con, "fit_rater_scores.sql", corpus=corpus, rater=rater, criteria=criteria)
        units = {}
        for r in rows:
            low, high, _ = db.scale_geometry(rubric.criterion(r["criterion_id"]).scale)
            if low is None or high is None:
                raise FitError(
                    f"criterion {r['criterion_id']!r} has a nominal scale: rater scores cannot be placed on it"
                )
            unit = (r["score"] - low) / (high - low)
            if not -1e-9 <= unit <= 1 + 1e-9:
                raise FitError(
                    f"rater {rater!r} scored {r['criterion_id']!r} of text {r['text_id']!r} {r['score']:g}, "
                    f"outside the rubric's scale [{low:g}, {high:g}]"
                )
            units[(r["text_id"], r["criterion_id"])] = unit
        source = f"rater:{rater}"
    else:
        rows = db.fetch(con, "fit_judge_scores.sql", corpus=corpus, rubric=bundle.hash, judge=judge_hash)
        units = {(r["text_id"], r["criterion_id"]): r["unit_score"] for r in rows}
        source = f"judge:{judge_hash}"
    targets = {
        r["text_id"]: r["score"]
        for r in db.fetch(con, "fit_target.sql", corpus=corpus, raters=target_raters, criterion=target_criterion)
    }
    if not targets:
        raise FitError(f"no labels by {', '.join(target_raters)} on {target_criterion!r} in corpus {corpus!r}")
    if not units:
        raise FitError(f"no scores of {rubric.metadata.id}'s criteria by {source} in corpus {corpus!r}")
    complete = sorted(t for t in targets if all((t, c) in units for c in criteria))
    if len(complete) < 10:
        raise FitError(
            f"only {len(complete)} texts have a label and every criterion scored by {source}; fitting needs 10"
        )
    return FitData(
        complete,
        criteria,
        np.array([[units[(t, c)] for c in criteria] for t in complete]),
        np.array([targets[t] for t in complete]),
        source,
        len(targets) - len(complete),
    )


SHRINKAGE = (0.0, 0.25, 0.5, 0.75, 1.0)  # how far the weights move from the rubric's own toward the data's


def fit(
    scores: np.ndarray,
    target: np.ndarray,
    rubric: Rubric,
    pass_at: float | None,
    label_at: list[float] | None,
    seed: int = 0,
) -> Fitted:
    """Weights, then cut-offs where the isotonic regression of the human score on the fitted score
    crosses each human boundary."""
    total = sum(c.weight for c in rubric.criteria) or len(rubric.criteria)
    w, shrinkage = fit_weights(scores, target, _prior(rubric), seed)
    w = w * total
    result = Fitted({c.id: round(float(x), 6) for c, x in zip(rubric.criteria, w, strict=True)}, shrinkage=shrinkage)
    fitted_score = scores @ w / w.sum()
    if pass_at is not None:
        result.pass_threshold = _crossing(fitted_score, (target >= pass_at).astype(float), 0.5)
    if label_at:
        result.label_mins = [_lowest_min(rubric)] + [_crossing(fitted_score, target, b) for b in label_at]
    return result


def fit_weights(
    scores: np.ndarray, target: np.ndarray, prior: np.ndarray, seed: int, folds: int = 5
) -> tuple[np.ndarray, float]:
    """Non-negative least squares on centred data (the best linear fit of the human score by a
    weighted mean, up to scale and offset), shrunk toward the rubric's own weights: the share of the
    way to move is chosen by an inner cross-validation on these texts (the mean of Pearson and
    Spearman), since the raw fit chases noise (it zeroes whole criteria on a few hundred texts).
    Weights sum to 1."""
    n = len(target)
    fold_of = np.empty(n, dtype=int)
    fold_of[np.random.default_rng(seed).permutation(n)] = np.arange(n) % folds
    agreement = {s: 0.0 for s in SHRINKAGE}
    for k in range(folds):
        train, test = fold_of != k, fold_of == k
        w = _nnls(scores[train], target[train])
        for s in SHRINKAGE:
            held = scores[test] @ (s * w + (1 - s) * prior)
            agreement[s] += sum(
                v or 0.0 for v in (_stat(pearsonr, held, target[test]), _stat(spearmanr, held, target[test]))
            )
    shrinkage = max(SHRINKAGE, key=lambda s: (agreement[s], -s))
    return shrinkage * _nnls(scores, target) + (1 - shrinkage) * prior, shrinkage


def _nnls(scores: np.ndarray, target: np.ndarray) -> np.ndarray:
    w, _ = nnls(scores - scores.mean(axis=0), target - target.mean())
    return w / w.sum() if w.sum() > 0 else np.full(scores.shape[1], 1 / scores.shape[1])


def _prior(rubric: Rubric) -> np.ndarray:
    own = np.array([c.weight for c in rubric.criteria], dtype=float)
    return own / own.sum() if own.sum() > 0 else np.full(len(own), 1 / len(own))


def _crossing(score: np.ndarray, target: np.ndarray, level: float) -> float:
    """The lowest score at which the isotonic (non-decreasing) fit of target on score reaches level."""
    order = np.argsort(score, kind="stable")
    s, fitted = score[order], isotonic_regression(target[order]).x
    above = np.nonzero(fitted >= level - 1e-12)[0]
    if not len(above):
        return 1.0
    i = above[0]
    return round(float(s[i] if i == 0 else (s[i - 1] + s[i]) / 2), 6)


def _lowest_min(rubric: Rubric) -> float:
    return min((label.min for label in rubric.scoring.labels), default=0.0)


def evaluate(
    scores: np.ndarray,
    target: np.ndarray,
    weights: np.ndarray,
    pass_threshold: float | None,
    pass_at: float | None,
    label_mins: list[float] | None,
    label_at: list[float] | None,
) -> dict[str, float | None]:
    score = scores @ weights / weights.sum()
    out: dict[str, float | None] = {
        "pearson": _stat(pearsonr, score, target),
        "spearman": _stat(spearmanr, score, target),
    }
    if pass_at is not None and pass_threshold is not None:
        truth, said = target >= pass_at, score >= pass_threshold
        rates = [float(np.mean(said[truth == v] == v)) for v in (True, False) if np.any(truth == v)]
        out["balanced_accuracy"] = sum(rates) / len(rates)
    if label_at and label_mins:
        human = np.searchsorted(np.array(label_at), target, side="right")
        judged = np.searchsorted(np.array(label_mins[1:]), score, side="right")
        out["label_agreement"] = float(np.mean(human == judged))
    return out


def _stat(fn, x: np.ndarray, y: np.ndarray) -> float | None:
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    value = float(fn(x, y)[0])
    return None if math.isnan(value) else value


def cross_validate(
    data: FitData,
    rubric: Rubric,
    folds: int,
    seed: int,
    pass_at: float | None = None,
    label_at: list[float] | None = None,
) -> FitReport:
    """Mean held-out figures over `folds` folds of texts (a seeded shuffle), then the fit on every text."""
    n = len(data.text_ids)
    if not 2 <= folds <= n // 2:
        raise FitError(f"--folds must be between 2 and {n // 2} for {n} texts")
    if np.ptp(data.target) == 0:  # a constant target: every figure would be undefined, and the version written empty
        raise FitError(
            f"the labels are constant (all {n} texts scored {data.target[0]:g}): there is nothing to fit "
            "and no correlation to report; check the rater and criterion (--labels)"
        )
    fold_of = np.empty(n, dtype=int)
    fold_of[np.random.default_rng(seed).permutation(n)] = np.arange(n) % folds
    own = np.array([c.weight for c in rubric.criteria])
    own_labels = sorted(label.min for label in rubric.scoring.labels) or None
    per_fold: list[dict[str, Any]] = []
    for k in range(folds):
        train, test = fold_of != k, fold_of == k
        f = fit(data.scores[train], data.target[train], rubric, pass_at, label_at, seed)
        x, y = data.scores[test], data.target[test]
        per_fold.append(
            {
                "fold": k,
                "texts": int(test.sum()),
                "equal": evaluate(
                    x, y, np.ones(len(own)), rubric.scoring.pass_threshold, pass_at, own_labels, label_at
                ),
                "rubric": evaluate(
                    x,
                    y,
                    own if own.sum() > 0 else np.ones(len(own)),
                    rubric.scoring.pass_threshold,
                    pass_at,
                    own_labels,
                    label_at,
                ),
                "fitted": evaluate(
                    x, y, np.array(list(f.weights.values())), f.pass_threshold, pass_at, f.label_mins, label_at
                ),
            }
        )
    held_out = {
        side: {metric: _mean([p[side][metric] for p in per_fold]) for metric in per_fold[0][side]}
        for side in ("equal", "rubric", "fitted")
    }
    return FitReport(folds, seed, n, held_out, fit(data.scores, data.target, rubric, pass_at, label_at, seed), per_fold)


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def provenance(
    bundle: Bundle, corpus: str, data: FitData, report: FitReport, target: str, split: str
) -> dict[str, str | float | int | None]:
    """What the fitted version records about its fit: the source, the target, the split and the
    held-out agreement before and after, so the file itself says why it exists."""
    recorded: dict[str, str | float | int | None] = {
        "fitted_by": "rubricflow improve fit",
        "fitted_from": f"{bundle.id}@{bundle.version} ({bundle.hash[:12]})",
        "fit_corpus": corpus,
        "fit_scores": data.source,
        "fit_target": target,
        "fit_split": split,
        "fit_texts": data.scores.shape[0],
        "fit_metric": "least squares shrunk toward the rubric's weights (weights), isotonic crossing (cut-offs)",
        "fit_shrinkage": report.fitted.shrinkage,
    }
    for side, when in (("rubric", "before"), ("fitted", "after")):
        for metric, value in report.held_out[side].items():
            recorded[f"held_out_{metric}_{when}"] = None if value is None else round(value, 6)
    return recorded


def fitted_rubric(rubric: Rubric, report: FitReport, provenance: dict[str, str | float | int | None]) -> Rubric:
    """The next version: fitted weights (a patch), and a minor bump when the pass threshold or the
    label cut-offs moved too; its provenance says what it was fitted on and how it did held out."""
    f = report.fitted
    criteria = tuple(c.model_copy(update={"weight": f.weights[c.id]}) for c in rubric.criteria)
    scoring = rubric.scoring
    if f.pass_threshold is not None:
        scoring = scoring.model_copy(update={"pass_threshold": f.pass_threshold})
    if f.label_mins is not None:
        ordered = sorted(rubric.scoring.labels, key=lambda label: label.min)
        scoring = scoring.model_copy(
            update={
                "labels": tuple(
                    DecisionLabel(label=label.label, min=m) for label, m in zip(ordered, f.label_mins, strict=True)
                )
            }
        )
    version = semver.Version.parse(rubric.metadata.version)
    version = version.bump_minor() if scoring != rubric.scoring else version.bump_patch()
    metadata = rubric.metadata.model_copy(
        update={"version": str(version), "provenance": {**rubric.metadata.provenance, **provenance}}
    )
    return Rubric.model_validate(
        {
            **rubric.model_dump(mode="json"),
            "criteria": [c.model_dump(mode="json") for c in criteria],
            "scoring": scoring.model_dump(mode="json"),
            "metadata": metadata.model_dump(mode="json"),
        }
    )
