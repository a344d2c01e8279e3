"""Agreement of a judge (a label rater, or this warehouse's judgments of one rubric) with human
raters on one corpus, per criterion. The data comes from `rater_scores.sql`; the statistics from
`agreement`."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from rubricflow.errors import CheckFailed, InputError
from rubricflow.tasks.agreement import RaterAgreement, rater_agreement
from rubricflow.tasks.compare import CompareError, judgment_sets
from rubricflow.tasks.config import JudgeConfig
from rubricflow.warehouse import db


class CalibrationError(CheckFailed):
    """No judgments or labels to compare for the corpus and raters asked for."""


@dataclass
class Calibration:
    corpus: str
    judge: str
    humans: list[str]
    step: float
    rows: list[RaterAgreement]


def calibration(con: duckdb.DuckDBPyConnection, corpus: str, judge: str, humans: list[str] | None,
                rubric: str | None = None, model: str | None = None, step: float = 1.0,
                score: str = "sampled") -> Calibration:
    """`score`: with a rubric, check the judge's sampled scores or its logprob-weighted ones."""
    if score not in ("sampled", "weighted"):
        raise InputError(f"--score must be sampled or weighted, not {score!r}")
    rubric_hash = judge_hash = None
    if rubric:
        try:
            (rubric_hash, judge_hash), = judgment_sets(
                con, corpus, rubric, JudgeConfig(model=model).judge_hash() if model else None, False, "judge")
        except CompareError as exc:
            raise CalibrationError(str(exc)) from None
        judge = f"judge:{rubric}" + (":weighted" if score == "weighted" else "")
    rows = db.fetch(con, "rater_scores.sql", corpus=corpus, rubric=rubric_hash, judge_hash=judge_hash, judge_name=judge,
                    score=score)
    scores: dict[str, dict[str, dict[str, float]]] = {}
    for r in rows:
        scores.setdefault(r["criterion_id"], {}).setdefault(r["rater"], {})[r["text_id"]] = r["score"]
    raters = sorted({r["rater"] for r in rows})
    if judge not in raters:
        hint = " (weighted scores need an endpoint that returns logprobs)" if score == "weighted" else ""
        raise CalibrationError(f"no scores by {judge!r} on corpus {corpus!r}{hint} "
                               f"(raters there: {', '.join(raters) or 'none'})")
    humans = list(humans or [r for r in raters if r != judge])
    missing = [h for h in humans if h not in raters]
    if missing or not humans:
        raise CalibrationError(f"no labels by {', '.join(missing) or 'any human rater'} on corpus {corpus!r} "
                               f"(raters there: {', '.join(raters)})")
    result = rater_agreement(scores, judge, humans, step)
    if not result:
        raise CalibrationError(f"no criterion of corpus {corpus!r} has texts scored by both {judge!r} and {', '.join(humans)}")
    return Calibration(corpus, judge, humans, step, result)
