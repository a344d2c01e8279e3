"""A CI gate's result as CI systems read it: JUnit XML (one test case per check: the coverage
floor, each threshold, each regression) and a Markdown summary for a CI step summary
(`$GITHUB_STEP_SUMMARY`)."""

from __future__ import annotations

from rubricflow.tasks.presentation.tables import md_table, md_text
from rubricflow.tasks.stats.gate import ERROR, FAILED, PASSED, GateResult

HEADLINE = {PASSED: "passed", FAILED: "FAILED", ERROR: "COULD NOT EVALUATE"}
REFUSED = "REFUSED: unusable input"  # exit 2, not an evaluation that could not be made (exit 3)


def headline(result: GateResult) -> str:
    """The outcome as the terminal, the step summary and the JUnit file all say it."""
    return REFUSED if result.refused else HEADLINE[result.outcome]


def junit_xml(result: GateResult) -> str:
    """The JUnit XML document: a <testsuites> with one <testsuite> of the gate's checks; a failed
    check carries <failure>, one that could not be evaluated <error>. Written by junitparser's
    xunit2 flavour: the Jenkins xUnit schema (junit-10.xsd), which refuses `skipped` on <testsuites>
    (strict CI servers rejected the hand-written file)."""
    import junitparser
    from junitparser import xunit2

    suite = xunit2.TestSuite(f"gate {result.rubric} on {result.corpus}")
    for name, value in _properties(result).items():
        suite.add_property(name, value)
    for check in result.checks:
        case = xunit2.TestCase(check.name, classname=f"rubricflow.gate.{check.kind}", time=0)
        if check.status in (FAILED, ERROR):
            kind = junitparser.Failure if check.status == FAILED else junitparser.Error
            found = kind(check.message, check.kind)
            found.text = check.message
            case.result = [found]
        else:
            case.system_out = check.message
        suite.add_testcase(case)
    suites = xunit2.JUnitXml("rubricflow gate")
    suites.add_testsuite(suite)
    suites.update_statistics()
    text = suites.tostring()
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + (text.decode() if isinstance(text, bytes) else text) + "\n"


def _properties(result: GateResult) -> dict[str, str]:
    found = {
        "corpus": result.corpus,
        "rubric": result.rubric,
        "rubric_hash": result.judgment_set[0],
        "judge_hash": result.judgment_set[1],
        "outcome": "refused" if result.refused else result.outcome,
    }
    if result.baseline:
        found["baseline"] = result.baseline
    return found


def markdown(result: GateResult) -> str:
    """The summary for a CI step: the outcome, the figures, then one row per check."""
    m = result.metrics
    rows = [
        {"check": c.name, "result": c.status, "value": c.value, "limit": c.limit, "detail": c.message}
        for c in result.checks
    ]
    baseline = f"; baseline {md_text(result.baseline)}" if result.baseline else ""
    return (
        f"## rubricflow gate: {headline(result)}\n\n"
        f"{md_text(result.rubric)} on corpus {md_text(result.corpus)}{baseline}: "
        f"{m['scored_texts']} of {m['texts']} texts scored\n\n" + md_table(rows)
    )
