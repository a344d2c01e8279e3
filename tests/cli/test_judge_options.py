"""Judge options are declared once, by JudgeConfig's fields (rubricflow/cli/judge_options.py): a
field is an option of every judging command, its docstring the help text, and what the user gives
reaches the request body."""

import pytest
import typer.main

from rubricflow.cli import app
from rubricflow.cli.judge_options import judge_fields, option_name, run_fields
from rubricflow.tasks.judging.config import JudgeConfig
from tests.conftest import write_corpus

from .test_pipeline_commands import run

JUDGING = [("score",), ("compare",), ("pairwise",), ("best-of",), ("gate",), ("nightly",), ("rubric", "test")]


def command(*path: str):
    group = typer.main.get_command(app)
    for name in path:
        group = group.commands[name]  # type: ignore[attr-defined]
    return group


@pytest.mark.parametrize("path", JUDGING, ids=" ".join)
def test_every_judging_command_offers_every_judge_field_with_its_docstring(path):
    options = {opt: p for p in command(*path).params for opt in p.opts}
    for name, field in judge_fields(("seed",) if path == ("compare",) else ()).items():
        assert field.description, f"JudgeConfig.{name} has no docstring: it is the option's help"
        assert option_name(name) in options, f"{' '.join(path)} lacks {option_name(name)}"
        assert " ".join(field.description.split()) in options[option_name(name)].help


@pytest.mark.parametrize("path", [("score",), ("pairwise",), ("best-of",)], ids=" ".join)
def test_every_scoring_command_offers_every_run_wide_setting_with_its_docstring(path):
    """A run-wide setting is one field of RunOptions: each command that scores offers it (pairwise
    has no disqualifiers to skip), --max-cells among them, and a bad value is a usage error."""
    options = {opt: p for p in command(*path).params for opt in p.opts}
    fields = run_fields(("skip_disqualified",) if path in (("pairwise",), ("best-of",)) else ())
    assert "max_cells" in fields
    for name, field in fields.items():
        assert field.description, f"RunOptions.{name} has no docstring: it is the option's help"
        assert " ".join(field.description.split()) in options[option_name(name)].help


def test_top_p_given_on_the_command_line_reaches_the_request_body(tmp_path, thread_judge_server):
    """top_p is one field of JudgeConfig (marked SENT) and nothing else: `--top-p 0.5` reaches every
    call, and it is part of the judge setup (another top_p is another judge hash)."""
    server = thread_judge_server()
    write_corpus(tmp_path / "c.jsonl", 3)
    w = ["-w", str(tmp_path / "w.duckdb")]
    assert run("ingest", str(tmp_path / "c.jsonl"), "-c", "c", *w).returncode == 0
    done = run("score", "-c", "c", "-r", "llm-slop", "--base-url", server.base_url, "--top-p", "0.5", *w)
    assert done.returncode == 0, done.stderr[-2000:]
    assert server.stats()["sampling"].get("top_p=0.5") == 3  # every judge call carried it
    refused = run("score", "-c", "c", "-r", "llm-slop", "--base-url", server.base_url, "--top-p", "2", *w)
    assert refused.returncode == 2 and "top_p" in refused.stderr  # JudgeConfig's bounds, before any call
    assert JudgeConfig(top_p=0.5).judge_hash() != JudgeConfig().judge_hash()


def test_the_authoring_and_evolve_commands_take_the_same_generated_options_and_send_them(tmp_path, thread_judge_server):
    """rubric generate / review / refine and improve evolve declare no judge option of their own: each is
    generated from JudgeConfig (but those about a scoring run's work, for one-call commands), and
    `rubric review --top-p 0.5` reaches the request body."""
    one_call = {"batch", "batch_poll_s", "batch_timeout_s", "cluster", "limits_url", "budget_usd"}
    for path, left in [(("rubric", "generate"), one_call | {"max_tokens"}), (("rubric", "review"), one_call | {"strategy"}),
                       (("rubric", "refine"), one_call | {"strategy", "max_tokens"}), (("improve", "evolve"), {"seed"})]:  # fmt: skip
        options = {opt: p for p in command(*path).params for opt in p.opts}
        for name, field in judge_fields(tuple(left)).items():
            assert " ".join(field.description.split()) in options[option_name(name)].help, (path, name)
    server = thread_judge_server()
    done = run("rubric", "review", "llm-slop", "--base-url", server.base_url, "--top-p", "0.5")
    assert done.returncode == 0, done.stderr[-2000:]
    assert server.stats()["sampling"].get("top_p=0.5", 0) >= 1
