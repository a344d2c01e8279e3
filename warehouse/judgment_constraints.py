"""Judgment-scoped output constraints in the warehouse: a rule on a text's whole answer (every
criterion's rationale or evidence joined, rubrics/constraints.py) can only be checked once the
text's cells are in, possibly from several shards and runs. The analytics refresh checks it, for
the texts it recomputes, through a SQL function backed by the same Python check the judge uses
(one definition of each rule), called once per answer for both severities: a hard one that fails is
a disqualifier hit of kind `constraint`, a soft one a row of `constraint_warnings` (stored, not only
printed)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from rubricflow.rubrics.constraints import judgment_problems
from rubricflow.rubrics.model import Rubric

FUNCTION = "judgment_constraint_problems"
_WITH_JUDGMENT_SCOPE = r"""SELECT rubric_hash, document FROM rubrics
WHERE regexp_matches(document::VARCHAR, '"scope":\s*"judgment"')"""


@dataclass
class _Judged:
    criterion_id: str
    status: str
    rationale: str | None
    evidence: list[str]


def register(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)define on this connection `judgment_constraint_problems(rubric_hash, criterion_ids,
    rationales, evidence)`: the judgment-scoped constraints the answer breaks, as
    'severity:id: problem' (seed 001: hard ones disqualify, soft ones warn; the refresh splits them)."""
    rubrics = {h: Rubric.model_validate(json.loads(doc)) for h, doc in con.execute(_WITH_JUDGMENT_SCOPE).fetchall()}
    _define(con, FUNCTION, _checker(rubrics))


def _checker(rubrics: dict[str, Rubric]) -> Callable[[str, list, list, list], list[str]]:
    def problems(rubric_hash: str, ids: list, rationales: list, evidence: list) -> list[str]:
        rubric = rubrics.get(rubric_hash)
        if rubric is None:
            return []
        judged = [_Judged(c, "scored", r, list(e or [])) for c, r, e in zip(ids, rationales, evidence, strict=True)]
        return [f"{c.severity}:{c.id}: {problem}" for c, problem in judgment_problems(rubric, judged)]

    return problems


def _define(con: duckdb.DuckDBPyConnection, name: str, function: Callable[[str, list, list, list], list[str]]) -> None:
    try:
        con.remove_function(name)
    except duckdb.InvalidInputException:
        pass  # not defined on this connection yet
    con.create_function(
        name, function, ["VARCHAR", "VARCHAR[]", "VARCHAR[]", "VARCHAR[][]"], "VARCHAR[]", side_effects=False
    )
