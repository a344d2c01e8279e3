"""The pieces of `improve evolve` (flows/evolve.py runs them in rounds): the seeded train /
validation / test split by text (rubrify's train / validation one for rubricflow.rubrify), the held-out
metric and the least-agreeing criterion (both in SQL), and the rounds as the warehouse records them (the
reflection call itself: tasks/judging/chat.py).

A round's proposal is recorded before its candidate is judged, so a run killed mid-round resumes
that round with the same mutations (no second reflection call) and the candidate's landed cells.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import duckdb
import numpy as np

from rubricflow.errors import InputError
from rubricflow.rubrics.algebra import changed_criteria
from rubricflow.rubrics.compiler import Bundle, compile_or_raise
from rubricflow.rubrics.model import Rubric
from rubricflow.tasks.improve.reflect import Example
from rubricflow.warehouse import db
from rubricflow.warehouse.sqlfiles import run_sql

FINISHED = ("accepted", "rejected", "refused")


class EvolveError(InputError):
    """An evolution that cannot start: no labels to agree with, too few texts to split."""


def evolution_id(
    corpus: str,
    rubric_hash: str,
    judge_hash: str,
    target: str,
    seed: int,
    validation_share: float,
    test_share: float,
    reflection_hash: str,
    extra: str = "",
) -> str:
    """The same command names the same evolution, so running it again resumes it; every setting that
    changes its answers is in the key (else another reflection model's evolution would be replayed). `extra`:
    the multi-objective settings, empty for the defaults (so earlier evolutions keep their ids)."""
    parts: list = [corpus, rubric_hash, judge_hash, target, seed, validation_share, test_share, reflection_hash]
    key = json.dumps(parts + [extra] if extra else parts)
    return "e" + hashlib.sha256(key.encode()).hexdigest()[:15]


@dataclass(frozen=True)
class Split:
    """Labelled texts by role: rounds learn from `train`, are accepted on `validation`, and `test`
    is read once, for the final version (else one held-out set would be both selected on and reported)."""

    train: list[str]
    validation: list[str]
    test: list[str]


def split(
    con: duckdb.DuckDBPyConnection,
    corpus: str,
    raters: list[str],
    label: str,
    seed: int,
    validation_share: float,
    test_share: float,
) -> Split:
    """A seeded shuffle of the labelled texts, cut into test, validation and training texts."""
    ids = _labelled(con, corpus, raters, label)
    tested, validated = int(round(len(ids) * test_share)), int(round(len(ids) * validation_share))
    if len(ids) < 10 or min(tested, validated, len(ids) - tested - validated) < 1:
        raise EvolveError(
            f"{len(ids)} texts of corpus {corpus!r} have labels by {', '.join(raters)} on {label!r}; a train / "
            f"validation / test split ({validation_share:.0%} and {test_share:.0%} held out) needs at least 10 "
            "and every part non-empty"
        )
    order = _shuffled(ids, seed)
    test, validation = set(order[:tested]), set(order[tested : tested + validated])
    return Split([t for t in ids if t not in test | validation], sorted(validation), sorted(test))


def train_validation_split(
    con: duckdb.DuckDBPyConnection, corpus: str, raters: list[str], label: str, seed: int, validation_share: float
) -> Split:
    """rubrify's split (seed 001's evolve_rubric: "evaluated on a training minibatch ... then tracked on a
    validation set"): the first `1 - validation_share` of a seeded shuffle (one text at least) train, the
    rest validate, nothing is held out for test, and any number of texts will do (seed 001 gives advice
    for "fewer than ~10 examples"), the validation texts being the training ones when none are left."""
    ids = _labelled(con, corpus, raters, label)
    if not ids:
        raise EvolveError(f"no text of corpus {corpus!r} has a label by {', '.join(raters)} on {label!r}")
    order = _shuffled(ids, seed)
    cut = max(1, int(round(len(ids) * (1 - validation_share), 9)))  # 1 - (1 - 0.7) is 0.7 but for the last bit
    train, validation = sorted(order[:cut]), sorted(order[cut:])
    return Split(train, validation or train, [])


def _labelled(con: duckdb.DuckDBPyConnection, corpus: str, raters: list[str], label: str) -> list[str]:
    """The ids of the texts that carry the target label, in id order."""
    return [r["text_id"] for r in db.fetch(con, "fit_target.sql", corpus=corpus, raters=raters, criterion=label)]


def _shuffled(ids: list[str], seed: int) -> list[str]:
    return [ids[i] for i in np.random.default_rng(seed).permutation(len(ids))]


def metric(
    con: duckdb.DuckDBPyConnection,
    corpus: str,
    rubric_hash: str,
    judge_hash: str,
    raters: list[str],
    label: str,
    texts: list[str],
) -> float | None:
    """Pearson's r of the version's text scores with the human target on `texts` (None: undefined)."""
    row = _against_target(con, "evolve_metric.sql", corpus, rubric_hash, judge_hash, raters, label, texts)[0]
    return None if row["pearson"] is None or np.isnan(row["pearson"]) else float(row["pearson"])


def least_agreeing(
    con: duckdb.DuckDBPyConnection,
    corpus: str,
    rubric_hash: str,
    judge_hash: str,
    raters: list[str],
    label: str,
    texts: list[str],
) -> tuple[str, dict[str, float | None]]:
    rows = _against_target(con, "evolve_disagreement.sql", corpus, rubric_hash, judge_hash, raters, label, texts)
    if not rows:
        raise EvolveError(f"no judgments of rubric {rubric_hash[:12]} on the training texts of corpus {corpus!r}")
    agreement = {
        r["criterion_id"]: None if r["pearson"] is None or np.isnan(r["pearson"]) else r["pearson"] for r in rows
    }
    return rows[0]["criterion_id"], agreement


def examples(
    con: duckdb.DuckDBPyConnection,
    corpus: str,
    rubric_hash: str,
    judge_hash: str,
    raters: list[str],
    label: str,
    criterion: str,
    texts: list[str],
    limit: int = 12,
) -> list[Example]:
    look = (corpus, rubric_hash, judge_hash, raters, label, texts)
    rows = _against_target(con, "evolve_examples.sql", *look, criterion=criterion, limit=limit)
    return [Example(r["text"], float(r["human"]), float(r["judge"])) for r in rows]


def objective_rows(
    con: duckdb.DuckDBPyConnection,
    corpus: str,
    rubric_hash: str,
    judge_hash: str,
    raters: list[str],
    label: str,
    texts: list[str],
) -> list[dict]:
    """One split's rows for tasks/improve/objectives.compute."""
    return _against_target(con, "evolve_objective_rows.sql", corpus, rubric_hash, judge_hash, raters, label, texts)


def _against_target(
    con: duckdb.DuckDBPyConnection,
    name: str,
    corpus: str,
    rubric_hash: str,
    judge_hash: str,
    raters: list[str],
    label: str,
    texts: list[str],
    **more,
) -> list[dict]:
    """The rows of one of the evolve_*.sql queries: a version's judgments beside the human target
    (`raters`' `label`) on `texts`."""
    where = dict(corpus=corpus, rubric=rubric_hash, judge=judge_hash, raters=raters, label=label, texts=texts)
    return db.fetch(con, name, **where, **more)


def rounds(con: duckdb.DuckDBPyConnection, evolution: str) -> dict[int, dict]:
    return {r["round"]: r for r in db.fetch(con, "evolution_rounds.sql", evolution=evolution)}


def record(con: duckdb.DuckDBPyConnection, **row) -> None:
    """Insert or update one round (every column named; see evolution_rounds in 001_schema.sql)."""
    run_sql(con, "record_round.sql", **row)


def rubric_of(row: dict) -> Bundle:
    return compile_or_raise(Rubric.model_validate(json.loads(row["candidate"])))


def changed(parent: Rubric, child: Rubric) -> int:
    """Criteria of the child that are new or reworded (their cells cannot be adopted)."""
    return len(changed_criteria(parent, child) | ({c.id for c in child.criteria} - {c.id for c in parent.criteria}))
