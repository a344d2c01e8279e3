"""The sequential A/B flow: judge the corpus's texts under both sides in a seeded random order, a
batch at a time, through the score flow (landed cells are the cache: texts already judged cost
nothing), and stop as soon as the anytime-valid confidence sequence for the paired difference
B - A decides: it excludes 0 (a winner), lies inside +-equivalence, or the corpus runs out.

Why: most of an A/B's calls buy no information once the winner is clear; a confidence sequence
lets the comparison look after every batch and stop without inflating its error rate."""

from __future__ import annotations

import datetime as dt
import json
import secrets
from dataclasses import asdict, dataclass, field

from prefect import flow, get_run_logger

from rubricflow.errors import CheckFailed, InputError
from rubricflow.flows.artifacts import artifact_key, publish
from rubricflow.flows.shared_budget import SharedBudget
from rubricflow.rubrics.compiler import compile_for_scoring
from rubricflow.rubrics.library import resolve
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.presentation.tables import md_table, md_text
from rubricflow.tasks.stats.sequential import ConfidenceSequence, decision, seeded_order
from rubricflow.warehouse import db, steps

FIGURES = ("score", "pass")  # the mean text score, the pass rate


@dataclass
class Side:
    ref: str
    judge: dict | None
    rubric_hash: str
    judge_hash: str


@dataclass
class SequentialResult:
    ab_id: str
    corpus: str
    figure: str
    alpha: float
    equivalence: float | None
    seed: int
    decision: str  # A | B | equivalent | undecided
    lower: float
    upper: float
    estimate: float | None
    texts_judged: int
    texts_paired: int
    texts_total: int
    cells_judged: int
    rest_cells: int
    usd_judged: float | None
    rest_usd: float | None
    looks: list[dict] = field(default_factory=list)


def check_options(alpha: float, equivalence: float | None, figure: str, batch_size: int) -> None:
    """Options that cannot give a valid comparison, refused before anything is judged."""
    if not 0 < alpha < 1:
        raise InputError(f"--alpha must lie strictly between 0 and 1, got {alpha}")
    if equivalence is not None and not 0 < equivalence < 1:
        raise InputError(f"--equivalence must lie strictly between 0 and 1, got {equivalence}")
    if figure not in FIGURES:
        raise InputError(f"--figure must be one of {', '.join(FIGURES)}, got {figure!r}")
    if batch_size < 1:
        raise InputError(f"--batch-size must be at least 1, got {batch_size}")


@flow(name="sequential-compare", log_prints=True)
def sequential_compare_flow(
    corpus_id: str,
    rubric_a: str,
    rubric_b: str,
    warehouse_path: str,
    judge_a: dict | None = None,
    judge_b: dict | None = None,
    alpha: float = 0.05,
    equivalence: float | None = None,
    figure: str = "score",
    batch_size: int = 100,
    seed: int = 0,
) -> dict:
    """`judge_a` / `judge_b` hold JudgeConfig fields. Returns a SequentialResult as a dict."""
    check_options(alpha, equivalence, figure, batch_size)
    sides = [_side(ref, judge) for ref, judge in ((rubric_a, judge_a), (rubric_b, judge_b))]
    with db.reader(warehouse_path) as con:
        if not steps.corpus_exists(con, corpus_id):
            raise InputError(f"no corpus {corpus_id!r} in {warehouse_path}; run `rubricflow ingest` first")
        order = seeded_order([r["text_id"] for r in db.fetch(con, "sequential_texts.sql", corpus=corpus_id)], seed)
        known = _pairs(con, corpus_id, sides, figure, None)
    cs, looks, walked, found = ConfidenceSequence(alpha), [], 0, None
    spend = SharedBudget(warehouse_path, judge_a, judge_b)  # one budget; refused where score refuses it
    while walked < len(order) and found is None and not spend.exhausted():
        batch = order[walked : walked + batch_size]
        missing = [t for t in batch if t not in known]
        if missing:
            _judge(spend, corpus_id, sides, missing)
            with db.reader(warehouse_path) as con:
                known |= _pairs(con, corpus_id, sides, figure, missing)
        walked += len(batch)
        cs.update([known[t] for t in batch if t in known])
        looks.append({"texts": walked, "paired": cs.n, "lower": cs.lower, "upper": cs.upper})
        found = decision(cs.lower, cs.upper, equivalence)
    result = _result(warehouse_path, corpus_id, sides, order, walked, cs, looks, found)
    result.figure, result.alpha, result.equivalence, result.seed = figure, alpha, equivalence, seed
    _record(warehouse_path, result, sides, order, batch_size)
    get_run_logger().info(
        "sequential A/B on %s: %s after %s of %s texts, B - A in [%.4f, %.4f]",
        corpus_id,
        result.decision,
        walked,
        len(order),
        cs.lower,
        cs.upper,
    )
    publish(sequential_markdown(result), artifact_key("sequential", corpus_id), f"sequential A/B on {corpus_id}")
    return asdict(result)


def _side(ref: str, judge: dict | None) -> Side:
    bundle = compile_for_scoring(resolve(ref), source=ref)
    return Side(ref, judge, bundle.hash, JudgeConfig(**(judge or {})).judge_hash())


def _judge(spend: SharedBudget, corpus_id: str, sides: list[Side], texts: list[str]) -> None:
    """One batch through the score flow, each distinct side once (an A/A judges once), within what
    the comparison's earlier batches left of the budget."""
    seen: set[tuple[str, str]] = set()
    for side in sides:
        if (side.rubric_hash, side.judge_hash) not in seen:
            seen.add((side.rubric_hash, side.judge_hash))
            spend.score(corpus_id, side.ref, side.judge, texts)


def _pairs(con, corpus_id: str, sides: list[Side], figure: str, texts: list[str] | None) -> dict[str, float]:
    """text -> B - A of the figure, for the texts with it on both sides."""
    rows = db.fetch(
        con,
        "sequential_pairs.sql",
        corpus=corpus_id,
        rubric_a=sides[0].rubric_hash,
        judge_a=sides[0].judge_hash,
        rubric_b=sides[1].rubric_hash,
        judge_b=sides[1].judge_hash,
        only=texts is not None,
        texts=texts or [],
    )
    a, b = f"{figure}_a", f"{figure}_b"
    diffs = {r["text_id"]: float(r[b] - r[a]) for r in rows if r[a] is not None and r[b] is not None}
    if any(abs(d) > 1 + 1e-9 for d in diffs.values()):
        raise CheckFailed("a text score outside [0, 1]: the sequential A/B needs scores on the unit scale")
    return diffs


def _result(warehouse_path, corpus_id, sides, order, walked, cs, looks, found) -> SequentialResult:
    """The decision with what the walked texts cost and what the rest would have cost at that rate."""
    with db.reader(warehouse_path) as con:
        [cost] = db.fetch(
            con,
            "sequential_cost.sql",
            corpus=corpus_id,
            rubric_a=sides[0].rubric_hash,
            judge_a=sides[0].judge_hash,
            rubric_b=sides[1].rubric_hash,
            judge_b=sides[1].judge_hash,
            texts=order[:walked],
        )
    rest = len(order) - walked
    per_text = cost["cells"] / walked if walked else 0.0
    return SequentialResult(
        ab_id=dt.datetime.now(dt.UTC).strftime("s%Y%m%d-%H%M%S-") + secrets.token_hex(3),
        corpus=corpus_id,
        figure="score",
        alpha=cs.alpha,
        equivalence=None,
        seed=0,
        decision=found or "undecided",
        lower=cs.lower,
        upper=cs.upper,
        estimate=cs.estimate if cs.n else None,
        texts_judged=walked,
        texts_paired=cs.n,
        texts_total=len(order),
        cells_judged=int(cost["cells"]),
        rest_cells=round(per_text * rest),
        usd_judged=cost["usd"],
        rest_usd=cost["usd"] / walked * rest if cost["usd"] is not None and walked else None,
        looks=looks,
    )


def _record(warehouse_path: str, r: SequentialResult, sides: list[Side], order: list[str], batch_size: int) -> None:
    with db.writer(warehouse_path) as con:
        db.run_sql(
            con,
            "record_sequential_ab.sql",
            ab_id=r.ab_id,
            corpus=r.corpus,
            rubric_a=sides[0].rubric_hash,
            judge_a=sides[0].judge_hash,
            rubric_b=sides[1].rubric_hash,
            judge_b=sides[1].judge_hash,
            figure=r.figure,
            alpha=r.alpha,
            equivalence=r.equivalence,
            seed=r.seed,
            batch_size=batch_size,
            text_order=json.dumps(order),
            decision=r.decision,
            lower=r.lower,
            upper=r.upper,
            estimate=r.estimate,
            texts_judged=r.texts_judged,
            texts_paired=r.texts_paired,
            texts_total=r.texts_total,
            cells_judged=r.cells_judged,
            rest_cells=r.rest_cells,
            usd_judged=r.usd_judged,
            rest_usd=r.rest_usd,
            looks=json.dumps(r.looks),
        )


def sequential_markdown(r: SequentialResult) -> str:
    head = {k: getattr(r, k) for k in ("decision", "lower", "upper", "estimate", "texts_judged", "texts_total")}
    return f"# Sequential A/B on {md_text(r.corpus)} ({md_text(r.figure)})\n\n" + md_table([head])
