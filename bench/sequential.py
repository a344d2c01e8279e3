"""Bench: the sequential A/B's error rate and savings on real judgments (#40).

The data: the 360 Topical-Chat responses of ../shared/data/calibration/topical_chat, each scored by
humans and by the UniEval judge on the same criterion. The paired difference per text is
judge - human (both on [0, 1]): an A/B of two real judges of the same texts, whose full-corpus
answer is known.

- A/A: the recorded differences with a random sign each (A and B swapped per text at random: no
  difference by construction, the variance of real judgments), in a random order. The fraction
  of comparisons that declare a winner must be at most alpha. Baseline measured in the same run:
  a fixed-n t-test looked at after every batch ("peeking"), the error the sequence avoids.
- A/B: the recorded differences in a random order. Printed: the median fraction of texts judged
  before the decision, and how often it agrees with the full-corpus answer (the t-test on all 360
  texts: the sign of the mean when it excludes 0), which must be at least 1 - alpha.

    python bench/sequential.py [--runs 1000] [--criterion understandability] [--batch 20]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

from rubricflow.tasks.stats.sequential import run_sequence

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "calibration" / "topical_chat"
HUMAN_RANGE = {"naturalness": (1, 3), "coherence": (1, 3), "engagingness": (1, 3), "groundedness": (0, 1)}
HUMAN_RANGE |= {"understandability": (0, 1), "overall": (1, 5)}


def differences(criterion: str) -> np.ndarray:
    """judge - human per response, both on [0, 1] (human scores rescaled from their range)."""
    records = json.loads((DATA / "judge_predictions.json").read_text(encoding="utf-8"))
    low, high = HUMAN_RANGE[criterion]
    human = np.array([(r["scores"][criterion] - low) / (high - low) for r in records])
    judge = np.clip([r["predict_scores"][criterion] for r in records], 0.0, 1.0)
    return judge - human


def peeking_decides(diffs: np.ndarray, alpha: float, batch: int) -> bool:
    """The baseline: a t-test after every batch, stopping at the first p < alpha."""
    for n in range(batch, len(diffs) + 1, batch):
        if n > 2 and stats.ttest_1samp(diffs[:n], 0.0).pvalue < alpha:
            return True
    return False


def a_a(diffs: np.ndarray, runs: int, alpha: float, batch: int, rng: np.random.Generator) -> tuple[float, float]:
    """(fraction of A/A runs the sequence calls a winner, the same for peeking t-tests)."""
    wins = peeks = 0
    for _ in range(runs):
        flipped = rng.permutation(diffs) * rng.choice([-1.0, 1.0], size=diffs.size)
        wins += run_sequence(list(flipped), alpha, None, batch)[0] is not None
        peeks += peeking_decides(flipped, alpha, batch)
    return wins / runs, peeks / runs


def a_b(diffs: np.ndarray, runs: int, alpha: float, batch: int, rng: np.random.Generator) -> tuple[float, float, str]:
    """(median fraction of texts judged, fraction agreeing with the full-corpus answer, that answer)."""
    full = stats.ttest_1samp(diffs, 0.0)
    answer = ("B" if diffs.mean() > 0 else "A") if full.pvalue < alpha else None
    used, agree = [], 0
    for _ in range(runs):
        found, n, _ = run_sequence(list(rng.permutation(diffs)), alpha, None, batch)
        used.append(n / diffs.size)
        agree += found == answer
    return float(np.median(used)), agree / runs, answer or "no winner"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--criterion", default="understandability", choices=sorted(HUMAN_RANGE))
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    diffs = differences(args.criterion)
    rng = np.random.default_rng(args.seed)
    print(f"{diffs.size} texts, {args.criterion}: judge - human mean {diffs.mean():.4f} (sd {diffs.std():.4f})")
    started = time.perf_counter()
    wins, peeks = a_a(diffs, args.runs, args.alpha, args.batch, rng)
    print(f"A/A x {args.runs} (sign flips): sequence declares a winner in {wins:.3f} (alpha {args.alpha}): ", end="")
    print("holds" if wins <= args.alpha else "EXCEEDS alpha")
    print(
        f"baseline: a t-test peeked at every {args.batch} texts declares one in {peeks:.3f} "
        f"(ratio baseline / sequence: {peeks / wins:.1f}x)"
        if wins
        else f"baseline: a t-test peeked at every {args.batch} texts declares one in {peeks:.3f} (the sequence: never)"
    )
    median, agree, answer = a_b(diffs, args.runs, args.alpha, args.batch, rng)
    print(
        f"A/B x {args.runs} (recorded order permuted): full-corpus answer {answer}; median fraction judged {median:.3f}"
    )
    print(
        f"agreement with the full-corpus answer {agree:.3f} (>= {1 - args.alpha}: {'holds' if agree >= 1 - args.alpha else 'FAILS'})"
    )
    print(f"cost ratio sequential / full corpus (median): {median:.3f}; {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
