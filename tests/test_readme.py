"""The README's two commands are CI's, and the documented YAML example (docs/rubrics.md) is a real,
compiling rubric."""

import re

from rubricflow.rubrics.compiler import compile_rubric
from rubricflow.rubrics.formats import loads_rubrics
from rubricflow.rubrics.scoring import verdict

from .conftest import ROOT


def test_documented_yaml_example_compiles_and_scores():
    text = (ROOT / "docs" / "rubrics.md").read_text()
    block = re.search(r"```yaml\n(metadata:.*?)```", text, re.S).group(1)
    [rubric] = loads_rubrics(block, "README-example.yaml")
    bundle, issues = compile_rubric(rubric)
    assert bundle is not None, [str(i) for i in issues if i.severity == "error"]
    assert not [i for i in issues if i.severity == "error"]
    assert {(i.code, i.path) for i in issues} == {("S1_UNANCHORED", "criteria[3].scale")}
    golden = rubric.goldens[0]
    values = {"correct": 5, "tone": 1, "urgency": "low", "length-ok": 3}
    assert verdict(rubric, values).passed is True and golden.expected == "pass"


def test_readme_starts_with_the_two_commands_ci_runs():
    text = (ROOT / "README.md").read_text()
    first_block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    commands = [line for line in first_block.splitlines() if line and not line.startswith("#")]
    assert len(commands) == 2
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1].replace("pip install -q", "pip install") in ci.replace("pip install -q", "pip install")
