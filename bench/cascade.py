"""Bench: the judge cascade's guarantee and savings over random calibration / test splits (#40).

The data: real texts (the Topical-Chat responses of ../shared/data/calibration/topical_chat) scored
with llm-slop through the real score flow by two judges of the offline judge server: the strong
one (the offline judge) and a cheap, degraded one (a persona of it, `offline-cheap`, whose answers
move and whose token logprobs are the less sure the more they moved). Each split draws a
calibration sample, chooses the threshold on it (tasks/stats/cascade.py, as `score --cascade`
does), and measures on the other texts: the kept texts' agreement with the strong judge (the same
pass/fail verdict), the fraction escalated, and the cost against strong-only at --price-ratio (a
cheap call's price over a strong call's). The target must be reached in >= 1 - delta of splits.

    python bench/cascade.py [--texts 360] [--splits 500] [--calibration 0.5] [--agreement 0.95 --delta 0.1]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from common import Server, on_the_shared_prefect_server

from rubricflow.flows.cascade import _confidence
from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.rubrics.compiler import compile_for_scoring
from rubricflow.rubrics.library import resolve
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.stats.cascade import choose_threshold
from rubricflow.warehouse import db

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "calibration" / "topical_chat"
CHEAP, STRONG = "offline-cheap", "rubricflow-offline-judge"


def judged(folder: Path, texts: int, base_url: str) -> tuple[np.ndarray, np.ndarray]:
    """(cheap confidence, agrees with the strong judge) per text, both judges through the score flow."""
    records = json.loads((DATA / "judge_predictions.json").read_text(encoding="utf-8"))[:texts]
    corpus = folder / "c.jsonl"
    corpus.write_text(
        "".join(json.dumps({"id": f"t{i:04d}", "text": r["system_output"]}) + "\n" for i, r in enumerate(records))
    )
    warehouse = str(folder / "w.duckdb")
    ingest_flow(str(corpus), warehouse, "c")
    cheap = {"base_url": base_url, "model": CHEAP, "logprobs": True}
    strong = {"base_url": base_url, "model": STRONG}
    for judge in (cheap, strong):
        score_corpus("c", "llm-slop", warehouse, judge)
    hashes = (
        compile_for_scoring(resolve("llm-slop")).hash,
        JudgeConfig(**cheap).judge_hash(),
        JudgeConfig(**strong).judge_hash(),
    )
    ids = [f"t{i:04d}" for i in range(len(records))]
    confidence = _confidence(warehouse, "c", hashes, ids)
    with db.reader(warehouse) as con:
        rows = db.fetch(
            con, "cascade_agreement.sql", corpus="c", rubric=hashes[0], cheap=hashes[1], strong=hashes[2], texts=ids
        )
    agree = {r["text_id"]: r["agree"] for r in rows if r["text_id"] in confidence}
    keys = sorted(agree)
    return np.array([confidence[t] for t in keys]), np.array([agree[t] for t in keys])


def splits(conf: np.ndarray, agree: np.ndarray, args: argparse.Namespace) -> dict:
    """The guarantee and the savings over random splits."""
    rng = np.random.default_rng(args.seed)
    reached, escalated, costs = 0, [], []
    cal = int(round(args.calibration * conf.size))
    for _ in range(args.splits):
        order = rng.permutation(conf.size)
        c, t = order[:cal], order[cal:]
        threshold = choose_threshold(list(conf[c]), list(agree[c]), args.agreement, args.delta).value
        kept = conf[t] >= threshold
        reached += (agree[t][kept].mean() if kept.any() else 1.0) >= args.agreement
        escalated.append(1 - kept.mean())
        strong_calls = cal + (~kept).sum()  # calibration texts and escalated ones
        costs.append((args.price_ratio * conf.size + strong_calls) / conf.size)
    return {"reached": reached / args.splits, "escalated": float(np.mean(escalated)), "cost": float(np.mean(costs))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=360)
    parser.add_argument("--splits", type=int, default=500)
    parser.add_argument("--calibration", type=float, default=0.5, help="Share of texts in the calibration sample.")
    parser.add_argument("--agreement", type=float, default=0.95)
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--price-ratio", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    on_the_shared_prefect_server()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, Server() as server:
        conf, agree = judged(Path(tmp), args.texts, server.base_url)
    judged_s = time.perf_counter() - started
    print(f"{conf.size} texts judged by both ({judged_s:.1f} s); cheap agrees with strong on {agree.mean():.3f}")
    r = splits(conf, agree, args)
    print(
        f"{args.splits} splits: kept agreement >= {args.agreement} in {r['reached']:.3f} (>= {1 - args.delta}: ", end=""
    )
    print("holds)" if r["reached"] >= 1 - args.delta else "FAILS)")
    print(f"escalated {r['escalated']:.3f} of the test texts on average")
    print(f"cost ratio cascade / strong-only: {r['cost']:.3f} (a cheap call at {args.price_ratio} of a strong one)")


if __name__ == "__main__":
    sys.exit(main())
