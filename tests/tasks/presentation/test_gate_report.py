"""The gate's JUnit XML against the Jenkins xUnit schema CI servers validate it with (junit-10.xsd:
the attributes each element may carry; `skipped` is not one of <testsuites>'), and a gate file that
gates nothing refused."""

import xml.etree.ElementTree as ET

import pytest

from rubricflow.errors import InputError
from rubricflow.tasks.presentation.gate_report import junit_xml
from rubricflow.tasks.stats.gate import ERROR, FAILED, PASSED, Check, GateResult, load_config

# junit-10.xsd (jenkinsci/xunit-plugin): the attributes of each element
ALLOWED = {
    "testsuites": {"name", "time", "tests", "failures", "disabled", "errors"},
    "testsuite": {
        "name",
        "tests",
        "failures",
        "errors",
        "time",
        "disabled",
        "skipped",
        "timestamp",
        "hostname",
        "id",
        "package",
        "file",
        "log",
        "url",
        "version",
        "group",
    },  # fmt: skip
    "testcase": {"name", "assertions", "time", "classname", "status", "group", "file", "line"},
    "failure": {"message", "type"},
    "error": {"message", "type"},
    "property": {"name", "value"},
}


def test_the_junit_xml_carries_only_the_attributes_the_jenkins_xunit_schema_allows():
    checks = [
        Check("coverage", "coverage", PASSED, 1.0, 0.95, "100% scored"),
        Check("overall", "threshold", FAILED, 0.4, 0.6, "0.4 < 0.6"),
        Check("regression overall", "regression", ERROR, None, None, "no baseline text paired"),
    ]
    metrics = {"texts": 3, "scored_texts": 3, "overall": 0.4, "pass_rate": 0.3, "coverage": 1.0}
    root = ET.fromstring(junit_xml(GateResult("c", "llm-slop@1.0.0", ("ab", "cd"), metrics, checks)))
    assert root.tag == "testsuites" and "skipped" not in root.attrib
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "1")
    for element in root.iter():
        assert set(element.attrib) <= ALLOWED.get(element.tag, set()), (element.tag, element.attrib)
    [suite] = root
    outcomes = {c.get("name"): [r.tag for r in c] for c in suite.iter("testcase")}
    assert outcomes == {"coverage": ["system-out"], "overall": ["failure"], "regression overall": ["error"]}


@pytest.mark.parametrize("text", ["", "{}\n", "thresholds: {}\n", "# nothing yet\n"])
def test_a_gate_file_that_gates_nothing_is_refused(tmp_path, text):
    (tmp_path / "gate.yaml").write_text(text)
    with pytest.raises(InputError, match=r"gate.yaml: the gate file sets no threshold, regression or coverage_floor"):
        load_config(tmp_path / "gate.yaml")
