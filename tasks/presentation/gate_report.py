"""A CI gate's result as CI systems read it: JUnit XML (one test case per check: the coverage
floor, each threshold, each regression) and a Markdown summary for a CI step summary
(`$GITHUB_STEP_SUMMARY`)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from rubricflow.tasks.presentation.tables import md_table, md_text
from rubricflow.tasks.stats.gate import ERROR, FAILED, PASSED, GateResult

HEADLINE = {PASSED: "passed", FAILED: "FAILED", ERROR: "COULD NOT EVALUATE"}


def junit_xml(result: GateResult) -> str:
    """The JUnit XML document: a <testsuites> with one <testsuite> of the gate's checks; a failed
    check carries <failure>, one that could not be evaluated <error>."""
    checks = result.checks
    counts = {
        "tests": str(len(checks)),
        "failures": str(sum(c.status == FAILED for c in checks)),
        "errors": str(sum(c.status == ERROR for c in checks)),
        "skipped": "0",
        "time": "0",
    }
    suites = ET.Element("testsuites", {"name": "rubricflow gate", **counts})
    suite = ET.SubElement(suites, "testsuite", {"name": f"gate {result.rubric} on {result.corpus}", **counts})
    properties = ET.SubElement(suite, "properties")
    for name, value in _properties(result).items():
        ET.SubElement(properties, "property", {"name": name, "value": value})
    for check in checks:
        case = ET.SubElement(
            suite, "testcase", {"classname": f"rubricflow.gate.{check.kind}", "name": check.name, "time": "0"}
        )
        if check.status in (FAILED, ERROR):
            tag = "failure" if check.status == FAILED else "error"
            ET.SubElement(case, tag, {"message": check.message, "type": check.kind}).text = check.message
        else:
            ET.SubElement(case, "system-out").text = check.message
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _properties(result: GateResult) -> dict[str, str]:
    found = {
        "corpus": result.corpus,
        "rubric": result.rubric,
        "rubric_hash": result.judgment_set[0],
        "judge_hash": result.judgment_set[1],
        "outcome": result.outcome,
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
        f"## rubricflow gate: {HEADLINE[result.outcome]}\n\n"
        f"{md_text(result.rubric)} on corpus {md_text(result.corpus)}{baseline}: "
        f"{m['scored_texts']} of {m['texts']} texts scored\n\n" + md_table(rows)
    )
