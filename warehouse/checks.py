"""Trajectory checks (#51): a rubric's criteria with a `check` (rubrics/model.TrajectoryCheck) decided
in SQL over the corpus's messages, with no judge call, and landed as the run's judgments. Each kind
is one query (sql/check_*.sql); this module gives each its parameters."""

from __future__ import annotations

import json

import duckdb

from rubricflow.rubrics.compiler import Bundle
from rubricflow.rubrics.model import Criterion, TrajectoryCheck

from . import analytics
from .sqlfiles import run_sql, transaction

CHECK_FILES = {
    "tool_used": "check_tools.sql",
    "tool_not_used": "check_tools.sql",
    "tool_sequence": "check_tools.sql",
    "argument": "check_argument.sql",
    "step_count": "check_steps.sql",
    "error_results": "check_errors.sql",
    "final_message": "check_final.sql",
}


def in_order_regex(tools: tuple[str, ...]) -> str:
    """The RE2 expression that finds `tools` in this order (others may come between) in a transcript's
    calls written as chr(30) || name || chr(31) each (sql/check_tools.sql)."""
    return "(?s)" + ".*".join(r"\x1e\Q" + name.replace(r"\E", r"\E\\E\Q") + r"\E\x1f" for name in tools)


def check_params(criterion: Criterion) -> dict:
    """The parameters of the criterion's check query (each file takes the ones it names)."""
    check: TrajectoryCheck = criterion.check  # type: ignore[assignment]
    scores = criterion.scale.scores  # type: ignore[union-attr]  # a check's scale is binary (model)
    kind = check.order if check.kind == "tool_sequence" else check.kind
    return {
        "criterion": criterion.id,
        "kind": kind,
        "tool": check.tool,
        "tools": list(check.tools),
        "sequence": in_order_regex(check.tools) if check.tools else "",
        "path": check.path,
        "equals": None if check.equals is None else json.dumps(check.equals, separators=(",", ":")),
        "matches": check.matches,
        "not_matches": check.not_matches,
        "count_of": check.count,
        "min": check.min,
        "max": check.max,
        "pass_score": scores[1],
        "fail_score": scores[0],
    }


def evaluate_checks(
    con: duckdb.DuckDBPyConnection, corpus_id: str, bundle: Bundle, run_id: str, judge_hash: str
) -> int:
    """Decide every check criterion of the rubric for every text of the corpus and land the outcomes
    as the run's judgments (cells landed before are kept); the number of checks evaluated."""
    checked = [c for c in bundle.rubric.criteria if c.check is not None]
    if not checked:
        return 0
    with transaction(con):
        run_sql(con, "check_results.sql")
        for criterion in checked:
            run_sql(con, CHECK_FILES[criterion.check.kind], corpus=corpus_id, **check_params(criterion))  # type: ignore[union-attr]
        run_sql(con, "land_checks.sql", corpus=corpus_id, rubric=bundle.hash, judge=judge_hash, run=run_id)
    analytics.refresh_in_batches(con)
    return len(checked)
