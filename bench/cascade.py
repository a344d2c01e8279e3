"""Bench: the judge cascade on real recorded judgments of two different models (#40, #49 item 5).

The data (bench/data/judgebench_reward_models.jsonl, source and license in bench/data/SOURCES.md):
JudgeBench's 350 GPT-4o response pairs, each scored by two reward models as recorded in JudgeBench's
repository: Skywork-Reward-Llama-3.1-8B (the cheap judge) and Skywork-Reward-Gemma-2-27B (the strong
one). A text is a pair; its verdict is "response A is better" (pass) or not. Agreement is the same
verdict from both judges.

Two confidences of the cheap judge, measured in the same run on the same splits:
- margin (the cascade's default): the distance of its expected score to the pass threshold
  (tasks/stats/cascade.py: margin_confidence). The expected score is the probability it gives A being
  better, from its two rewards by the Bradley-Terry model reward models are trained on,
  sigmoid(r_A - r_B), against the threshold 0.5 (the recorded data has rewards, no token logprobs);
- modal (the baseline, the earlier default): the share of its re-asks that give its most common
  verdict, the re-asks being the two recorded games (the pair as given and with A and B swapped),
  as cascade_reask_confidence.sql computes it. It costs two cheap calls a text; the margin one.

Each split draws a calibration sample, chooses the threshold on it (tasks/stats/cascade.py, as
`score --cascade` does) and measures on the other texts: the kept texts' agreement with the strong
judge, the share kept on the cheap judge, and the cost against strong-only at --price-ratio (a cheap
call's price over a strong call's; the strong judge answers the calibration sample and the texts
escalated). The target must be reached in >= 1 - delta of splits.

    python bench/cascade.py [--texts 350] [--splits 1000] [--calibration 0.5] [--agreement 0.8 --delta 0.1]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

from rubricflow.tasks.stats.cascade import choose_threshold, margin_confidence

DATA = Path(__file__).resolve().parent / "data" / "judgebench_reward_models.jsonl"
SWAPPED = {"A>B": "B>A", "B>A": "A>B"}  # the second game's verdict in the pair's own terms


def prefers_a(judge: dict) -> float:
    """The probability the judge gives response A being the better (Bradley-Terry on its rewards)."""
    reward_a, reward_b = judge["scores"]
    return 1 / (1 + math.exp(-(reward_a - reward_b)))


def modal_share(judge: dict) -> float:
    """The share of the judge's re-asks (its two recorded games) that give its most common verdict."""
    first, second = judge["decisions"]
    verdicts = [first, SWAPPED.get(second, second)]
    return max(verdicts.count(v) for v in verdicts) / len(verdicts)


def recorded(texts: int) -> dict[str, np.ndarray]:
    """Per text: both confidences of the cheap judge and whether it agrees with the strong one."""
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()][:texts]
    return {
        "margin": np.array([margin_confidence(prefers_a(r["cheap"]), [0.5]) for r in rows]),
        "modal": np.array([modal_share(r["cheap"]) for r in rows]),
        "agree": np.array([(prefers_a(r["cheap"]) > 0.5) == (prefers_a(r["strong"]) > 0.5) for r in rows]),
    }


def splits(conf: np.ndarray, agree: np.ndarray, cheap_calls: int, args: argparse.Namespace) -> dict:
    """The guarantee, the share kept on the cheap judge and the cost over random splits."""
    rng = np.random.default_rng(args.seed)  # the same splits for every confidence
    reached, kept_share, certified, costs = 0, [], 0, []
    cal = int(round(args.calibration * conf.size))
    for _ in range(args.splits):
        order = rng.permutation(conf.size)
        c, t = order[:cal], order[cal:]
        threshold = choose_threshold(list(conf[c]), list(agree[c]), args.agreement, args.delta).value
        certified += threshold != math.inf
        kept = conf[t] >= threshold
        reached += (agree[t][kept].mean() if kept.any() else 1.0) >= args.agreement
        kept_share.append(kept.mean())
        strong_calls = cal + (~kept).sum()  # the calibration sample and the texts escalated
        costs.append((args.price_ratio * cheap_calls * conf.size + strong_calls) / conf.size)
    n = args.splits
    return {"reached": reached / n, "kept": float(np.mean(kept_share)), "certified": certified / n,
            "cost": float(np.mean(costs))}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=350)
    parser.add_argument("--splits", type=int, default=1000)
    parser.add_argument("--calibration", type=float, default=0.5, help="Share of texts in the calibration sample.")
    parser.add_argument("--agreement", type=float, default=0.8)
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--price-ratio", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    data = recorded(args.texts)
    print(
        f"{data['agree'].size} JudgeBench pairs judged by both (recorded): cheap Skywork-Reward-Llama-3.1-8B "
        f"agrees with strong Skywork-Reward-Gemma-2-27B on {data['agree'].mean():.3f}"
    )
    print(
        f"{args.splits} splits, {args.calibration:.0%} calibration, target {args.agreement}, delta {args.delta}, "
        f"a cheap call at {args.price_ratio} of a strong one"
    )
    results = {}
    for name, cheap_calls in (("modal", 2), ("margin", 1)):
        r = results[name] = splits(data[name], data["agree"], cheap_calls, args)
        holds = "holds" if r["reached"] >= 1 - args.delta else "FAILS"
        print(
            f"{name:>6}: kept on the cheap judge {r['kept']:.3f} of the test texts; threshold certified in "
            f"{r['certified']:.3f} of splits; target reached in {r['reached']:.3f} (>= {1 - args.delta:.2f}: {holds}); "
            f"cost {r['cost']:.3f} of strong-only ({cheap_calls} cheap call{'s' * (cheap_calls > 1)} a text)"
        )
    base = results["modal"]["kept"]
    print(
        "share kept ratio margin / modal: "
        + (f"{results['margin']['kept'] / base:.2f}" if base else "n/a (modal kept none)")
    )
    print(
        f"cost ratio cascade / strong-only: {results['margin']['cost']:.3f} (margin), {results['modal']['cost']:.3f} (modal)"
    )


if __name__ == "__main__":
    sys.exit(main())
