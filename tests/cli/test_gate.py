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
    # the lenient version against the harsh one: a rise, no drop, a pass
    rise = gate(home, w, "regression: {baseline: llm-slop@1.1.0}\n", "-r", "llm-slop", "--no-score")
    assert rise.returncode == 0 and "gate passed (exit 0)" in rise.stdout, rise.stdout + rise.stderr
    assert re.search(r"regression overall: delta \+0\.[0-9]*[1-9]", rise.stdout), rise.stdout


def refusal(result) -> str:
    """The one error line of a run refused as bad input (exit 2); its printout and exit code agree."""
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "(exit 3)" not in result.stdout
    assert "(exit 0)" not in result.stdout and "(exit 1)" not in result.stdout
    [line] = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    return line


@pytest.mark.parametrize(
    "baseline",
    ["llm-slopp@1.0.0", "llm-slop@1.0.1", "0123456789abcdef-no-run", "writing-quality"],
)
def test_a_baseline_that_names_no_scored_rubric_or_run_is_bad_input(scored, baseline):
    """An outside probe: a misspelled baseline ended "could not evaluate" (exit 3) while the same
    typo on the gated side is bad input (exit 2, docs/gate.md); a rubric never scored here too."""
    home, w, server = scored
    result = gate(home, w, f"regression: {{baseline: {baseline}}}\n", "-r", "llm-slop", "--no-score")
    line = refusal(result)
    assert f"regression.baseline {baseline!r}" in line and "'c'" in line, line
    assert "gate REFUSED: unusable input (exit 2)" in result.stdout


def test_a_baseline_that_is_the_gated_set_itself_is_refused(scored):
    """An outside probe: gating llm-slop against llm-slop@1.0.0 passed every regression check with
    "delta +0.0000 (CI 0 to 0)", exit 0: the set against itself can never drop."""
    home, w, server = scored
    [[run_id]] = rows(
        home / "w.duckdb", "SELECT run_id FROM runs JOIN rubrics USING (rubric_hash) WHERE version = '1.0.0'"
    )
    for baseline in ("llm-slop@1.0.0", run_id):
        junit = home / "self.xml"
        config = f"thresholds: {{overall: 0.1}}\nregression: {{baseline: {baseline}}}\n"
        result = gate(home, w, config, "-r", "llm-slop", "--no-score", "--junit", str(junit))
        assert "the gated judgment set itself" in refusal(result), result.stderr
        assert "delta +0.0000" not in result.stdout
        [(outcome, said)] = cases(junit).values()
        assert outcome == "error" and said.startswith("refused (exit 2): gate regression.baseline")


def test_an_unwritable_report_path_is_refused_before_any_judging(scored, tmp_path):
    """An outside probe: --junit to a path that cannot be written printed "gate passed (exit 0)",
    then exited 2. Now refused first: nothing judged, no outcome printed."""
    home, w, server = scored
    warehouse = tmp_path / "w.duckdb"
    shutil.copy(home / "w.duckdb", warehouse)
    (tmp_path / "file").write_text("a file, not a folder")
    judged, before = server.stats()["answered"], rows(warehouse, "SELECT count(*) FROM completions")
    for option in ("--junit", "--summary"):
        bad = tmp_path / "file" / "report"
        args = ["-r", "writing-quality", "--base-url", server.base_url, option, str(bad)]
        result = gate(tmp_path, ["-w", str(warehouse)], "thresholds: {overall: 0.1}\n", *args)
        line = refusal(result)
        assert f"{option} {bad}: cannot write there" in line and "gate " not in result.stdout, line
    assert server.stats()["answered"] == judged
    assert rows(warehouse, "SELECT count(*) FROM completions") == before
    ok = gate(
        home, w, "thresholds: {overall: 0.1}\n", "-r", "llm-slop", "--no-score", "--junit", str(tmp_path / "new.xml")
    )
    assert ok.returncode == 0 and cases(tmp_path / "new.xml")["overall"][0] == "passed"


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
    [
        (["-c", "nosuch", "-r", "llm-slop"], "no corpus 'nosuch' in"),
        (["-r", "llm-slpo"], "no judgments of 'llm-slpo'"),
        (["-r", "writing-quality"], "no judgments of 'writing-quality' on corpus 'c'"),
    ],
)
def test_no_score_on_an_unknown_corpus_or_rubric_is_bad_input_and_still_writes_junit(scored, args, message):
    """Exit 2 (docs/gate.md), not 3 ("could not evaluate"); CI's JUnit report says why all the same,
    and the printout names exit 2 too (it said "COULD NOT EVALUATE (exit 3)" before exiting 2)."""
    home, w, server = scored
    junit, md = home / f"bad-{args[-1]}.xml", home / f"bad-{args[-1]}.md"
    config = "thresholds: {overall: 0.1}\n"
    result = gate(home, w, config, *args, "--no-score", "--junit", str(junit), "--summary", str(md))
    assert message in refusal(result)
    assert "gate REFUSED: unusable input (exit 2)" in result.stdout
    [(outcome, said)] = cases(junit).values()
    assert outcome == "error" and said.startswith("refused (exit 2): ") and message in said
    assert "refused (exit 2)" in md.read_text()


def test_an_unknown_criterion_or_an_endpoint_that_never_answers_prints_the_exit_it_ends_with(scored, tmp_path):
    """An outside probe: both printed "gate COULD NOT EVALUATE (exit 3)" and then exited 2."""
    home, w, server = scored
    warehouse = tmp_path / "w.duckdb"
    shutil.copy(home / "w.duckdb", warehouse)
    where = ["-w", str(warehouse)]
    criterion = gate(tmp_path, where, "thresholds: {criteria: {tone: 0.5}}\n", "-r", "llm-slop", "--no-score")
    assert "criteria ['tone']" in refusal(criterion)
    assert "gate REFUSED: unusable input (exit 2)" in criterion.stdout
    args = ["-r", "writing-quality", "--base-url", "http://127.0.0.1:9/v1", "--junit", str(tmp_path / "e.xml")]
    down = gate(tmp_path, where, "thresholds: {overall: 0.1}\n", *args)
    assert "the endpoint refused, never answered" in refusal(down)
    assert "gate REFUSED: unusable input (exit 2)" in down.stdout
    [(outcome, said)] = cases(tmp_path / "e.xml").values()
    assert outcome == "error" and said.startswith("refused (exit 2): the endpoint")


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
