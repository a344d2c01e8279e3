"""Agreement of a judge (a label rater, or this warehouse's judgments of one rubric) with human
raters on one corpus, per criterion. The data comes from `rater_scores.sql`; the statistics from
`agreement`."""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

from rubricflow.errors import CheckFailed, InputError
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.stats.agreement import RaterAgreement, rater_agreement
from rubricflow.tasks.stats.compare import CompareError, judgment_sets
from rubricflow.warehouse import db, steps


class CalibrationError(CheckFailed):
    """No judgments or labels to compare for the corpus and raters asked for."""


@dataclass
class Calibration:
    corpus: str
    judge: str
    humans: list[str]
    step: float
    rows: list[RaterAgreement]
    score: str = "sampled"
    rubric_hash: str | None = None
    judge_hash: str | None = None
    unmatched: dict[str, int] = field(default_factory=dict)  # labels on criteria the judge never scored
    unpaired: dict[str, int] = field(default_factory=dict)  # criteria with under 2 texts both rated: how many

    def as_records(self) -> list[dict]:
        """One flat record per criterion (what --json prints and the `calibrations` table keeps)."""
        keep = (
            "criterion_id",
            "n",
            "pearson",
            "spearman",
            "kendall_tau_b",
            "cohen_kappa",
            "qwk",
            "humans",
            "fleiss_kappa",
            "fleiss_texts",
            "alpha_humans",
            "alpha_with_judge",
            "human_pearson",
            "human_qwk",
            "note",
        )
        head = {
            "corpus_id": self.corpus,
            "judge": self.judge,
            "reference": ", ".join(self.humans),
            "step": self.step,
            "score": self.score,
            "rubric_hash": self.rubric_hash,
            "judge_hash": self.judge_hash,
        }
        return [head | {k: _finite(getattr(r, k)) for k in keep} for r in self.rows]


def _finite(value):
    """NaN (an undefined statistic) as None: JSON null, SQL NULL."""
    return None if isinstance(value, float) and value != value else value


def record(con: duckdb.DuckDBPyConnection, result: Calibration) -> None:
    """Keep a calibration's figures in the warehouse, stamped with the time."""
    with db.transaction(con):
        for row in result.as_records():
            steps.run_sql(con, "record_calibration.sql", **row)


def one_judge_setup(
    con: duckdb.DuckDBPyConnection, corpus: str, rubric: str, model: str | None, judge_prefix: str | None
) -> tuple[str, str]:
    """The (rubric hash, judge hash) to check: one rubric version, and the one judge setup that
    --model / --judge-hash leave (any temperature, seed or strategy). --model alone, when the model
    ran with several settings, means its default ones (temperature 0, no seed, holistic)."""
    try:
        sets = judgment_sets(con, corpus, rubric, None, True, "judge")
    except CompareError as exc:
        raise CalibrationError(str(exc).removeprefix("side judge: ")) from None
    if len({rh for rh, _ in sets}) > 1:
        raise CalibrationError(
            f"{rubric!r} names {len({rh for rh, _ in sets})} rubric versions on corpus {corpus!r}: "
            "name one (id@version or a rubric hash prefix)"
        )
    rubric_hash = sets[0][0]
    setups = [
        s
        for s in db.fetch(con, "judge_setups.sql", corpus=corpus, rubric=rubric_hash)
        if (model is None or s["model"] == model) and (judge_prefix is None or s["judge_hash"].startswith(judge_prefix))
    ]
    if len(setups) > 1 and model is not None and judge_prefix is None:  # --model alone: its default settings
        default = JudgeConfig(model=model).judge_hash()
        setups = [s for s in setups if s["judge_hash"] == default] or setups
    if len(setups) == 1:
        return rubric_hash, setups[0]["judge_hash"]
    if not setups:
        raise CalibrationError(
            f"no judgments of {rubric!r} on corpus {corpus!r} by "
            f"{'model ' + repr(model) if model else ''}{' judge ' + judge_prefix if judge_prefix else ''}"
        )
    listed = "; ".join(
        f"--judge-hash {s['judge_hash'][:12]} ({s['model']}, {s['strategy']}, temperature "
        f"{s['temperature']}, seed {s['seed']}, {s['runs']} runs)"
        for s in setups
    )
    raise CalibrationError(f"{len(setups)} judge setups scored {rubric!r} on corpus {corpus!r}; pick one: {listed}")


RELEASE_JUDGE = "unieval"  # the judge rater of the UniEval-style releases `calibrate --topical-chat` imports


def own_judge(con: duckdb.DuckDBPyConnection, corpus: str) -> tuple[str | None, str | None]:
    """What `calibrate` checks when no judge is named: (rubric hash, judge hash) of the corpus's own
    judgments when one judgment set scored it; with none, a UniEval-style release's judge rater
    ((None, RELEASE_JUDGE)) where its labels hold one. Several sets, or nothing to check, are refused."""
    sets = db.fetch(con, "corpus_judges.sql", corpus=corpus)
    if len(sets) == 1:
        return sets[0]["rubric_hash"], sets[0]["judge_hash"]
    if sets:
        listed = "; ".join(
            f"--rubric {s['rubric_id']}@{s['version']} --judge-hash {s['judge_hash'][:12]}" for s in sets
        )
        raise CalibrationError(f"{len(sets)} judgment sets scored corpus {corpus!r}; name the one to check: {listed}")
    raters = {r[1] for r in db.fetch_tuples(con, "rater_scores.sql", corpus=corpus, rubric=None, judge_hash=None,
                                            judge_name="", score="sampled")}  # fmt: skip
    if RELEASE_JUDGE in raters:
        return None, RELEASE_JUDGE
    raise CalibrationError(
        f"corpus {corpus!r} has no judgments of its own: score it, or name the label rater to check with "
        f"--judge (raters there: {', '.join(sorted(raters)) or 'none'})"
    )


def calibration(
    con: duckdb.DuckDBPyConnection,
    corpus: str,
    judge: str | None,
    humans: list[str] | None,
    rubric: str | None = None,
    model: str | None = None,
    step: float = 1.0,
    score: str = "sampled",
    judge_hash: str | None = None,
) -> Calibration:
    """`score`: with a rubric, check the judge's sampled scores or its logprob-weighted ones.
    `model` and `judge_hash` (a prefix) pick one judge setup when several scored the rubric. With
    neither a rubric nor a judge rater named, the corpus's own judgments (`own_judge`)."""
    if score not in ("sampled", "weighted"):
        raise InputError(f"--score must be sampled or weighted, not {score!r}")
    if not (isinstance(step, int | float) and 0 < step < float("inf")):  # 0: every kappa n/a; -1: halves rounded down
        raise InputError(f"--step (the category width) must be a number above 0, not {step!r}")
    (known,) = db.fetch(con, "corpus_known.sql", corpus=corpus)
    if not known["known"]:
        raise InputError(
            f"no corpus {corpus!r} in this warehouse (corpora: {known['corpora'] or 'none'}); "
            "`rubricflow ingest` texts or `rubricflow labels` scores first"
        )
    rubric_hash = None
    if rubric is None and judge is None:  # the corpus's own judgments, not a rater of another release's name
        rubric_hash, found = own_judge(con, corpus)
        if rubric_hash:
            judge_hash, rubric = found, rubric_hash[:12]
        else:
            judge = found
    if rubric:
        if rubric_hash is None:
            rubric_hash, judge_hash = one_judge_setup(con, corpus, rubric, model, judge_hash)
        judge = f"judge:{rubric}" + (":weighted" if score == "weighted" else "")
    rows = db.fetch_tuples(  # (criterion_id, rater, text_id, score)
        con, "rater_scores.sql", corpus=corpus, rubric=rubric_hash, judge_hash=judge_hash, judge_name=judge, score=score
    )
    scores: dict[str, dict[str, dict[str, float]]] = {}
    for criterion_id, rater, text_id, value in rows:
        scores.setdefault(criterion_id, {}).setdefault(rater, {})[text_id] = value
    raters = sorted({rater for by_rater in scores.values() for rater in by_rater})
    humans = list(humans or [r for r in raters if r != judge])
    missing = [h for h in humans if h not in raters]
    if missing or not humans:
        raise CalibrationError(
            f"no labels by {', '.join(missing) or 'any human rater'} on corpus {corpus!r} "
            f"(raters there: {', '.join(raters) or 'none'})"
        )
    if judge not in raters:  # a rubric's judge counts on the labelled texts only (rater_scores.sql)
        hint = " (weighted scores need an endpoint that returns logprobs)" if score == "weighted" else ""
        raise CalibrationError(
            f"no scores by {judge!r} on the labelled texts of corpus {corpus!r}{hint} "
            f"(raters there: {', '.join(raters) or 'none'})"
        )
    result = rater_agreement(scores, judge, humans, step)
    unmatched = {  # a misspelled criterion (`Usefulness`, `usefullness`): its labels were left out unsaid
        criterion: sum(len(by_rater.get(h, {})) for h in humans)
        for criterion, by_rater in sorted(scores.items())
        if judge not in by_rater and any(h in by_rater for h in humans)
    }
    kept = {r.criterion_id for r in result}
    unpaired = {  # both rated it, on one text at most: no statistic has a meaning there
        criterion: sum(t in by_rater[judge] and any(t in by_rater.get(h, {}) for h in humans) for t in by_rater[judge])
        for criterion, by_rater in sorted(scores.items())
        if criterion not in kept and judge in by_rater and any(h in by_rater for h in humans)
    }
    if not result:
        raise CalibrationError(
            f"no criterion of corpus {corpus!r} has two texts scored by both {judge!r} and {', '.join(humans)}"
        )
    return Calibration(corpus, judge, humans, step, result, score, rubric_hash, judge_hash, unmatched, unpaired)
