"""`rubricflow judge bridge` over the warehouse: which texts the new judge re-judges (the bridge,
stratified over the old judge's scores and nights, plus the nightly canary), and, once it has, the
per-criterion mappings, stitched means and the verdict: stitch, or refuse with the reasons."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np

from rubricflow.errors import InputError
from rubricflow.tasks.stats import bridge
from rubricflow.tasks.stats.calibration import CalibrationError, one_judge_setup
from rubricflow.warehouse import db

MIN_LABELS = 10  # fewer labelled texts judged by both judges: no equating to the humans
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
    human: str | None = None  # the rater whose labels both judges are equated to
    labelled: list[str] = field(default_factory=list)

    def to_judge(self) -> list[str]:
        """What the new judge judges: the bridge, the canary and the labelled texts."""
        return sorted(set(self.bridge) | set(self.canary) | set(self.labelled))


def old_judgments(con: duckdb.DuckDBPyConnection, corpus: str, rubric_hash: str, judge: str, canary: int) -> list[dict]:
    return db.fetch(con, "bridge_scores.sql", corpus=corpus, rubric=rubric_hash, judge=judge, canary=canary)


def plan(
    con,
    corpus: str,
    rubric: str,
    old: str,
    budget: int | None,
    canary: int = 20,
    seed: int = 0,
    human: str | None = None,
) -> Plan:
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
    labelled = sorted({r["text_id"] for r in labels(con, corpus, rubric_hash, human)} & set(texts)) if human else []
    bridged = [texts[i] for i in chosen]
    return Plan(corpus, rubric_hash, old_hash, texts, bridged, list(weights), canary_ids, human, labelled)


def labels(con, corpus: str, rubric_hash: str, rater: str) -> list[dict]:
    return db.fetch(con, "bridge_labels.sql", corpus=corpus, rubric=rubric_hash, rater=rater)


SCORE = "(text score)"  # the composite's row: no criterion id has parentheses


@dataclass
class Verdict:
    criteria: list[dict] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    score: dict | None = None  # the text score (the series' own figure) stitched the same way

    @property
    def stitchable(self) -> bool:
        return not self.refusals


def fit(con, chosen: Plan, new_judge: str) -> Verdict:
    """Per criterion: the mapping old -> new fitted on the bridge, the stitched corpus mean on the new
    judge's scale with its band, and whether the mapping holds on the canary."""
    old = _scores(old_judgments(con, chosen.corpus, chosen.rubric_hash, chosen.old_judge, 0))
    new = _scores(old_judgments(con, chosen.corpus, chosen.rubric_hash, new_judge, 0))
    humans: dict[str, dict[str, float]] = {}
    for r in labels(con, chosen.corpus, chosen.rubric_hash, chosen.human) if chosen.human else []:
        humans.setdefault(r["criterion_id"], {})[r["text_id"]] = r["unit_label"]
    verdict = Verdict()
    composite: dict[str, dict[str, float]] = {SCORE: {}, "new": {}}
    for judge, into in ((chosen.old_judge, SCORE), (new_judge, "new")):
        for r in db.fetch(con, "bridge_text_scores.sql", corpus=chosen.corpus, rubric=chosen.rubric_hash, judge=judge):
            composite[into][r["text_id"]] = r["score"]
    old[SCORE], new[SCORE] = composite[SCORE], composite["new"]
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
        row = _row(criterion, stitched, old_all, len(pairs), len(canary))
        row["humans"] = _equated(humans.get(criterion, {}), old_of, new_of, old_all, stitched.mapping)
        if criterion == SCORE:
            verdict.score = row
        else:
            verdict.criteria.append(row)
    return verdict


def _equated(human_of: dict, old_of: dict, new_of: dict, old_all: np.ndarray, mapping) -> dict | None:
    """Both judges equated to the humans on the texts the rater labelled and both judged."""
    both = [t for t in human_of if t in old_of and t in new_of]
    if len(both) < MIN_LABELS:
        return None
    y, old_l = [human_of[t] for t in both], np.array([old_of[t] for t in both])
    return {
        "old": bridge.equated_to_humans(y, old_l, old_l, old_all),
        "new": bridge.equated_to_humans(y, [new_of[t] for t in both], old_l, old_all, to_judge=mapping),
    }


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


def record(con, chosen: Plan, new_judge: str, verdict: Verdict) -> str:
    """Keep the bridge's verdict (judge_bridges): `judge series` restates nights through it."""
    import json
    import uuid

    bridge_id = f"b{uuid.uuid4().hex[:12]}"
    document = {"criteria": verdict.criteria, "score": verdict.score, "refusals": verdict.refusals}
    db.run_sql(
        con, "bridge_record.sql", bridge=bridge_id, corpus=chosen.corpus, rubric=chosen.rubric_hash,
        old=chosen.old_judge, new=new_judge, texts=len(chosen.bridge), stitchable=verdict.stitchable,
        verdict=json.dumps(document),
    )  # fmt: skip
    return bridge_id


def series(con, corpus: str, rubric_hash: str) -> list[dict]:
    """The nightly series of a rubric version, each night judged by a bridged judge restated on the
    new judge's scale: the text score's mapping applied to the night's mean, its band the bridge's
    half-width added on either side (exact for a linear mapping; otherwise the mapped mean)."""
    import json

    nights = []
    for row in db.fetch(con, "bridge_series.sql", corpus=corpus, rubric=rubric_hash):
        score = json.loads(row["verdict"])["score"] if row["verdict"] else None
        stated = {"night": row["night"], "judge": row["judge_hash"], "mean": row["mean_score"], "new_judge": None}
        if score and row["mean_score"] is not None:
            mapping = _mapping(score)
            half = (score["band"][1] - score["band"][0]) / 2
            mapped = float(mapping(row["mean_score"]))
            stated |= {"new_judge": row["new_judge"], "restated": mapped, "band": [mapped - half, mapped + half]}
        nights.append(stated)
    return nights


def restated_abs(con, corpus: str) -> list[dict]:
    """Each stored A/B of the corpus re-stated on the new judge's scale where both sides' judges are
    bridged to the same new judge: the paired text-score difference and its decision (A, B or none)
    before and after, and whether it flips. A/Bs without such bridges are listed as not restated."""
    import json

    out = []
    for row in db.fetch(con, "bridge_ab.sql", corpus=corpus):
        ab: dict[str, Any] = {
            "a": [row["rubric_a"], row["judge_a"]],
            "b": [row["rubric_b"], row["judge_b"]],
            "new_judge": None,
        }
        if row["verdict_a"] and row["verdict_b"] and row["new_a"] == row["new_b"]:
            score_a, score_b = json.loads(row["verdict_a"])["score"], json.loads(row["verdict_b"])["score"]
            a, b = (
                _text_scores(con, corpus, row["rubric_a"], row["judge_a"]),
                _text_scores(con, corpus, row["rubric_b"], row["judge_b"]),
            )
            both = sorted(set(a) & set(b))
            if score_a and score_b and len(both) > 1:
                to_new_a, to_new_b = _mapping(score_a), _mapping(score_b)
                old_a, old_b = np.array([a[t] for t in both]), np.array([b[t] for t in both])
                before = bridge.paired_decision(old_a - old_b)
                after = bridge.paired_decision(to_new_a(old_a) - to_new_b(old_b))
                ab |= {"new_judge": row["new_a"], "before": before, "after": after}
                ab["flips"] = before["decision"] != after["decision"]
        out.append(ab)
    return out


def _mapping(score: dict) -> bridge.Mapping:
    return bridge.Mapping(score["mapping"], *map(tuple, score["knots"]))


def _text_scores(con, corpus: str, rubric_hash: str, judge: str) -> dict[str, float]:
    rows = db.fetch(con, "bridge_text_scores.sql", corpus=corpus, rubric=rubric_hash, judge=judge)
    return {r["text_id"]: r["score"] for r in rows}
