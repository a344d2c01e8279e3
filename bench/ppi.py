"""Prediction-powered estimates on real human labels: the Topical-Chat release (360 responses, averaged
human scores on six criteria; UniEval's published scores of the same responses as the judge, read by
the same loader `rubricflow labels` uses). Over --reps random labelled subsets of --n texts:

- the coverage of the nominal 90% prediction-powered interval of the all-labels human mean
  (target >= 88%) and its median width against the labels-only interval's (target <= 0.85x), per
  criterion and overall (the criteria's mean on the unit scale, as `estimate` computes it);
- active selection against uniform selection at the same budget, on every human-labelled set at
  hand: Topical-Chat and SFHOT (UniEval's published scores as the judge) and the HHH preference
  pairs (the offline judge, each pair in both orders, re-asked, with logprobs). Each plan is
  estimated by Zrnic and Candes's active inference, centred (`ppi.active_mean(centred=True)`, each
  label weighted by the probability it had when drawn), against a uniform plan's PPI++ (what
  `estimate` computes). The signals are the literature's: the judge's own doubt (its score's
  sqrt(p(1-p)); UniEval's score is a token probability), the disagreement of the judge's criteria,
  of its two orders, of its re-asks and of its logprobs with its answer (where the set has them),
  an error model of |human - judge| fitted on a uniform burn-in (the paper's learned uncertainty,
  in two phases), the same model fitted on every label (10-fold, out of fold: the best a learned
  signal could do) and the true errors (unknowable: the ceiling); with each signal's correlation
  with the error and the share of the interval's variance that is the corpus's own spread (which
  no selection can reduce).

    python bench/ppi.py [--reps 1000] [--n 100] [--hhh-pairs 221] [--uniform-share 0.3]
    python bench/ppi.py --small-n 10    # only: the intervals' coverage at 10 labels, every criterion
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.stats import norm

from rubricflow.tasks.loaders.labels import topical_chat
from rubricflow.tasks.stats import labelling_plan, ppi
from rubricflow.tasks.stats.labelling_plan import inclusion_probabilities, systematic_sample

SHARED = Path(os.environ.get("RUBRICFLOW_SHARED", Path(__file__).resolve().parents[2] / "shared"))
DATA = SHARED / "data" / "calibration" / "topical_chat"
SFHOT = Path(__file__).resolve().parents[1] / "tests" / "data" / "calibration" / "sfhot"
HHH = SHARED / "data" / "calibration" / "hhh_alignment" / "hhh_alignment_eval.json"
SCALES = {  # the human scales of the release (shared/data/README.md)
    "understandability": (0, 1),
    "naturalness": (1, 3),
    "coherence": (1, 3),
    "engagingness": (1, 3),
    "groundedness": (0, 1),
    "overall": (1, 5),
}
SFHOT_SCALES = {"informativeness": (1, 6), "naturalness": (1, 6), "overall": (1, 6)}  # its SOURCE.md
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


@dataclass
class LabelledSet:
    """One human-labelled set: per target, the humans' scores and the judge's on the humans' scale;
    what an error model may read of every text; the judge's own signs of doubt, per text."""

    name: str
    targets: dict[str, tuple[np.ndarray, np.ndarray]]
    features: np.ndarray
    signals: dict[str, np.ndarray] = field(default_factory=dict)


def unieval_set(name: str, folder: Path, scales: dict[str, tuple[float, float]], shown: list[str]) -> LabelledSet:
    """A UniEval release (read by the loader `rubricflow labels` uses): UniEval's 0-1 scores mapped
    onto each criterion's human scale (a fixed map: PPI's lambda stays in [0, 1]); `all criteria` on
    the unit scale. Features: the judge's scores and their squares, the text's and the input's length,
    the text's word overlap with the context (the fact or the reference)."""
    texts, labels = topical_chat(folder)
    by: dict[tuple[str, str], dict[str, float]] = {}
    for text_id, criterion, rater, score in labels.select("text_id", "criterion_id", "rater", "score").iter_rows():
        by.setdefault((rater, criterion), {})[text_id] = score
    order = texts["text_id"].to_list()
    human = {c: np.array([by[("human", c)][t] for t in order]) for c in scales}
    judge = {c: np.array([by[("unieval", c)][t] for t in order]) for c in scales}
    targets = {"all criteria": (np.mean([(human[c] - lo) / (hi - lo) for c, (lo, hi) in scales.items()], axis=0),
                                np.mean([judge[c] for c in scales], axis=0))}  # fmt: skip
    targets |= {c: (human[c], lo + (hi - lo) * judge[c]) for c, (lo, hi) in scales.items() if c in shown}
    words = [set(str(t).lower().split()) for t in texts["text"]]
    context = [set(str(t).lower().split()) for t in texts["context"]]
    size = np.array([[len(w), len(str(i).split())] for w, i in zip(words, texts["input"], strict=True)]) / 20
    overlap = np.array([len(w & c) / max(1, len(w | c)) for w, c in zip(words, context, strict=True)])
    scores = [judge[c] for c in scales]
    features = np.column_stack([np.ones(len(order)), *scores, *(j**2 for j in scores), size, size**2, overlap])
    return LabelledSet(name, targets, features, {"criteria disagree": np.std(scores, axis=0)})


VERDICTS = """SELECT t.text_id, json_extract_string(t.metadata, '$.label'), j.criterion_id,
                     json_extract_string(j.value, '$'), j.unit_score, j.weighted_unit_score
              FROM judgments j JOIN texts t USING (corpus_id, text_id) WHERE j.status = 'scored'"""


def hhh_set(path: Path, pairs: int, samples: int) -> LabelledSet:
    """The HHH preference pairs (an even spread of `pairs` of them) judged by the offline judge through
    the scoring flow: a pairwise helpfulness rubric, each pair in both orders, `samples` answers at
    temperature 1 with logprobs. The target is the share of pairs whose side `a` the humans chose."""
    import duckdb
    from common import Server, on_the_shared_prefect_server

    from rubricflow.flows.ingest import ingest_flow
    from rubricflow.flows.score import score_corpus
    from rubricflow.rubrics.formats import dump
    from rubricflow.rubrics.library import Library
    from rubricflow.rubrics.pairwise import pairwise_rubric

    on_the_shared_prefect_server()
    records = json.loads(path.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp, Server() as server:
        work = Path(tmp)
        (work / "pairs.json").write_text(json.dumps(records[:: max(1, len(records) // pairs)][:pairs]))
        warehouse = str(work / "w.duckdb")
        ingest_flow(str(work / "pairs.json"), warehouse, "hhh")
        rubric = work / "helpfulness-pairwise.yaml"
        rubric.write_text(dump(pairwise_rubric(Library().bundle("helpfulness").rubric), "yaml"))
        config = {"base_url": server.base_url, "samples": samples, "temperature": 1.0, "logprobs": True}
        score_corpus("hhh", str(rubric), warehouse, config)
        with duckdb.connect(warehouse, read_only=True) as con:
            return pair_set(con.execute(VERDICTS).fetchall())


def pair_set(rows: list[tuple]) -> LabelledSet:
    """Per pair: the judge's share of verdicts for `a` over orders, criteria and answers (a tie a half),
    and how much its orders, criteria, answers and logprobs disagree."""
    verdicts: dict[str, dict[tuple[str, str], list[float]]] = {}
    gaps: dict[str, list[float]] = {}
    labels: dict[str, str] = {}
    for text_id, label, criterion, value, unit, weighted in rows:
        pair, order = text_id.rsplit(":", 1)
        first = {"a": 1.0, "b": 0.0}.get(value, 0.5)
        verdicts.setdefault(pair, {}).setdefault((criterion, order), []).append(first if order == "ab" else 1 - first)
        gap = abs(weighted - unit) if weighted is not None and unit is not None else 0.0
        gaps.setdefault(pair, []).append(float(np.nan_to_num(gap)))
        labels[pair] = label
    pairs = sorted(verdicts)
    y = np.array([labels[p] == "a" for p in pairs], dtype=float)
    f = np.array([np.mean([np.mean(v) for v in verdicts[p].values()]) for p in pairs])
    criteria = sorted({c for p in pairs for c, _ in verdicts[p]})
    signals = {
        "orders disagree": [
            np.mean([abs(np.mean(verdicts[p][(c, "ab")]) - np.mean(verdicts[p][(c, "ba")])) for c in criteria])
            for p in pairs
        ],  # fmt: skip
        "criteria disagree": [
            np.std([np.mean(verdicts[p][(c, "ab")] + verdicts[p][(c, "ba")]) for c in criteria]) for p in pairs
        ],  # fmt: skip
        "re-asks disagree": [np.mean([np.std(v) for v in verdicts[p].values()]) for p in pairs],
        "logprobs vs answer": [np.mean(gaps[p]) for p in pairs],
    }
    signals = {name: np.asarray(v, dtype=float) for name, v in signals.items()}
    sources = sorted({p.split("-")[0] for p in pairs})
    source = np.array([[p.split("-")[0] == s for s in sources] for p in pairs], dtype=float)
    features = np.column_stack([np.ones(len(pairs)), f, f**2, *signals.values(), source])
    return LabelledSet("HHH pairs (offline judge)", {"humans chose a": (y, f)}, features, signals)


def judge_doubt(y, f, features, burn_in, rest) -> np.ndarray:
    """The judge's own doubt: sqrt(p(1-p)) of its score on its range (a classifier's, as in the paper)."""
    p = (f[rest] - f.min()) / (f.max() - f.min())
    return np.sqrt(p * (1 - p))


def residual(y: np.ndarray, f: np.ndarray) -> np.ndarray:
    """|human - the judge's least-squares line|: the error a selection should follow."""
    if f.std() == 0:
        return np.abs(y - y.mean())
    return np.abs(y - np.polyval(np.polyfit(f, y, 1), f))


def error_model(y, f, features, burn_in, rest) -> np.ndarray:
    """|human - judge| predicted from what the set gives of every text (the judge's scores and their
    squares, text statistics, the judge's doubts) by a ridge model fitted on the burn-in's labels:
    Zrnic and Candes's learned uncertainty."""
    error = residual(y[burn_in], f[burn_in])
    predicted = features[rest] @ ridge_fit(features[burn_in], error)
    return np.clip(predicted, 0.2 * error.mean(), None)


def learned_on_all(y, f, features, burn_in, rest, folds: int = 10) -> np.ndarray:
    """The same error model fitted on every label, each text predicted by the folds without it: the
    best a learned signal could do (unknowable before labelling everything)."""
    error, predicted = residual(y, f), np.empty(len(y))
    for fold in range(folds):
        held = np.arange(len(y)) % folds == fold
        predicted[held] = features[held] @ ridge_fit(features[~held], error[~held])
    return np.clip(predicted, 0.2 * error.mean(), None)[rest]


def true_error(y, f, features, burn_in, rest) -> np.ndarray:
    """The true |residual| (known only once every text is labelled): the ceiling of any signal."""
    return residual(y, f)[rest]


def observed(values: np.ndarray):
    """A sign of doubt the judge gave for every text, as a signal."""
    return lambda y, f, features, burn_in, rest: values[rest]


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
    return ppi.active_mean(y[labelled], labelled, f, pi, ALPHA, centred=True)[0], corr


def planned(y, f, features, n: int, reps: int, seed: int, signal, burn: int = 0) -> tuple[float, float, float]:
    """(coverage, median width, median correlation of the signal with the error) over `reps` plans."""
    rng = np.random.default_rng(seed)
    covered, widths, corrs = 0, [], []
    for _ in range(reps):
        interval, corr = two_phase(y, f, features, n, burn, rng, signal)
        covered += interval.low <= y.mean() <= interval.high
        widths.append(interval.width)
        corrs.append(corr)
    corr = float(np.nanmedian(corrs)) if signal and not np.isnan(corrs).all() else float("nan")
    return covered / reps, float(np.median(widths)), corr


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


def arms(labelled: LabelledSet, burn: int) -> dict[str, tuple]:
    """Each way of choosing the texts: (signal, uniform burn-in labels)."""
    return {
        "uniform (centred active inference)": (None, 0),
        "judge's doubt sqrt(p(1-p))": (judge_doubt, 0),
        **{name: (observed(values), 0) for name, values in labelled.signals.items()},
        f"error model, {burn}-label burn-in": (error_model, burn),
        "error model on all labels (10-fold)": (learned_on_all, burn),
        "true error (ceiling)": (true_error, burn),
    }


def active_table(labelled: LabelledSet, n: int, reps: int, seed: int) -> tuple[float, float, str]:
    """Print, per target, each plan's median width against a uniform plan's PPI++ (what `estimate`
    computes) and against uniform selection under the same estimator (the selection's own effect),
    with coverage and the signal's correlation with the error; return the narrowest selection ratio
    of a signal one can know before labelling (not the ceiling, not fitted on all labels) whose
    coverage is >= 88%, the same plan's ratio against uniform PPI++, and its name."""
    n = min(n, len(labelled.features) // 3)
    burn = int(0.4 * n)
    print(f"{labelled.name}: {len(labelled.features)} texts, {n} labels; median width against uniform PPI++ and "
          "against uniform selection (coverage of the 90% interval; the signal's correlation with the error)")  # fmt: skip
    best = (float("inf"), float("inf"), "")
    for target, (y, f) in labelled.targets.items():
        coverage, base = uniform_plan(y, f, n, reps, seed)
        floor = y.var() / len(y) / (base / 2 / norm.ppf(1 - ALPHA / 2)) ** 2
        print(f"  {target} (r = {np.corrcoef(y, f)[0, 1]:.2f}): uniform PPI++ covers {coverage:.1%}; "
              f"{floor:.0%} of its variance is the corpus's spread")  # fmt: skip
        uniform = float("nan")
        for name, (signal, burn_in) in arms(labelled, burn).items():
            coverage, width, corr = planned(y, f, labelled.features, n, reps, seed, signal, burn_in)
            uniform = width if signal is None else uniform
            print(f"    {name:<38} {width / base:>6.3f}x {width / uniform:>6.3f}x {coverage:>7.1%}   r {corr:>5.2f}")
            knowable = signal not in (None, true_error, learned_on_all)
            if knowable and coverage >= 0.88 and width / uniform < best[0]:
                best = (width / uniform, width / base, f"{target}, {name}")
    return best


def small_n_table(n: int, reps: int, seed: int) -> float:
    """The coverage of `estimate`'s nominal 90% intervals (powered and labels-only; small-n corrected:
    Student's t with a pseudo-observation of the scale's largest variance; a pass rate's labels-only
    interval Clopper-Pearson, its powered one holding that one under 10 labelled passes or fails, as
    `estimate` does) at n labels, on every criterion of both UniEval sets, for the mean and the pass rate
    at the scale's midpoint, beside the normal intervals (ppi-python's) they replace. Returns the
    least coverage of the corrected intervals."""
    sets = [(unieval_set("Topical-Chat", DATA, SCALES, list(SCALES)), SCALES),
            (unieval_set("SFHOT", SFHOT, SFHOT_SCALES, list(SFHOT_SCALES)), SFHOT_SCALES)]  # fmt: skip
    print(f"coverage of the nominal 90% intervals at {n} labels, {reps} random subsets: small-n corrected "
          "(normal, as before)")  # fmt: skip
    least = 1.0
    for labelled, scales in sets:
        for name, (y, f) in labelled.targets.items():
            low, high = scales.get(name, (0.0, 1.0))
            middle = (low + high) / 2
            rows = {"mean": (y, f, high - low), "pass rate": ((y >= middle) * 1.0, (f >= middle) * 1.0, 1.0)}
            for figure, (truth, judge, span) in rows.items():
                got = small_n_coverage(truth, judge, span, n, reps, seed, figure == "pass rate")
                least = min(least, got[0], got[1])
                print(f"{labelled.name:<13} {name:<18} {figure:<9} powered {got[0]:6.1%} ({got[2]:6.1%})  "
                      f"labels only {got[1]:6.1%} ({got[3]:6.1%})")  # fmt: skip
    print(f"least coverage of the small-n corrected intervals at {n} labels: {least:.1%} (target >= 88%)")
    return least


def small_n_coverage(y, f, span: float, n: int, reps: int, seed: int, rate: bool) -> tuple[float, ...]:
    """(powered, labels-only, normal powered, normal labels-only) coverage over `reps` subsets of n."""
    rng, covered = np.random.default_rng(seed), np.zeros(4)
    for _ in range(reps):
        chosen = rng.choice(len(y), n, replace=False)
        labels = y[chosen]
        alone = ppi.clopper_pearson(labels, ALPHA) if rate else ppi.t_mean(labels, ALPHA, span)
        powered = ppi.ppi_mean_small_n(labels, f[chosen], f, span, ALPHA)[0]
        intervals = (
            ppi.powered_rate(powered, alone, labels) if rate else powered,
            alone,
            ppi.ppi_mean(labels, f[chosen], f, alpha=ALPHA)[0],
            ppi.classical(labels, alpha=ALPHA),
        )
        covered += [i.low <= y.mean() <= i.high for i in intervals]
    return tuple(covered / reps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--hhh-pairs", type=int, default=221, help="HHH pairs judged (0: leave the set out)")
    parser.add_argument("--hhh-samples", type=int, default=3, help="answers a pair order and criterion")
    parser.add_argument("--uniform-share", type=float, default=labelling_plan.UNIFORM_SHARE,
                        help="the uniform share of each active probability (`labels plan --active`: 0.3)")  # fmt: skip
    parser.add_argument("--small-n", type=int, default=0, help="only the coverage table at this many labels")
    args = parser.parse_args()
    if args.small_n:
        small_n_table(args.small_n, args.reps, args.seed)
        return
    labelling_plan.UNIFORM_SHARE = args.uniform_share  # what inclusion_probabilities mixes in
    human, judge = load(args.data)
    print(f"Topical-Chat: {len(human['overall'])} texts, {args.reps} labelled subsets of {args.n}, 90% intervals")
    print(f"{'criterion':<18} {'coverage':>9} {'width PPI/labels':>17} {'labels gained':>14} {'r':>6}")
    for criterion in [*SCALES, "all criteria"]:
        y, f = human[criterion], judge[criterion]
        coverage, ratio, gained = uniform_subsets(y, f, args.n, args.reps, args.seed)
        r = np.corrcoef(y, f)[0, 1]
        print(f"{criterion:<18} {coverage:>9.1%} {ratio:>16.3f}x {gained:>14.1f} {r:>6.3f}")
    sets = [unieval_set("Topical-Chat", args.data, SCALES, ["groundedness", "understandability"]),
            unieval_set("SFHOT", SFHOT, SFHOT_SCALES, ["overall"])]  # fmt: skip
    if args.hhh_pairs:
        sets.append(hhh_set(HHH, args.hhh_pairs, args.hhh_samples))
    best = {s.name: active_table(s, args.n, args.reps, args.seed) for s in sets}
    print("width ratio active / uniform selection (the narrowest knowable signal covering >= 88%, per set): "
          + "; ".join(f"{name} {ratio:.3f}x ({what}; {against:.3f}x of uniform PPI++)" if what
                      else f"{name} none covers 88%" for name, (ratio, against, what) in best.items()))  # fmt: skip


if __name__ == "__main__":
    main()
