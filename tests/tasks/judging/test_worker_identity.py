"""A cluster worker of another version, or whose answer-reading code differs, is told apart from
the flow: its task is refused (148 of 360 judgments differed, unnoticed, with 0.1.0 everywhere)."""

import tomllib

import rubricflow
from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.library import resolve
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.remote import identity_refusal, prompt_identity, reading_code_digest
from tests.conftest import ROOT

BUNDLE = compile_or_raise(resolve("llm-slop"))


def test_the_package_version_has_one_source_and_names_the_identity():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "rubricflow.version.__version__"}
    declared = rubricflow.__version__
    assert declared != "0.1.0"  # 0.1.0 since the first commit
    assert prompt_identity(BUNDLE, JudgeConfig()).startswith(f"{declared}:")


def test_a_worker_of_another_version_is_refused_in_a_line_naming_both_versions():
    mine = prompt_identity(BUNDLE, JudgeConfig())
    other = "0.1.0:" + mine.split(":", 1)[1]
    said = identity_refusal(mine, other)
    assert said.startswith(f"this worker runs rubricflow {rubricflow.__version__}, the flow 0.1.0:")
    assert "\n" not in said and identity_refusal(mine, mine) == ""


def test_a_worker_that_reads_answers_differently_has_another_identity():
    config = JudgeConfig()
    mine = prompt_identity(BUNDLE, config)
    assert mine == prompt_identity(BUNDLE, config, reading=reading_code_digest())
    assert mine != prompt_identity(BUNDLE, config, reading="another-reader-0")
