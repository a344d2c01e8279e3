"""Judge succession (#54) on real recorded judgments: the Topical-Chat release (360 dialogue responses
by 6 systems on 60 dialogues; UniEval's published scores on six criteria) is the old judge's history.
The new judge is a deliberately shifted, rescaled and bent variant of it with its own per-text noise
(new = 0.1 + 0.75 * old^1.25 + N(0, --noise) on each criterion's unit scale), judged on every text
once: the full re-judge. Over --bridges resampled bridges of --share of the corpus (stratified over
the old judge's score and over the two halves of the corpus, standing for two nights), this prints:

- the stitched corpus mean (criteria's unit-scale mean) against the full re-judge's: the mean and
  95th percentile |error| (target: within 0.01) and how often the 90% band covers it (target >= 88%);
- the A/B decisions between the 15 pairs of systems (paired by dialogue, 90% t interval): how often
  the restated decision equals the full re-judge's (target >= 95%), and the old judge's own;
- a new judge that reorders texts (the same scores given to other texts): refused, with the reason;
- the cost: judge calls of the bridge against re-judging everything.

    python bench/bridge.py [--bridges 200] [--share 0.05] [--noise 0.02] [--data FOLDER]
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path

import numpy as np

from rubricflow.tasks.stats import bridge

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "calibration" / "topical_chat"
CRITERIA = ("understandability", "naturalness", "coherence", "engagingness", "groundedness", "overall")


def load(folder: Path) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """(the old judge's unit-scale scores per criterion, each text's system, each text's dialogue)."""
    records = json.loads((folder / "judge_predictions.json").read_text())
    old = {}
    for c in CRITERIA:
        raw = np.array([r["predict_scores"][c] for r in records])
        old[c] = (raw - raw.min()) / (raw.max() - raw.min())  # UniEval's engagingness sums turns: past 1
    systems = np.array([r["system_id"] for r in records])
    dialogues = np.unique([r["source"] for r in records], return_inverse=True)[1]
    return old, systems, dialogues


def new_judge(old: dict[str, np.ndarray], noise: float, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {c: np.clip(0.1 + 0.75 * u**1.25 + rng.normal(0, noise, len(u)), 0, 1) for c, u in old.items()}


def ab_pairs(systems: np.ndarray, dialogues: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per pair of systems, the indices of their responses to the dialogues both answered, paired."""
    pairs = []
    for a, b in itertools.combinations(sorted(set(systems)), 2):
        index_a = {d: i for i, (s, d) in enumerate(zip(systems, dialogues, strict=True)) if s == a}
        index_b = {d: i for i, (s, d) in enumerate(zip(systems, dialogues, strict=True)) if s == b}
        both = sorted(set(index_a) & set(index_b))
        pairs.append((np.array([index_a[d] for d in both]), np.array([index_b[d] for d in both])))
    return pairs


def one_bridge(old, new, periods, pairs, full_decisions, budget: int, seed: int) -> dict:
    chosen, weights = bridge.bridge_sample(np.mean(list(old.values()), axis=0), periods, budget, seed=seed)
    stitches = [bridge.stitch(old[c], chosen, new[c][chosen], weights, reps=200, seed=seed) for c in CRITERIA]
    point, band = bridge.composite(stitches)
    mapped = np.mean([s.mapping(old[c]) for s, c in zip(stitches, CRITERIA, strict=True)], axis=0)
    kept = [
        bridge.paired_decision(mapped[a] - mapped[b])["decision"] == d
        for (a, b), d in zip(pairs, full_decisions, strict=True)
    ]
    return {"point": point, "band": band, "kept": kept, "kinds": [s.mapping.kind for s in stitches]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bridges", type=int, default=200)
    parser.add_argument("--share", type=float, default=0.05)
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--data", type=Path, default=DATA, help="The Topical-Chat folder (shared/data/calibration).")
    args = parser.parse_args()
    old, systems, dialogues = load(args.data)
    new = new_judge(old, args.noise, seed=1)
    n = len(systems)
    periods = (np.arange(n) >= n // 2).astype(int)  # two nights
    full = float(np.mean([new[c].mean() for c in CRITERIA]))
    composite_new, composite_old = np.mean(list(new.values()), axis=0), np.mean(list(old.values()), axis=0)
    pairs = ab_pairs(systems, dialogues)
    full_decisions = [bridge.paired_decision(composite_new[a] - composite_new[b])["decision"] for a, b in pairs]
    old_kept = np.mean(
        [
            bridge.paired_decision(composite_old[a] - composite_old[b])["decision"] == d
            for (a, b), d in zip(pairs, full_decisions, strict=True)
        ]
    )
    budget = int(args.share * n)
    started = time.perf_counter()
    runs = [one_bridge(old, new, periods, pairs, full_decisions, budget, seed) for seed in range(args.bridges)]
    errors = np.array([abs(r["point"] - full) for r in runs])
    covered = np.mean([r["band"][0] <= full <= r["band"][1] for r in runs])
    kept = np.mean([k for r in runs for k in r["kept"]])
    kinds = {k: sum(r["kinds"].count(k) for r in runs) for k in bridge.KINDS}
    print(
        f"corpus: {n} texts x {len(CRITERIA)} criteria; bridge: {budget} texts ({budget / n:.1%}), {args.bridges} bridges"
    )
    print(f"old judge's corpus mean {composite_old.mean():.4f}; full re-judge's {full:.4f}")
    print(
        f"stitched mean |error| vs full re-judge: mean {errors.mean():.4f}, 95th pct {np.quantile(errors, 0.95):.4f}, max {errors.max():.4f} (target 0.01)"
    )
    print(
        f"90% band covers the full re-judge: {covered:.1%} (target >= 88%); median band width {np.median([r['band'][1] - r['band'][0] for r in runs]):.4f}"
    )
    print(
        f"A/B decisions ({len(pairs)} system pairs) as the full re-judge's: restated {kept:.1%} (target >= 95%), old judge as is {old_kept:.1%}"
    )
    print(f"mappings chosen: {kinds}")
    reordered = {c: np.random.default_rng(7).permutation(v) for c, v in new.items()}
    chosen, weights = bridge.bridge_sample(composite_old, periods, budget, seed=0)
    refused = bridge.stitch(old["overall"], chosen, reordered["overall"][chosen], weights, reps=50)
    print(
        f"a reordering new judge: refused = {not refused.stitchable}: {refused.refusals[0] if refused.refusals else '-'}"
    )
    calls_bridge, calls_full = budget * len(CRITERIA), n * len(CRITERIA)
    print(
        f"cost: bridge {calls_bridge} judge calls vs full re-judge {calls_full}: {calls_bridge / calls_full:.1%} of the calls"
    )
    print(f"bench time {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
