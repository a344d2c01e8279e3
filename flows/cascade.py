"""The judge cascade flow: a cheap judge answers every text, a strong judge only the texts the cheap
judge is unsure of, at a threshold chosen so that the texts kept agree with the strong judge at the
target rate with probability >= 1 - delta (tasks/stats/cascade.py).

Every judgment goes through the score flow (the same client, rate limits, budget and resume): the
cheap judge first on a seeded calibration sample (refused at once when it gives no confidence:
token logprobs where its endpoint returns them, else its agreement with itself across re-asks, when
it samples each cell several times at a temperature above 0),
the strong judge on that sample, the cheap judge on the rest, then the strong judge on the texts
below the threshold. A strong cell that fails stays unscored (the text's level says strong): the
next run of the same cascade plans it again; it is never filled by the cheap judge's answer."""

from __future__ import annotations

import datetime as dt
import json
import secrets
from dataclasses import asdict, dataclass

from prefect import flow, get_run_logger

from rubricflow.errors import InputError
from rubricflow.flows.score import EndpointRefused
from rubricflow.flows.shared_budget import SharedBudget
from rubricflow.rubrics.compiler import compile_for_scoring
from rubricflow.rubrics.library import resolve
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.stats.cascade import Threshold, choose_threshold
from rubricflow.tasks.stats.sequential import seeded_order
from rubricflow.warehouse import db, steps


class NoConfidence(InputError):
    """The cheap judge gave no usable confidence (no token logprobs at the scale's values, no re-asks)."""


def reasks(judge: dict) -> bool:
    """Whether the cheap judge's re-asks can measure its confidence: several samples, temperature > 0."""
    config = JudgeConfig(**judge)
    return config.samples >= 2 and config.temperature > 0


@dataclass
class CascadeResult:
    cascade_id: str
    threshold: float | None
    calibration_texts: int
    texts: int
    confidence: str  # logprobs | re-asks: where the cheap judge's confidence came from
    escalated: int  # texts outside the calibration sample sent to the strong judge
    unscored: int  # texts whose deciding judge has no score (a failed strong cell: retried next run)
    split: list[dict]
    costs: dict


def parse_cascade(spec: str) -> tuple[str, str]:
    """`cheap=MODEL_A,strong=MODEL_B` -> (cheap, strong)."""
    parts = dict(p.split("=", 1) for p in spec.split(",") if "=" in p)
    if set(parts) != {"cheap", "strong"} or not all(parts.values()) or spec.count(",") != 1:
        raise InputError(f"--cascade takes cheap=MODEL,strong=MODEL, got {spec!r}")
    return parts["cheap"].strip(), parts["strong"].strip()


@flow(name="score-cascade", log_prints=True)
def cascade_flow(
    corpus_id: str,
    rubric: str,
    warehouse_path: str,
    judge: dict,
    cheap_model: str,
    strong_model: str,
    agreement: float = 0.9,
    delta: float = 0.1,
    calibration: int = 200,
    seed: int = 0,
) -> dict:
    """`judge` holds the JudgeConfig fields both levels share; each level adds its model."""
    if not 0 < agreement < 1 or not 0 < delta < 1:
        raise InputError(f"--agreement and --delta must lie strictly between 0 and 1, got {agreement}, {delta}")
    cheap = {**judge, "model": cheap_model, "logprobs": True}
    strong = {**judge, "model": strong_model}
    if not JudgeConfig(**cheap).wants_logprobs() and not reasks(cheap):
        raise NoConfidence(
            f"the cheap judge's provider returns no logprobs: the cascade has no confidence for {cheap_model!r} "
            "(re-asks give one: --samples 3 or more at a --temperature above 0)"
        )
    hashes = (
        compile_for_scoring(resolve(rubric), source=rubric).hash,
        JudgeConfig(**cheap).judge_hash(),
        JudgeConfig(**strong).judge_hash(),
    )
    with db.reader(warehouse_path) as con:
        if not steps.corpus_exists(con, corpus_id):
            raise InputError(f"no corpus {corpus_id!r} in {warehouse_path}; run `rubricflow ingest` first")
        order = seeded_order([r["text_id"] for r in db.fetch(con, "sequential_texts.sql", corpus=corpus_id)], seed)
    sample, rest, spend = order[:calibration], order[calibration:], SharedBudget(warehouse_path, cheap, strong)
    spend.score(corpus_id, rubric, cheap, sample)
    source = "logprobs"
    confidence = _confidence(warehouse_path, corpus_id, hashes, sample)
    if not confidence and reasks(cheap):
        source, confidence = "re-asks", _reask_confidence(warehouse_path, corpus_id, hashes, sample)
    if not confidence:
        raise NoConfidence(
            f"the cheap judge {cheap_model!r} gave no usable confidence (no token logprobs at the scale's values, "
            "no re-asks) on the calibration texts: a cascade needs them; use a judge whose endpoint returns "
            "logprobs, or --samples 3 or more at a --temperature above 0"
        )
    spend.score(corpus_id, rubric, strong, sample)
    threshold = _threshold(warehouse_path, corpus_id, hashes, sample, confidence, agreement, delta)
    if rest:
        spend.score(corpus_id, rubric, cheap, rest)
        measure = _confidence if source == "logprobs" else _reask_confidence
        confidence |= measure(warehouse_path, corpus_id, hashes, rest)
    escalate = [t for t in rest if confidence.get(t, -1.0) < threshold.value]
    if escalate:
        try:
            spend.score(corpus_id, rubric, strong, escalate)
        except EndpointRefused as exc:  # recorded as a failed run; its cells stay unscored, planned again next run
            get_run_logger().error("the strong judge answered no escalated text: %s", exc)
    levels = {t: "calibration" for t in sample} | {t: "cheap" for t in rest} | {t: "strong" for t in escalate}
    options = {"agreement": agreement, "delta": delta, "seed": seed, "models": (cheap_model, strong_model),
               "confidence": source}  # fmt: skip
    return asdict(_record(warehouse_path, corpus_id, hashes, options, threshold, levels, confidence))


def _confidence(warehouse_path: str, corpus_id: str, hashes: tuple, texts: list[str]) -> dict[str, float]:
    """text -> the least probability the cheap judge gave the values it chose; texts with a
    criterion whose probabilities are missing have none (they are escalated)."""
    with db.reader(warehouse_path) as con:
        rows = db.fetch(
            con, "cascade_confidence.sql", corpus=corpus_id, rubric=hashes[0], judge=hashes[1], only=True, texts=texts
        )
    least: dict[str, float | None] = {}
    for r in rows:
        probs = json.loads(r["value_probs"]) if r["value_probs"] else {}
        p = probs.get(str(json.loads(r["value"])) if r["value"] is not None else "")
        known = least.get(r["text_id"], 1.0)
        least[r["text_id"]] = None if p is None or known is None else min(known, float(p))
    return {t: p for t, p in least.items() if p is not None}


def _reask_confidence(warehouse_path: str, corpus_id: str, hashes: tuple, texts: list[str]) -> dict[str, float]:
    """text -> the share of the cheap judge's samples that agree with its most common answer, on its
    least agreeing criterion (a small panel of itself: where it wavers, the strong judge decides)."""
    with db.reader(warehouse_path) as con:
        rows = db.fetch(con, "cascade_reask_confidence.sql", corpus=corpus_id, rubric=hashes[0], judge=hashes[1],
                        texts=texts)  # fmt: skip
    return {r["text_id"]: float(r["confidence"]) for r in rows}


def _threshold(warehouse_path, corpus_id, hashes, sample, confidence, agreement, delta) -> Threshold:
    with db.reader(warehouse_path) as con:
        rows = db.fetch(
            con,
            "cascade_agreement.sql",
            corpus=corpus_id,
            rubric=hashes[0],
            cheap=hashes[1],
            strong=hashes[2],
            texts=sample,
        )
    both = [r for r in rows if r["text_id"] in confidence]
    chosen = choose_threshold([confidence[r["text_id"]] for r in both], [r["agree"] for r in both], agreement, delta)
    get_run_logger().info("cascade threshold %s from %s calibration texts judged by both", chosen, len(both))
    return chosen


def _record(warehouse_path, corpus_id, hashes, options, threshold: Threshold, levels, confidence) -> CascadeResult:
    cascade_id = dt.datetime.now(dt.UTC).strftime("k%Y%m%d-%H%M%S-") + secrets.token_hex(3)
    texts = sorted(levels)
    with db.writer(warehouse_path) as con:
        db.run_sql(
            con,
            "record_cascade.sql",
            cascade_id=cascade_id,
            corpus=corpus_id,
            rubric=hashes[0],
            cheap_model=options["models"][0],
            cheap_judge=hashes[1],
            strong_model=options["models"][1],
            strong_judge=hashes[2],
            agreement=options["agreement"],
            delta=options["delta"],
            seed=options["seed"],
            threshold=None if threshold.value == float("inf") else float(threshold.value),
            calibration_texts=sum(v == "calibration" for v in levels.values()),
            calibration_kept=threshold.kept,
            kept_disagreements=threshold.disagreements,
            upper_bound=threshold.upper_bound,
            texts=texts,
            confidences=[confidence.get(t) for t in texts],
            levels=[levels[t] for t in texts],
        )
    with db.reader(warehouse_path) as con:
        split = db.fetch(con, "cascade_split_of.sql", cascade=cascade_id)
        costs = db.fetch(con, "cascade_costs_of.sql", cascade=cascade_id)
    return CascadeResult(
        cascade_id=cascade_id,
        threshold=None if threshold.value == float("inf") else float(threshold.value),
        calibration_texts=sum(v == "calibration" for v in levels.values()),
        confidence=options["confidence"],
        texts=len(texts),
        escalated=sum(v == "strong" for v in levels.values()),
        unscored=sum(r["texts"] - r["scored"] for r in split),
        split=split,
        costs=costs[0] if costs else {},
    )
