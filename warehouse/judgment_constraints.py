"""Judgment-scoped output constraints in the warehouse: a rule on a text's whole answer (every
criterion's rationale or evidence joined, rubrics/constraints.py) can only be checked once the
text's cells are in, possibly from several shards and runs. The analytics refresh checks it, for
the texts it recomputes, through a SQL function backed by the same Python check the judge uses
(one definition of each rule); a hard one that fails is a disqualifier hit of kind `constraint`,
a soft one a row of `constraint_warnings` (stored, not only printed)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from rubricflow.rubrics.constraints import judgment_problems
from rubricflow.rubrics.model import Rubric

FUNCTION = "judgment_constraint_hits"
WARNINGS = "judgment_constraint_warnings"
_WITH_JUDGMENT_SCOPE = r"""SELECT rubric_hash, document FROM rubrics
WHERE regexp_matches(document::VARCHAR, '"scope":\s*"judgment"')"""


@dataclass
class _Judged:
    criterion_id: str
    status: str
    rationale: str | None
    evidence: list[str]


def register(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)define on this connection `judgment_constraint_hits(rubric_hash, criterion_ids, rationales,
    evidence)`: the hard judgment-scoped constraints the answer breaks, as 'id: problem', and
    `judgment_constraint_warnings(...)`: the soft ones (seed 001: hard ones disqualify, soft ones warn)."""
    rubrics = {h: Rubric.model_validate(json.loads(doc)) for h, doc in con.execute(_WITH_JUDGMENT_SCOPE).fetchall()}
    for name, severity in ((FUNCTION, "hard"), (WARNINGS, "soft")):
        _define(con, name, _checker(rubrics, severity))


def _checker(rubrics: dict[str, Rubric], severity: str) -> Callable[[str, list, list, list], list[str]]:
    def problems(rubric_hash: str, ids: list, rationales: list, evidence: list) -> list[str]:
        rubric = rubrics.get(rubric_hash)
        if rubric is None:
            return []
        judged = [_Judged(c, "scored", r, list(e or [])) for c, r, e in zip(ids, rationales, evidence, strict=True)]
        return [f"{c.id}: {problem}" for c, problem in judgment_problems(rubric, judged) if c.severity == severity]

    return problems


def _define(con: duckdb.DuckDBPyConnection, name: str, function: Callable[[str, list, list, list], list[str]]) -> None:
    try:
        con.remove_function(name)
    except duckdb.InvalidInputException:
        pass  # not defined on this connection yet
    con.create_function(
        name, function, ["VARCHAR", "VARCHAR[]", "VARCHAR[]", "VARCHAR[][]"], "VARCHAR[]", side_effects=False
    )
