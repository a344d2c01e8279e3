"""Prediction-powered estimates on real human labels: the Topical-Chat release (360 responses, averaged
human scores on six criteria; UniEval's published scores of the same responses as the judge, read by
the same loader `rubricflow labels` uses). Over --reps random labelled subsets of --n texts:

- the coverage of the nominal 90% prediction-powered interval of the all-labels human mean
  (target >= 88%) and its median width against the labels-only interval's (target <= 0.85x), per
  criterion and overall (the criteria's mean on the unit scale, as `estimate` computes it);
- active selection against uniform selection at the same budget, both estimated by Zrnic and
  Candes's active inference (`ppi.active_mean`, each label weighted by the probability it had when
  drawn): the judge's own doubt, an error model of |human - judge| fitted on a uniform burn-in (the
  paper's learned uncertainty, in two phases), and the true errors (unknowable: the ceiling), with
  each signal's correlation with the error and the share of the interval's variance that is the
  corpus's own spread (which no selection can reduce).

    python bench/ppi.py [--reps 1000] [--n 100]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
from scipy.stats import norm

from rubricflow.tasks.loaders.labels import topical_chat
from rubricflow.tasks.stats import ppi
from rubricflow.tasks.stats.labelling_plan import inclusion_probabilities, systematic_sample

SHARED = Path(os.environ.get("RUBRICFLOW_SHARED", Path(__file__).resolve().parents[2] / "shared"))
DATA = SHARED / "data" / "calibration" / "topical_chat"
SCALES = {  # the human scales of the release (shared/data/README.md)
    "understandability": (0, 1),
    "naturalness": (1, 3),
    "coherence": (1, 3),
    "engagingness": (1, 3),
    "groundedness": (0, 1),
    "overall": (1, 5),
}
ALPHA = 0.1


def load(folder: Path) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(human scores, judge scores) per criterion, the texts in one order; plus `all criteria` (unit-scale means)."""
    _, labels = topical_chat(folder)
    by: dict[tuple[str, str], dict[str, float]] = {}
    for text_id, criterion, rater, score in labels.select("text_id", "criterion_id", "rater", "score").iter_rows():
        by.setdefault((rater, criterion), {})[text_id] = score
    texts = sorted(by[("human", "overall")])
    human = {c: np.array([by[("human", c)][t] for t in texts]) for c in SCALES}
    judge = {c: np.array([by[("unieval", c)][t] for t in texts]) for c in SCALES}
    unit = [(human[c] - lo) / (hi - lo) for c, (lo, hi) in SCALES.items()]
    human["all criteria"] = np.mean(unit, axis=0)
    judge["all criteria"] = np.mean([judge[c] for c in SCALES], axis=0)
    return human, judge


def uniform_subsets(y: np.ndarray, f: np.ndarray, n: int, reps: int, seed: int) -> tuple[float, float, float]:
    """(coverage, median width PPI / labels-only, median labels gained) over `reps` random subsets of n."""
    rng = np.random.default_rng(seed)
    truth, covered, ratios, gained = y.mean(), 0, [], []
    for _ in range(reps):
        chosen = rng.choice(len(y), n, replace=False)
        powered, _ = ppi.ppi_mean(y[chosen], f[chosen], f, alpha=ALPHA)
        alone = ppi.classical(y[chosen], alpha=ALPHA)
        covered += powered.low <= truth <= powered.high
        ratios.append(powered.width / alone.width)
        gained.append(ppi.effective_labels(n, alone, powered) - n)
    return covered / reps, float(np.median(ratios)), float(np.median(gained))


def ridge_fit(features: np.ndarray, target: np.ndarray, penalty: float = 1.0) -> np.ndarray:
    """Least squares with a ridge penalty: the cheap error model fitted on a burn-in."""
    gram = features.T @ features + penalty * np.eye(features.shape[1])
    return np.linalg.solve(gram, features.T @ target)


def judge_doubt(y, f, features, burn_in, rest) -> np.ndarray:
    """The judge's own doubt: sqrt(p(1-p)) of its score on its range (a classifier's, as in the paper)."""
    p = (f[rest] - f.min()) / (f.max() - f.min())
    return np.sqrt(p * (1 - p))


def error_model(y, f, features, burn_in, rest) -> np.ndarray:
    """|human - judge| predicted from the judge's scores of every criterion (and their squares) by a
    ridge model fitted on the burn-in's labels: Zrnic and Candes's learned uncertainty."""
    fit = np.polyfit(f[burn_in], y[burn_in], 1)
    error = np.abs(y[burn_in] - np.polyval(fit, f[burn_in]))
    predicted = features[rest] @ ridge_fit(features[burn_in], error)
    return np.clip(predicted, 0.2 * error.mean(), None)


def true_error(y, f, features, burn_in, rest) -> np.ndarray:
    """The true |residual| (known only once every text is labelled): the ceiling of any signal."""
    return np.abs(y - np.polyval(np.polyfit(f, y, 1), f))[rest]


def two_phase(y, f, features, n: int, burn: int, rng, signal) -> tuple[ppi.Interval, float]:
    """Active inference in two phases over a random order of the corpus: the first texts are labelled
    uniformly (`burn` labels expected), the rest with probability from `signal` (None: uniform),
    mixed with uniform (labelling_plan); every label weighted by the probability it had when drawn,
    so ppi.active_mean is unbiased. Returns the interval and the signal's correlation with the error."""
    big_n = len(y)
    order = rng.permutation(big_n)
    first, rest = order[: int(round(big_n * burn / n))], order[int(round(big_n * burn / n)) :]
    pi = np.full(big_n, n / big_n)
    burn_in = first[systematic_sample(pi[first], rng)] if len(first) else first
    u = np.ones(len(rest)) if signal is None else signal(y, f, features, burn_in, rest)
    pi[rest] = inclusion_probabilities(u, n - len(burn_in), active=signal is not None)
    labelled = np.concatenate([burn_in, rest[systematic_sample(pi[rest], rng)]])
    error = true_error(y, f, features, burn_in, rest)
    corr = float(np.corrcoef(u, error)[0, 1]) if signal is not None and u.std() > 0 else float("nan")
    return ppi.active_mean(y[labelled], labelled, f, pi, ALPHA)[0], corr


def planned(y, f, features, n: int, reps: int, seed: int, signal, burn: int = 0) -> tuple[float, float, float]:
    """(coverage, median width, median correlation of the signal with the error) over `reps` plans."""
    rng = np.random.default_rng(seed)
    covered, widths, corrs = 0, [], []
    for _ in range(reps):
        interval, corr = two_phase(y, f, features, n, burn, rng, signal)
        covered += interval.low <= y.mean() <= interval.high
        widths.append(interval.width)
        corrs.append(corr)
    return covered / reps, float(np.median(widths)), float(np.nanmedian(corrs)) if signal else float("nan")


def uniform_plan(y, f, n: int, reps: int, seed: int) -> tuple[float, float]:
    """(coverage, median width) of `estimate` under a uniform plan: PPI++ on a simple random sample."""
    rng = np.random.default_rng(seed)
    pi, covered, widths = np.full(len(y), n / len(y)), 0, []
    for _ in range(reps):
        chosen = systematic_sample(pi, rng)
        interval = ppi.ppi_mean(y[chosen], f[chosen], f, None, ALPHA)[0]
        covered += interval.low <= y.mean() <= interval.high
        widths.append(interval.width)
    return covered / reps, float(np.median(widths))


def active_table(human, judge, n: int, reps: int, seed: int) -> float:
    """Print each plan's median width against a uniform plan's (as `estimate` computes each); return
    the error model's ratio on all criteria."""
    features = np.column_stack([np.ones(len(judge["overall"])), *(judge[c] for c in SCALES),
                                *(judge[c] ** 2 for c in SCALES)])  # fmt: skip
    burn = int(0.4 * n)
    arms = {"uniform, active_mean": (None, 0), "judge's doubt": (judge_doubt, 0),
            f"error model, {burn}-label burn-in": (error_model, burn), "true error (ceiling)": (true_error, burn)}  # fmt: skip
    print(f"active vs uniform selection, {n} labels: median width against a uniform plan's PPI++ (coverage; "
          "the signal's correlation with |human - judge|)")  # fmt: skip
    ratio = float("nan")
    for criterion in ("all criteria", "groundedness", "understandability"):  # the judge on the humans' scale
        y, f = human[criterion], judge[criterion]
        coverage, base = uniform_plan(y, f, n, reps, seed)
        floor = y.var() / len(y) / (base / 2 / norm.ppf(1 - ALPHA / 2)) ** 2
        figures = [f"uniform PPI++ ({coverage:.0%}; {floor:.0%} of its variance is the corpus's spread)"]
        for name, (signal, burn_in) in arms.items():
            coverage, width, corr = planned(y, f, features, n, reps, seed, signal, burn_in)
            figures.append(f"{name} {width / base:.3f}x ({coverage:.0%}" + (f"; r {corr:.2f})" if signal else ")"))
            if criterion == "all criteria" and signal is error_model:
                ratio = width / base
        print(f"  {criterion:<17} " + "; ".join(figures))
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    human, judge = load(args.data)
    print(f"Topical-Chat: {len(human['overall'])} texts, {args.reps} labelled subsets of {args.n}, 90% intervals")
    print(f"{'criterion':<18} {'coverage':>9} {'width PPI/labels':>17} {'labels gained':>14} {'r':>6}")
    for criterion in [*SCALES, "all criteria"]:
        y, f = human[criterion], judge[criterion]
        coverage, ratio, gained = uniform_subsets(y, f, args.n, args.reps, args.seed)
        r = np.corrcoef(y, f)[0, 1]
        print(f"{criterion:<18} {coverage:>9.1%} {ratio:>16.3f}x {gained:>14.1f} {r:>6.3f}")
    ratio = active_table(human, judge, args.n, args.reps, args.seed)
    print(f"width ratio active / uniform ('all criteria', error model on a burn-in): {ratio:.3f}x")


if __name__ == "__main__":
    main()
