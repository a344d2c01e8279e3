"""The failure kinds: one enum with its policy, and the SQL that re-plans cells or reports an
endpoint that never answered lists exactly the kinds the enum says (a kind added to the enum
with a re-plan policy, and forgotten in plan_cells.sql, would leave its cells final for good)."""

import re

import httpx
import openai
import pytest

from rubricflow.tasks.judging.failures import BudgetSpent, FailureKind, Stopped, error_kind
from rubricflow.warehouse.sqlfiles import sql


def kinds_in(text: str, pattern: str) -> set[str]:
    [listed] = {m for m in re.findall(pattern, text)}  # every such list in the file says the same
    return set(re.findall(r"'([a-z_]+)'", listed))


def test_plan_cells_replans_exactly_the_replanned_kinds():
    listed = kinds_in(sql("plan_cells.sql"), r"error_kind NOT IN \(([^)]*)\)")
    assert listed == {k.value for k in FailureKind.replanned()}


def test_run_refusals_counts_exactly_the_unanswered_kinds():
    listed = kinds_in(sql("run_refusals.sql"), r"error_kind IN \(([^)]*)\)")
    assert listed == {k.value for k in FailureKind.unanswered()}


def test_the_schema_comment_names_no_kind_the_enum_lacks():
    [comment] = re.findall(r"error_kind\s+VARCHAR,\s*--([^\n]*)", sql("001_schema.sql"))
    assert {w.strip() for w in comment.split("|")} <= {k.value for k in FailureKind}


def status_error(status: int) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    return openai.APIStatusError("refused", response=httpx.Response(status, request=request), body=None)


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (status_error(429), FailureKind.TRANSIENT),
        (status_error(503), FailureKind.TRANSIENT),
        (status_error(401), FailureKind.SETUP),
        (status_error(400), FailureKind.DETERMINISTIC),
        (BudgetSpent("no money"), FailureKind.BUDGET),
        (Stopped("stopping"), FailureKind.STOPPED),
    ],
)
def test_each_failure_is_classified_and_its_policy_read_from_the_enum(exc, kind):
    found = error_kind(exc)
    assert found is kind
    assert found.policy.retried == (kind in (FailureKind.TRANSIENT, FailureKind.UNREACHABLE))
    assert found.policy.replanned == (kind is not FailureKind.DETERMINISTIC)


def test_a_refusal_is_final_and_a_cut_off_answer_is_asked_again():
    assert FailureKind.TRUNCATED in FailureKind.reasked() and "parse" in FailureKind.reasked()
    assert FailureKind.REFUSAL not in FailureKind.reasked() and not FailureKind.REFUSAL.policy.replanned
    assert FailureKind.STOPPED not in FailureKind.replanned()  # it never lands under its own name
