"""Prediction-powered estimates on real human labels: the Topical-Chat release (360 responses, averaged
human scores on six criteria; UniEval's published scores of the same responses as the judge, read by
the same loader `rubricflow labels` uses). Over --reps random labelled subsets of --n texts:

- the coverage of the nominal 90% prediction-powered interval of the all-labels human mean
  (target >= 88%) and its median width against the labels-only interval's (target <= 0.85x), per
  criterion and overall (the criteria's mean on the unit scale, as `estimate` computes it);
- active selection (`labels plan --active`: probabilities from the judge's uncertainty, labels
  weighted by 1/pi) against uniform selection at the same budget: the median width ratio, beside the
  ratio a perfect uncertainty signal (the true residuals, unknowable in practice) would give.

    python bench/ppi.py [--reps 1000] [--n 100]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

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


def weighted_ppi(y, f, pi, chosen) -> ppi.Interval:
    """`estimate`'s figure under a plan: PPI++ with the labels weighted by 1/pi (ppi-python's weights)."""
    return ppi.ppi_mean(y[chosen], f[chosen], f, 1 / pi[chosen], ALPHA)[0]


def active_inference(y, f, pi, chosen) -> ppi.Interval:
    """Zrnic and Candes (2024): the inverse-probability-weighted PPI mean over the whole corpus."""
    return ppi.active_mean(y[chosen], chosen, f, pi, ALPHA)[0]


def planned(y, f, uncertainty, n: int, reps: int, seed: int, estimator) -> tuple[float, float]:
    """(coverage, median width) when a plan chose the texts (uniform: `uncertainty` None)."""
    rng = np.random.default_rng(seed)
    active = uncertainty is not None
    pi = inclusion_probabilities(uncertainty if active else np.ones(len(y)), n, active=active)
    covered, widths = 0, []
    for _ in range(reps):
        powered = estimator(y, f, pi, systematic_sample(pi, rng))
        covered += powered.low <= y.mean() <= powered.high
        widths.append(powered.width)
    return covered / reps, float(np.median(widths))


def signals(y: np.ndarray, f: np.ndarray) -> dict[str, np.ndarray]:
    """Uncertainty signals for active selection: what the judge's own score says, and (for scale) the
    true residuals, known only once every text is labelled."""
    spread = (f - f.min()) / (f.max() - f.min())
    return {
        "score near the middle": np.maximum(0, 1 - np.abs(spread - 0.5) / 0.5),  # plan_uncertainty.sql's sign
        "sqrt(p(1-p)) of score": np.sqrt(spread * (1 - spread)),  # a classifier's, as in Zrnic and Candes
        "perfect signal": np.abs(y - np.polyval(np.polyfit(f, y, 1), f)),
    }


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
    print(f"active vs uniform selection, {args.n} labels: median width ratio active / uniform (coverage)")
    for criterion in ("all criteria", "overall", "groundedness", "understandability"):
        y, f = human[criterion], judge[criterion]
        for estimator in (weighted_ppi, active_inference):
            _, base = planned(y, f, None, args.n, args.reps, args.seed, estimator)
            figures = []
            for name, signal in signals(y, f).items():
                coverage, width = planned(y, f, signal, args.n, args.reps, args.seed, estimator)
                figures.append(f"{name} {width / base:.3f}x ({coverage:.0%})")
            print(f"  {criterion:<17} {estimator.__name__:<16} " + "; ".join(figures))
    y, f = human["all criteria"], judge["all criteria"]
    _, base = planned(y, f, None, args.n, args.reps, args.seed, active_inference)
    _, width = planned(y, f, signals(y, f)["sqrt(p(1-p)) of score"], args.n, args.reps, args.seed, active_inference)
    print(f"width ratio active / uniform ('all criteria', active inference, the judge's signal): {width / base:.3f}x")


if __name__ == "__main__":
    main()
