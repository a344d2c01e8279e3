"""Seed 001's example rubrics in the built-in library, checked against the seed's own description,
and its red-team calibration runner as a calibration-cases file: imported as goldens, run by
`rubricflow rubric test --cases` and `judge.test`."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

import rubricflow as rf
from rubricflow.rubrics.compiler import content_hash
from rubricflow.rubrics.library import resolve
from rubricflow.tasks.improve.calibration_cases import load_cases

from ..conftest import EXE, ROOT, SHARED

SEED = next((SHARED.parent / "seeds").glob("001_*.txt")).read_text(encoding="utf-8")
CASES = ROOT / "examples" / "red-team-cases.json"


def seed_paragraph(name: str) -> str:
    """The seed's one-paragraph description of an example rubric, e.g. `ComplianceJudge: evaluates ...`."""
    return next(line for line in SEED.splitlines() if line.startswith(name + ": "))


def test_the_compliance_judge_is_the_seeds():
    text = seed_paragraph("ComplianceJudge")
    judge = resolve("compliance-judge")
    criteria = re.search(r"(\d+) criteria \(([^)]*)\)", text)
    stated = [re.match(r"(.+) (\d+)-(\d+)$", part.strip()).groups() for part in criteria.group(2).split(",")]
    assert int(criteria.group(1)) == len(judge.criteria) == len(stated)
    for c, (title, low, high) in zip(judge.criteria, stated, strict=True):
        assert c.title == title and [a.value for a in c.scale.anchors][::2] == [int(low), int(high)]
    assert int(re.search(r"(\d+) disqualifiers", text).group(1)) == len(judge.disqualifiers)
    assert int(re.search(r"(\d+)-pattern regex library", text).group(1)) == len(judge.patterns)
    assert "strict compliance-judge role" in text and judge.role.persona.startswith("A strict compliance judge")
    assert judge.role.authority == "absolute" and judge.role.domain
    assert "BECAUSE: output constraint" in text and [c.prefix for c in judge.output.constraints] == ["BECAUSE:"]
    labels = re.search(r"custom decision thresholds \(([^)]*)\)", text).group(1).split(" / ")
    assert [lab.label for lab in judge.scoring.labels] == labels == ["Yes", "Somewhat", "No"]
    assert judge.scoring.disqualified_label == "No"


def test_calibration_cases_become_goldens_expecting_their_judgement(tmp_path):
    rubric = load_cases(CASES)
    cases = json.loads(CASES.read_text())["cases"]
    added = rubric.goldens[-len(cases) :]
    assert [(g.name, g.input, g.output, g.expected_label) for g in added] == [
        (c["name"], c["prompt"], c["response"], c["expected"]) for c in cases
    ]
    # a golden without an expected label keeps the hash it always had
    assert content_hash(resolve("compliance-judge")) == content_hash(
        rubric.model_copy(update={"goldens": rubric.goldens[:4]})
    )

    def bad(doc: dict, match: str) -> None:
        path = tmp_path / "cases.json"
        path.write_text(json.dumps(doc))
        with pytest.raises(rf.InputError, match=match):
            load_cases(path)

    base = json.loads(CASES.read_text())
    bad({k: v for k, v in base.items() if k != "allowed_judgements"}, r"cases.json: .*missing \['allowed_judgements'\]")
    bad({**base, "cases": [{**cases[0], "expected": "Maybe"}]}, r"case 1 expects 'Maybe', not one of allowed")
    bad({**base, "cases": [{"prompt": "x"}]}, r"case 1 has no response")
    bad({**base, "allowed_judgements": "Yes,Perhaps"}, r"allowed_judgements \['Perhaps'\] are not labels of rubric")
    bad({**base, "rubric": "no-such-rubric"}, r"no-such-rubric")


@pytest.mark.slow
def test_rubric_test_runs_the_cases_and_a_wrong_expectation_fails(tmp_path):
    doc = json.loads(CASES.read_text())
    doc["rubric"] = str(ROOT / "rubrics" / "library" / "compliance-judge.yaml")  # a path works as well as a name
    doc["cases"][2]["expected"] = "Somewhat"
    (tmp_path / "cases.json").write_text(json.dumps(doc))
    env = {**os.environ, "OPENAI_BASE_URL": "", "COLUMNS": "200"}
    run = subprocess.run(
        [EXE, "rubric", "test", "--cases", "cases.json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = " ".join(run.stdout.split())
    assert run.returncode == 1 and "7/8 goldens pass" in out, run.stdout + run.stderr
    assert "expected Somewhat, got No" in out
    with rf.Judge.offline(strategy="holistic") as judge:
        results = judge.test(rf.load_calibration_cases(CASES))
    assert [r.ok for r in results] == [True] * 8 and [r.got for r in results[4:]] == ["Yes", "Yes", "No", "No"]
