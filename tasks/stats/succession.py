"""`rubricflow judge bridge` over the warehouse: which texts the new judge re-judges (the bridge,
stratified over the old judge's scores and nights, plus the nightly canary), and, once it has, the
per-criterion mappings, stitched means and the verdict: stitch, or refuse with the reasons."""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb
import numpy as np

from rubricflow.errors import InputError
from rubricflow.tasks.stats import bridge
from rubricflow.tasks.stats.calibration import CalibrationError, one_judge_setup
from rubricflow.warehouse import db

CANARY_TOLERANCE = 0.05  # the canary's texts may sit this far (unit scale) off the mapped scale


@dataclass
class Plan:
    corpus: str
    rubric_hash: str
    old_judge: str
    texts: list[str]  # every text the old judge scored, in one order
    bridge: list[str]
    weights: list[float]
    canary: list[str]


def old_judgments(con: duckdb.DuckDBPyConnection, corpus: str, rubric_hash: str, judge: str, canary: int) -> list[dict]:
    return db.fetch(con, "bridge_scores.sql", corpus=corpus, rubric=rubric_hash, judge=judge, canary=canary)


def plan(con, corpus: str, rubric: str, old: str, budget: int | None, canary: int = 20, seed: int = 0) -> Plan:
    """The bridge to judge: `budget` texts (default 5% of the corpus, at least MIN_BRIDGE) stratified
    over the old judge's mean unit score and over the nights it judged them, and the canary."""
    try:
        rubric_hash, old_hash = one_judge_setup(con, corpus, rubric, None, old)
    except CalibrationError:  # not a judge hash prefix: a model's name
        rubric_hash, old_hash = one_judge_setup(con, corpus, rubric, old, None)
    rows = old_judgments(con, corpus, rubric_hash, old_hash, canary)
    by_text: dict[str, list[float]] = {}
    nights: dict[str, str] = {}
    for r in rows:
        by_text.setdefault(r["text_id"], []).append(r["unit_score"])
        nights[r["text_id"]] = str(r["night"])
    texts = sorted(by_text)
    size = budget if budget is not None else max(bridge.MIN_BRIDGE, round(0.05 * len(texts)))
    if size < bridge.MIN_BRIDGE or size > len(texts):
        raise InputError(
            f"--budget must be between {bridge.MIN_BRIDGE} and the {len(texts)} texts the old judge scored"
        )
    means = np.array([np.mean(by_text[t]) for t in texts])
    chosen, weights = bridge.bridge_sample(means, [nights[t] for t in texts], size, seed=seed)
    canary_ids = sorted({r["text_id"] for r in rows if r["canary"]})
    return Plan(corpus, rubric_hash, old_hash, texts, [texts[i] for i in chosen], list(weights), canary_ids)


@dataclass
class Verdict:
    criteria: list[dict] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)

    @property
    def stitchable(self) -> bool:
        return not self.refusals


def fit(con, chosen: Plan, new_judge: str) -> Verdict:
    """Per criterion: the mapping old -> new fitted on the bridge, the stitched corpus mean on the new
    judge's scale with its band, and whether the mapping holds on the canary."""
    old = _scores(old_judgments(con, chosen.corpus, chosen.rubric_hash, chosen.old_judge, 0))
    new = _scores(old_judgments(con, chosen.corpus, chosen.rubric_hash, new_judge, 0))
    verdict = Verdict()
    for criterion, old_of in old.items():
        new_of = new.get(criterion, {})
        pairs = [(i, t) for i, t in enumerate(chosen.bridge) if t in new_of]
        if len(pairs) < bridge.MIN_BRIDGE:
            verdict.refusals.append(
                f"{criterion}: the new judge scored {len(pairs)} bridge texts (< {bridge.MIN_BRIDGE})"
            )
            continue
        texts = sorted(old_of)
        index = {t: k for k, t in enumerate(texts)}
        old_all = np.array([old_of[t] for t in texts])
        weights = [chosen.weights[i] for i, _ in pairs]
        stitched = bridge.stitch(old_all, [index[t] for _, t in pairs], [new_of[t] for _, t in pairs], weights)
        canary = [t for t in chosen.canary if t in new_of and t in old_of]
        reasons = list(stitched.refusals)
        if len(canary) >= 2:
            found = bridge.transports(
                stitched.mapping, [old_of[t] for t in canary], [new_of[t] for t in canary], ["canary"] * len(canary),
                "the", CANARY_TOLERANCE,
            )  # fmt: skip
            reasons += found
        verdict.refusals += [f"{criterion}: {r}" for r in reasons]
        verdict.criteria.append(_row(criterion, stitched, old_all, len(pairs), len(canary)))
    return verdict


def _scores(rows: list[dict]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for r in rows:
        out.setdefault(r["criterion_id"], {})[r["text_id"]] = r["unit_score"]
    return out


def _row(criterion: str, stitched: bridge.Stitch, old_all: np.ndarray, bridged: int, canary: int) -> dict:
    return {
        "criterion": criterion,
        "mapping": stitched.mapping.kind,
        "knots": [list(stitched.mapping.knots_x), list(stitched.mapping.knots_y)],
        "held_out_error": stitched.errors,
        "rank_agreement": stitched.rank_agreement,
        "old_mean": float(old_all.mean()),
        "stitched_mean": stitched.mean,
        "band": list(stitched.band),
        "bridge_texts": bridged,
        "canary_texts": canary,
        "stitchable": stitched.stitchable,
    }
