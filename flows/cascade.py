"""The judge cascade flow: a cheap judge answers every text, a strong judge only the texts the cheap
judge is unsure of, at a threshold chosen so that the texts kept agree with the strong judge at the
target rate with probability >= 1 - delta (tasks/stats/cascade.py).

Every judgment goes through the score flow (the same client, rate limits, budget and resume): the
cheap judge first on a seeded calibration sample (refused at once when it gives no confidence:
token logprobs where its endpoint returns them, else its re-asks, when it samples each cell several
times at a temperature above 0). The confidence (`measure`) is by default the margin: how far the
cheap judge's expected text score (each criterion's logprob-weighted score, or the mean of its
re-asks, combined by the rubric's weights) lies from the score where its verdict changes; `modal`
is the earlier measure (the least probability of a chosen value, or the modal share of the re-asks,
on the least sure criterion), whose few values certified no threshold on real data. Then the
strong judge on that sample, the cheap judge on the rest, then the strong judge on the texts
below the threshold. A strong cell that fails stays unscored (the text's level says strong): the
next run of the same cascade plans it again; it is never filled by the cheap judge's answer.

With a human level (`human_below`), the texts the strong judge decides with a confidence (the
`modal` measure, a probability: the least probability of its chosen values, or its re-asks' modal
share) below that value are left to a human: their level is `human`, they head the labelling queue
(label_queue.sql), and their labels decide them in the views (cascade_decisions)."""

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
from rubricflow.tasks.stats.cascade import Threshold, choose_threshold, conservative_agreement, margin_confidence
from rubricflow.tasks.stats.sequential import seeded_order
from rubricflow.warehouse import steps
from rubricflow.warehouse.store import Store


class NoConfidence(InputError):
    """The cheap judge gave no usable confidence (no token logprobs at the scale's values, no re-asks)."""


def reasks(judge: dict) -> bool:
    """Whether the cheap judge's re-asks can measure its confidence: several samples, temperature > 0."""
    config = JudgeConfig(**judge)
    return config.samples >= 2 and config.temperature > 0


@dataclass
class CascadeResult:
    cascade_id: str
    rubric_hash: str
    strong_judge: str  # the strong judge's hash (the labelling page's `judge`)
    threshold: float | None
    calibration_texts: int
    texts: int
    confidence: str  # logprobs | re-asks: where the cheap judge's confidence came from
    measure: str  # margin | modal: what the confidence measures (see the module docstring)
    calibration_unjudged: dict  # calibration texts without a cheap confidence / a strong score
    escalated: int  # texts outside the calibration sample sent to the strong judge
    unscored: int  # texts whose deciding judge has no score (a failed strong cell: retried next run)
    pending_human: int  # texts left to a human (the strong judge unsure) that have no label yet
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
    human_below: float | None = None,
    measure: str = "margin",
) -> dict:
    """`judge` holds the JudgeConfig fields both levels share; each level adds its model.
    `human_below`: the strong judge's confidence under which a human label decides (None: no human level).
    `measure`: margin (default) or modal, the cheap judge's confidence (see the module docstring)."""
    cheap = {**judge, "model": cheap_model, "logprobs": True}
    strong = {**judge, "model": strong_model} | ({"logprobs": True} if human_below is not None else {})
    _check(agreement, delta, human_below, cheap, measure)
    bundle = compile_for_scoring(resolve(rubric), source=rubric)
    hashes = (  # each judge as its runs judge this rubric (its execution strategy where none was given)
        bundle.hash,
        JudgeConfig(**cheap).for_rubric(bundle.rubric).judge_hash(),
        JudgeConfig(**strong).for_rubric(bundle.rubric).judge_hash(),
    )
    order = seeded_order(Store(warehouse_path).execute_fn(steps.corpus_texts, corpus_id, warehouse_path), seed)
    sample, rest, spend = order[:calibration], order[calibration:], SharedBudget(warehouse_path, cheap, strong)
    source, confidence = _calibrate_cheap(spend, corpus_id, rubric, cheap, hashes, sample, measure)
    spend.score(corpus_id, rubric, strong, sample)
    sureness = _confidence if source == "logprobs" else _reask_confidence  # the strong judge's, for a human level
    cheap_confidence = _margin_confidence if measure == "margin" else sureness
    if human_below is not None and not sureness(warehouse_path, corpus_id, (hashes[0], hashes[2]), sample):
        raise NoConfidence(f"the strong judge {strong_model!r} gave no usable confidence ({source}) on the "
                           "calibration texts: a human level needs it to tell which texts it is unsure of")  # fmt: skip
    threshold, unjudged = _threshold(warehouse_path, corpus_id, hashes, sample, confidence, agreement, delta)
    if rest:
        if source == "logprobs":  # this endpoint returns them: a cell landed without them is asked again
            Store(warehouse_path).execute_write("cascade_ask_again_for_logprobs.sql", corpus=corpus_id,
                                                rubric=hashes[0], judge=hashes[1], texts=rest)  # fmt: skip
        spend.score(corpus_id, rubric, cheap, rest)
        confidence |= cheap_confidence(warehouse_path, corpus_id, hashes, rest)
    escalate = [t for t in rest if confidence.get(t, -1.0) < threshold.value]
    if escalate:
        try:
            spend.score(corpus_id, rubric, strong, escalate)
        except EndpointRefused as exc:  # recorded as a failed run; its cells stay unscored, planned again next run
            get_run_logger().error("the strong judge answered no escalated text: %s", exc)
    levels = {t: "calibration" for t in sample} | {t: "cheap" for t in rest} | {t: "strong" for t in escalate}
    sure = sureness(warehouse_path, corpus_id, (hashes[0], hashes[2]), sample + escalate) if human_below else {}
    levels |= {t: "human" for t in _unsure(warehouse_path, corpus_id, hashes, sample + escalate, sure, human_below)}
    options = {"agreement": agreement, "delta": delta, "seed": seed, "models": (cheap_model, strong_model),
               "confidence": source, "measure": measure, "human_below": human_below, "calibration": len(sample),
               "escalated": len(escalate), "unjudged": unjudged}  # fmt: skip
    return asdict(_record(warehouse_path, corpus_id, hashes, options, threshold, levels, (confidence, sure)))


def _check(agreement: float, delta: float, human_below: float | None, cheap: dict, measure: str) -> None:
    """Options that cannot give a cascade, refused before any call."""
    if measure not in ("margin", "modal"):
        raise InputError(f"the cascade's confidence measure is margin or modal, got {measure!r}")
    if not 0 < agreement < 1 or not 0 < delta < 1:
        raise InputError(f"--agreement and --delta must lie strictly between 0 and 1, got {agreement}, {delta}")
    if human_below is not None and not 0 < human_below <= 1:
        raise InputError(f"--human-below is a confidence in (0, 1], got {human_below}")
    if not JudgeConfig(**cheap).wants_logprobs() and not reasks(cheap):
        raise NoConfidence(
            f"the cheap judge's provider returns no logprobs: the cascade has no confidence for {cheap['model']!r} "
            "(re-asks give one: --samples 3 or more at a --temperature above 0)"
        )


def _calibrate_cheap(spend: SharedBudget, corpus_id, rubric, cheap: dict, hashes, sample, measure) -> tuple[str, dict]:
    """The cheap judge on the calibration sample, and its confidence there with where it came from
    (logprobs, else re-asks); refused, before the strong judge is paid, when it gives neither."""
    cached = spend.score(corpus_id, rubric, cheap, sample)["calls"] == 0
    source, confidence = "logprobs", _confidence(spend.warehouse_path, corpus_id, hashes, sample)
    if not confidence and cached and JudgeConfig(**cheap).wants_logprobs():  # landed by a run without them
        _ask_again_for_logprobs(spend, corpus_id, rubric, cheap, hashes, sample)
        confidence = _confidence(spend.warehouse_path, corpus_id, hashes, sample)
    if not confidence and reasks(cheap):
        source, confidence = "re-asks", _reask_confidence(spend.warehouse_path, corpus_id, hashes, sample)
    if confidence and measure == "margin":
        confidence = _margin_confidence(spend.warehouse_path, corpus_id, hashes, sample)
    if not confidence:
        raise NoConfidence(
            f"the cheap judge {cheap['model']!r} gave no usable confidence (no token logprobs at the scale's values, "
            "no re-asks) on the calibration texts: a cascade needs them; use a judge whose endpoint returns "
            "logprobs, or --samples 3 or more at a --temperature above 0"
        )
    return source, confidence


def _ask_again_for_logprobs(spend: SharedBudget, corpus_id, rubric, cheap: dict, hashes, texts) -> None:
    """The cheap judge's cells on `texts` that landed without logprobs, judged again: they were the
    cache, so a cascade once run against an endpoint without logprobs was refused for good."""
    Store(spend.warehouse_path).execute_write(
        "cascade_ask_again_for_logprobs.sql", corpus=corpus_id, rubric=hashes[0], judge=hashes[1], texts=texts
    )
    spend.score(corpus_id, rubric, cheap, texts)


def _unsure(warehouse_path, corpus_id, hashes, texts, sure: dict[str, float], human_below: float | None) -> list[str]:
    """The texts the strong judge scored with a confidence below `human_below` (or none at all); a
    text whose strong cell failed is not among them: it stays the strong judge's, retried next run."""
    if human_below is None:
        return []
    scored = Store(warehouse_path).execute(
        "cascade_scored.sql", corpus=corpus_id, rubric=hashes[0], judge=hashes[2], texts=texts
    )
    return [r["text_id"] for r in scored if sure.get(r["text_id"], 0.0) < human_below]


def _confidence(warehouse_path: str, corpus_id: str, hashes: tuple, texts: list[str]) -> dict[str, float]:
    """text -> the least probability the cheap judge gave the values it chose; texts with a
    criterion whose probabilities are missing have none (they are escalated)."""
    rows = Store(warehouse_path).execute(
        "cascade_confidence.sql", corpus=corpus_id, rubric=hashes[0], judge=hashes[1], only=True, texts=texts
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
    rows = Store(warehouse_path).execute(
        "cascade_reask_confidence.sql", corpus=corpus_id, rubric=hashes[0], judge=hashes[1], texts=texts
    )
    return {r["text_id"]: float(r["confidence"]) for r in rows}


def _margin_confidence(warehouse_path: str, corpus_id: str, hashes: tuple, texts: list[str]) -> dict[str, float]:
    """text -> how far the cheap judge's expected text score lies from where its verdict changes
    (tasks/stats/cascade.py: margin_confidence); texts whose expectation is unknown have none."""
    rows = Store(warehouse_path).execute(
        "cascade_margin_confidence.sql", corpus=corpus_id, rubric=hashes[0], judge=hashes[1], texts=texts
    )
    return {r["text_id"]: margin_confidence(r["expected"], r["boundaries"]) for r in rows}


def _threshold(warehouse_path, corpus_id, hashes, sample, confidence, agreement, delta) -> tuple[Threshold, dict]:
    """The threshold from the calibration texts with a cheap confidence (the others are escalated
    wherever they occur, so no threshold keeps them); those the strong judge failed on count as
    disagreements (conservative_agreement). Returns it and the counts of both kinds left unjudged."""
    rows = Store(warehouse_path).execute(
        "cascade_agreement.sql", corpus=corpus_id, rubric=hashes[0], cheap=hashes[1], strong=hashes[2], texts=sample
    )
    agree = {r["text_id"]: r["agree"] for r in rows}
    confident = [t for t in sample if t in confidence]
    unjudged = {"cheap": len(sample) - len(confident), "strong": sum(t not in agree for t in confident)}
    chosen = choose_threshold(
        [confidence[t] for t in confident], conservative_agreement([agree.get(t) for t in confident]), agreement, delta
    )
    log = get_run_logger()
    log.info("cascade threshold %s from %s calibration texts", chosen, len(confident))
    if unjudged["cheap"] or unjudged["strong"]:
        log.warning(
            "%s calibration texts have no cheap confidence (escalated wherever they occur) and %s no strong score "
            "(counted as disagreements)", unjudged["cheap"], unjudged["strong"],
        )  # fmt: skip
    return chosen, unjudged


def _record(warehouse_path, corpus_id, hashes, options, threshold: Threshold, levels, confidences) -> CascadeResult:
    """Keep the cascade, each text's level and both judges' confidences; read back its split and costs."""
    confidence, sure = confidences
    cascade_id = dt.datetime.now(dt.UTC).strftime("k%Y%m%d-%H%M%S-") + secrets.token_hex(3)
    texts = sorted(levels)
    store = Store(warehouse_path)
    store.execute_write(
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
        calibration_texts=options["calibration"],
        calibration_kept=threshold.kept,
        kept_disagreements=threshold.disagreements,
        upper_bound=threshold.upper_bound,
        texts=texts,
        confidences=[confidence.get(t) for t in texts],
        strong_confidences=[sure.get(t) for t in texts],
        levels=[levels[t] for t in texts],
        human_below=options["human_below"],
    )
    split = store.execute("cascade_split_of.sql", cascade=cascade_id)
    costs = store.execute("cascade_costs_of.sql", cascade=cascade_id)
    return CascadeResult(
        cascade_id=cascade_id,
        rubric_hash=hashes[0],
        strong_judge=hashes[2],
        threshold=None if threshold.value == float("inf") else float(threshold.value),
        calibration_texts=options["calibration"],
        confidence=options["confidence"],
        measure=options["measure"],
        calibration_unjudged=options["unjudged"],
        texts=len(texts),
        escalated=options["escalated"],
        unscored=sum(r["texts"] - r["scored"] for r in split if r["level"] != "pending-human"),
        pending_human=sum(r["texts"] for r in split if r["level"] == "pending-human"),
        split=split,
        costs=costs[0] if costs else {},
    )
