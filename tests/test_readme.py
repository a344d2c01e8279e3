"""The README's two commands are CI's, and the documented YAML example (docs/rubrics.md) is a real,
compiling rubric."""

import os
import re
import shlex
import shutil
import subprocess

import pytest

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


def tour_commands() -> list[list[str]]:
    """The README tour's commands as a shell splits them (comments dropped)."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## A five-minute tour\n\n```bash\n(.*?)```", text, re.S).group(1)
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


@pytest.mark.slow
def test_the_readme_tour_runs_verbatim_from_a_fresh_clone(tmp_path, judge_server):
    """Every tour command, as written, from a folder holding what a clone holds (the tracked files
    the tour names), against a judge server of its own (the tour's port may be taken here)."""
    commands = tour_commands()
    assert commands[0][:2] == ["rubricflow", "judge-server"] and commands[-1] == ["rubricflow", "view"]
    named = sorted({arg for cmd in commands for arg in cmd if arg.startswith("examples/")})
    tracked = subprocess.run(["git", "ls-files", *named], cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert named and sorted(tracked) == named, f"the tour names files a clone lacks: {set(named) - set(tracked)}"
    for name in named:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    server = judge_server()
    env = {k: v for k, v in os.environ.items() if k != "RUBRICFLOW_WAREHOUSE"} | {"COLUMNS": "200"}
    outputs = []
    for command in commands[1:-1]:  # the server is started above; `view` serves until stopped
        command = [arg.replace("http://127.0.0.1:8765/v1", server.base_url) for arg in command]
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{shlex.join(command)}: {done.stdout[-1500:]}{done.stderr[-1500:]}"
        outputs.append(done.stdout)
    assert "30 texts loaded" in outputs[0] and "coverage 100%" in outputs[1]
    assert "A/B on replies" in outputs[-2] and "gate passed (exit 0)" in outputs[-1]
    assert (tmp_path / "warehouse" / "rubricflow.duckdb").is_file() and (tmp_path / "gate.xml").is_file()


def test_the_demos_warehouse_folder_is_ignored_by_git():
    """`rubricflow demo` run from a clone leaves warehouse/demo/ behind: git must not offer it."""
    done = subprocess.run(["git", "check-ignore", "-q", "warehouse/demo/demo.duckdb"], cwd=ROOT)
    assert done.returncode == 0


def test_the_docs_home_page_shows_the_same_tour():
    """docs/index.md (the site's first page) kept the tour's old, unrunnable paths (data/replies.jsonl,
    my-rubrics/...) after the README's was fixed: the two are one tour."""
    pattern = r"## A five-minute tour\n\n```bash\n(.*?)```"
    home = re.search(pattern, (ROOT / "docs" / "index.md").read_text(), re.S).group(1)
    assert home == re.search(pattern, (ROOT / "README.md").read_text(), re.S).group(1)
