"""`rubricflow gate` as CI runs it: real judge server, real scoring runs, a real warehouse; the
JUnit file read back with a JUnit parser, the figures checked against numpy / scipy on the
warehouse's own rows."""

import re
import shutil

import numpy as np
import pytest
from junitparser import Error, Failure, JUnitXml
from scipy import stats

from rubricflow.tasks.stats.gate import load_config
from tests.conftest import ROOT, rows, write_corpus

from .test_pipeline_commands import run


def gate(home, w, config: str, *args):
    (home / "gate.yaml").write_text(config)
    return run("gate", "-c", "c", "--config", str(home / "gate.yaml"), *w, *args)


def cases(path) -> dict:
    """JUnit test cases by name: (outcome, message), outcome one of passed / failure / error."""
    xml = JUnitXml.fromfile(str(path))
    found = {}
    for suite in xml:
        for case in suite:
            kinds = [type(r) for r in case.result]
            outcome = "failure" if Failure in kinds else "error" if Error in kinds else "passed"
            found[case.name] = (outcome, case.result[0].message if case.result else case.system_out)
    return found


def test_thresholds_write_junit_and_a_summary(scored):
    home, w, server = scored
    config = "thresholds:\n  overall: 0.5\n  pass_rate: 0.9\n  criteria:\n    puffery: 0.4\n    meta-talk: 0.9\n"
    result = gate(
        home, w, config, "-r", "llm-slop", "--no-score", "--junit", str(home / "j.xml"), "--summary", str(home / "s.md")
    )
    assert result.returncode == 1, result.stdout + result.stderr
    found = cases(home / "j.xml")
    assert set(found) == {"coverage", "overall", "pass_rate", "criterion puffery", "criterion meta-talk"}
    # the reference: the warehouse's text scores of the set, averaged by numpy
    scores = rows(home / "w.duckdb", "SELECT score, passed FROM text_scores WHERE version = '1.0.0'")
    overall, pass_rate = np.mean([s for s, _ in scores]), np.mean([p for _, p in scores])
    assert len(scores) == 60 and pass_rate < 0.9 and overall >= 0.5
    assert found["overall"][0] == "passed" and f"{overall:.4f}" in found["overall"][1]
    assert found["pass_rate"][0] == "failure" and f"{pass_rate:.4f} < 0.9" in found["pass_rate"][1]
    assert found["coverage"][0] == "passed"
    summary = (home / "s.md").read_text()
    assert summary.startswith("## rubricflow gate: FAILED") and "| pass\\_rate | failed |" in summary
    assert "gate FAILED (exit 1)" in result.stdout

    lenient = gate(
        home, w, "thresholds: {overall: 0.5}\n", "-r", "llm-slop", "--no-score", "--junit", str(home / "ok.xml")
    )
    assert lenient.returncode == 0 and cases(home / "ok.xml")["overall"][0] == "passed"


def test_regression_fails_only_on_a_significant_drop(scored):
    home, w, server = scored
    config = "regression:\n  baseline: llm-slop@1.0.0\n  alpha: 0.05\n"
    dropped = gate(home, w, config, "-r", str(home / "harsh.yaml"), "--no-score", "--junit", str(home / "r.xml"))
    assert dropped.returncode == 1, dropped.stdout + dropped.stderr
    found = cases(home / "r.xml")
    assert found["regression overall"][0] == "failure" and "significant drop" in found["regression overall"][1]
    assert found["regression criterion puffery"][0] == "failure"
    assert found["regression criterion meta-talk"][0] == "passed"  # unchanged criterion: no drop
    # McNemar's p against scipy's chi-square with continuity correction (statsmodels' exact=False)
    b, c, p = map(
        float,
        re.search(
            r"pass->fail (\d+), fail->pass (\d+), McNemar p ([0-9.e+-]+)", found["regression pass_rate"][1]
        ).groups(),
    )
    assert b >= 25 and c == 0 and found["regression pass_rate"][0] == "failure"
    assert p == pytest.approx(stats.chi2.sf((abs(b - c) - 1) ** 2 / (b + c), 1), rel=1e-3)
    # the same version against itself (by run id): no drop, a pass
    [[run_id]] = rows(
        home / "w.duckdb", "SELECT run_id FROM runs JOIN rubrics USING (rubric_hash) WHERE version = '1.0.0'"
    )
    same = gate(home, w, f"regression: {{baseline: {run_id}}}\n", "-r", "llm-slop", "--no-score")
    assert same.returncode == 0, same.stdout + same.stderr


def test_a_gate_that_cannot_evaluate_fails(scored, tmp_path):
    home, w, server = scored
    bigger = write_corpus(tmp_path / "more.jsonl", 90)  # 30 texts the runs never judged
    warehouse = tmp_path / "w.duckdb"
    shutil.copy(home / "w.duckdb", warehouse)
    assert run("ingest", str(bigger), "--corpus", "c", "-w", str(warehouse)).returncode == 0
    config = "thresholds: {overall: 0.1}\ncoverage_floor: 0.9\n"
    result = gate(
        home, ["-w", str(warehouse)], config, "-r", "llm-slop", "--no-score", "--junit", str(tmp_path / "e.xml")
    )
    assert result.returncode == 3, result.stdout + result.stderr
    found = cases(tmp_path / "e.xml")
    assert found["coverage"][0] == "error" and "below the floor 90%" in found["coverage"][1]
    assert found["overall"][0] == "error"  # its 0.1 would pass: not on two thirds of the corpus


def test_a_gate_with_nothing_to_judge_needs_no_endpoint(scored, tmp_path):
    """Every cell landed: the gate's run judges nothing, so no --base-url is asked for (it refused
    in one line before); with cells to judge and no endpoint, bad input, exit 2, nothing judged."""
    home, w, server = scored
    warehouse = tmp_path / "w.duckdb"
    shutil.copy(home / "w.duckdb", warehouse)
    (tmp_path / "gate.yaml").write_text("thresholds: {overall: 0.1}\n")
    bare = {"OPENAI_BASE_URL": ""}
    gate_args = ["gate", "-c", "c", "--config", str(tmp_path / "gate.yaml"), "-w", str(warehouse)]
    judged, before = server.stats()["answered"], rows(warehouse, "SELECT count(*) FROM completions")
    landed = run(*gate_args, "-r", "llm-slop", "--junit", str(tmp_path / "ok.xml"), env=bare)
    assert landed.returncode == 0, landed.stdout + landed.stderr
    assert cases(tmp_path / "ok.xml")["overall"][0] == "passed"
    unjudged = run(*gate_args, "-r", "writing-quality", "--junit", str(tmp_path / "no.xml"), env=bare)
    assert unjudged.returncode == 2, unjudged.stdout + unjudged.stderr
    assert re.search(r"no judge endpoint, and \d+ cells to judge", unjudged.stderr), unjudged.stderr
    assert "Traceback" not in unjudged.stderr
    [(outcome, said)] = cases(tmp_path / "no.xml").values()
    assert outcome == "error" and "no judge endpoint" in said
    assert server.stats()["answered"] == judged
    assert rows(warehouse, "SELECT count(*) FROM completions") == before


@pytest.mark.parametrize(
    "config, message",
    [
        ("thresholds: {overal: 0.8}\n", "thresholds.overal: Extra inputs are not permitted"),
        ("thresholds: {pass_rate: 1.5}\n", "thresholds.pass_rate"),
        ("thresholds: {criteria: {tone: 0.7}}\n", "criteria ['tone'] that rubric llm-slop@1.0.0 lacks"),
    ],
)
def test_a_bad_gate_file_is_refused(scored, config, message):
    home, w, server = scored
    result = gate(home, w, config, "-r", "llm-slop", "--no-score")
    assert result.returncode == 2 and message in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [(["-c", "nosuch", "-r", "llm-slop"], "no corpus 'nosuch' in"), (["-r", "llm-slpo"], "no judgments of 'llm-slpo'")],
)
def test_no_score_on_an_unknown_corpus_or_rubric_is_bad_input_and_still_writes_junit(scored, args, message):
    """Exit 2 (docs/gate.md), not 3 ("could not evaluate"); CI's JUnit report says why all the same."""
    home, w, server = scored
    junit = home / f"bad-{args[1]}.xml"
    result = gate(home, w, "thresholds: {overall: 0.1}\n", *args, "--no-score", "--junit", str(junit))
    assert result.returncode == 2 and message in result.stderr, result.stdout + result.stderr
    [(outcome, said)] = cases(junit).values()
    assert outcome == "error" and message in said


def test_the_docs_page_documents_the_exit_codes_and_a_working_gate_file(tmp_path):
    page = (ROOT / "docs" / "gate.md").read_text()
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 3 |"):
        assert code in page
    example = re.search(r"## The gate file\n\n```yaml\n(.*?)```", page, re.S).group(1)
    (tmp_path / "gate.yaml").write_text(example)
    config = load_config(tmp_path / "gate.yaml")
    assert config.regression.baseline == "llm-slop@1.0.0" and config.thresholds.criteria == {"meta-talk": 0.7}
    assert load_config(ROOT / "examples" / "gate.yaml").regression is not None


def test_a_regression_with_too_few_pairs_for_an_interval_is_an_error_not_a_pass():
    """An outside probe: one text paired with the baseline, a drop of -0.583, and the gate passed
    ("too few pairs for an interval", exit 0); docs/gate.md: a gate never passes on too little evidence."""
    from types import SimpleNamespace

    from rubricflow.tasks.stats.gate import ERROR, PASSED, regression_checks

    one = SimpleNamespace(
        summary={"texts_paired": 1, "mean_delta": -0.583, "mean_delta_ci": None, "pass_to_fail": 1, "fail_to_pass": 0},
        criteria=[{"criterion_id": "puffery", "mean_delta": -1.0, "mean_delta_ci": None}],
        rubric_a="llm-slop@1.0.0",
        rubric_b="llm-slop@2.0.0",
    )
    checks = {c.name: c.status for c in regression_checks(one, 0.05)}
    assert checks == {
        "regression overall": ERROR,
        "regression pass_rate": PASSED,
        "regression criterion puffery": ERROR,
    }
