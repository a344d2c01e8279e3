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


def planned(y, f, uncertainty, n: int, reps: int, seed: int) -> tuple[float, float]:
    """(coverage, median width) of the PPI interval when a plan chose the texts (active: 1/pi weights)."""
    rng = np.random.default_rng(seed)
    pi = inclusion_probabilities(uncertainty, n, active=True)
    covered, widths = 0, []
    for _ in range(reps):
        chosen = systematic_sample(pi, rng)
        powered, _ = ppi.ppi_mean(y[chosen], f[chosen], f, 1 / pi[chosen], ALPHA)
        covered += powered.low <= y.mean() <= powered.high
        widths.append(powered.width)
    return covered / reps, float(np.median(widths))


def uniform_width(y, f, n: int, reps: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    pi = inclusion_probabilities(np.ones(len(y)), n, active=False)
    widths = [
        ppi.ppi_mean(y[c], f[c], f, alpha=ALPHA)[0].width for c in (systematic_sample(pi, rng) for _ in range(reps))
    ]
    return float(np.median(widths))


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
    y, f = human["all criteria"], judge["all criteria"]
    spread = (f - f.min()) / (f.max() - f.min())
    near_threshold = np.maximum(0, 1 - np.abs(spread - 0.5) / 0.5)  # plan_uncertainty.sql's sign for one score
    residual = np.abs(y - np.polyval(np.polyfit(f, y, 1), f))  # known only with every label
    base = uniform_width(y, f, args.n, args.reps, args.seed)
    print(f"active vs uniform selection, {args.n} labels ('all criteria'; uniform median width {base:.4f}):")
    for name, signal in (("judge's uncertainty", near_threshold), ("perfect signal", residual)):
        coverage, width = planned(y, f, signal, args.n, args.reps, args.seed)
        print(f"  {name:<20} coverage {coverage:.1%}  width ratio active / uniform {width / base:.3f}x")


if __name__ == "__main__":
    main()
