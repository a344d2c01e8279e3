"""The `rubricflow rubric` commands, run as a user runs them: the installed console script."""

import shutil
import subprocess

import pytest

from ..conftest import SHARED_RUBRICS, TEST_DATA

EXE = shutil.which("rubricflow")


def run(*args, cwd=None, columns=200):
    assert EXE, "the rubricflow console script is not installed (pip install -e .)"
    return subprocess.run(
        [EXE, *args], capture_output=True, text=True, cwd=cwd, env={"COLUMNS": str(columns), "PATH": ""}
    )


def test_list_and_search():
    listed = run("rubric", "list")
    assert listed.returncode == 0 and "llm-slop" in listed.stdout and "18 rubrics" in listed.stdout
    found = run("rubric", "search", "story")
    assert found.returncode == 0 and "user-story-quality" in found.stdout and "llm-slop" not in found.stdout
    assert run("rubric", "search", "no-such-thing").returncode == 1


def test_validate_library_and_refusals():
    ok = run("rubric", "validate")
    assert ok.returncode == 0 and ok.stdout.count(" ok ") == 18
    bad = run(
        "rubric",
        "validate",
        str(SHARED_RUBRICS / "secemp9/completeness_rubric.md"),
        str(SHARED_RUBRICS / "secemp9/anti_slop_rubric.xml"),
    )
    assert bad.returncode == 1
    assert "completeness_rubric.md: not a rubric" in " ".join(bad.stderr.split())


def test_validate_names_file_and_field_of_a_bad_regex(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text(
        "metadata: {id: bad}\ngoal: g\npatterns: [{id: unclosed, regex: '(x|y'}]\n"
        "criteria: [{id: a, patterns: [unclosed]}]\n"
    )
    res = run("rubric", "validate", str(f))
    assert res.returncode == 1
    assert "E_REGEX" in res.stdout and "patterns[0].regex" in res.stdout and "unclosed" in res.stdout
    # a look-behind RE2 cannot run is kept: a warning, and the rubric validates
    f.write_text(
        "metadata: {id: bad}\ngoal: g\npatterns: [{id: lookbehind, regex: '(?<=x)y'}]\n"
        "criteria: [{id: a, patterns: [lookbehind]}]\n"
    )
    res = run("rubric", "validate", str(f))
    assert res.returncode == 0 and "patterns[0].regex: W_REGEX_BACKTRACKING" in res.stderr


def test_show_render_convert_and_diff(tmp_path):
    shown = run("rubric", "show", "groundedness")
    assert shown.returncode == 0 and "hash: " in shown.stdout and "profile: scoring" in shown.stdout
    rendered = run("rubric", "render", "writing-quality", "--strategy", "per_criterion", "--unit", "economy")
    assert rendered.returncode == 0 and "due to the fact that" in rendered.stdout and '"maximum": 4' in rendered.stdout
    own = run("rubric", "render", "zinsser-judge", "--no-schema")  # no --strategy: the rubric's own (grouped)
    assert own.returncode == 0 and "grouped unit core" in own.stdout and "holistic unit" not in own.stdout
    out = tmp_path / "anti.yaml"
    conv = run(
        "rubric", "convert", str(SHARED_RUBRICS / "secemp9/anti_slop_rubric.xml"), "--to", "yaml", "--out", str(out)
    )
    assert conv.returncode == 0 and out.read_text().startswith("metadata:")
    changed = tmp_path / "anti2.yaml"
    changed.write_text(out.read_text().replace("weight: 3.0", "weight: 4.0", 1))
    d = run("rubric", "diff", str(out), str(changed))
    assert d.returncode == 0 and "criteria.C1.weight" in d.stdout
    many = run(
        "rubric",
        "convert",
        str(SHARED_RUBRICS / "prometheus/score_rubrics_sample.jsonl"),
        "--out-dir",
        str(tmp_path / "p"),
    )
    assert many.returncode == 0 and len(list((tmp_path / "p").glob("*.yaml"))) == 40


@pytest.mark.parametrize(
    "args, message",
    [
        (("rubric", "show", "no-such-rubric"), "no rubric named 'no-such-rubric'"),
        (("rubric", "show", "missing/file.yaml"), "missing/file.yaml: no such file"),
        (("rubric", "render", "llm-slop", "--strategy", "bogus"), "unknown strategy 'bogus'"),
    ],
)
def test_errors_exit_non_zero_with_a_reason(args, message):
    res = run(*args)
    assert res.returncode == 2 and message in " ".join(res.stderr.split())


def test_rich_markup_in_rubric_text_is_shown_as_written(tmp_path):
    """A `[/]` or `[bold]` in a title, goal or label crashed the output (reliability pass)."""
    path = tmp_path / "markup.yaml"
    path.write_text(
        'metadata: {id: markup, title: "Costs [/] and [bold]$5[/bold]"}\ngoal: "Check [/] works"\n'
        'criteria:\n  - {id: a, title: "A [/]"}\n'
        'scoring: {labels: [{label: "[/]", min: 0.5}, {label: "$", min: 0}]}\n'
    )
    shown = run("rubric", "show", str(path), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert (
        "Costs [/] and [bold]$5[/bold]" in shown.stdout
        and "Check [/] works" in shown.stdout
        and "A [/]" in shown.stdout
    )
    validated = run("rubric", "validate", str(path), cwd=tmp_path)
    assert validated.returncode == 0, validated.stderr


def test_terminal_escapes_in_rubric_text_are_shown_not_obeyed(tmp_path):
    """F16: raw ANSI and OSC 8 escapes in a rubric's text reached the terminal (recolour, clear,
    a hidden link). They are printed as visible escapes."""
    path = tmp_path / "escapes.yaml"
    path.write_text(
        'metadata: {id: escapes, title: "Title \\e[2J\\e[31mred", description: "see \\e]8;;http://evil\\alink\\e]8;;\\a"}\n'
        'goal: "goal \\x9b1m"\ncriteria:\n  - {id: a, title: "A \\e[5m"}\n'
    )
    shown = run("rubric", "show", str(path), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout and "\x9b" not in shown.stdout
    assert "Title \\x1b[2J\\x1b[31mred" in shown.stdout and "\\x1b]8;;http://evil\\x07link" in shown.stdout


def test_a_stray_file_in_a_library_folder_is_skipped_by_name_not_fatal(tmp_path):
    """F34: one non-rubric YAML in a library folder made `rubric show` of every rubric fail."""
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "good.yaml").write_text("metadata: {id: good}\ngoal: g\ncriteria:\n  - {id: a}\n")
    (folder / "docker-compose.yaml").write_text("services:\n  db: {image: postgres}\n")
    shown = run("rubric", "show", "good", "--library", str(folder), cwd=tmp_path)
    assert shown.returncode == 0 and "good v" in shown.stdout, shown.stderr
    assert "skipped" in shown.stderr and "docker-compose.yaml" in shown.stderr
    refused = run("rubric", "show", str(folder / "docker-compose.yaml"), cwd=tmp_path)
    assert refused.returncode == 2 and "docker-compose.yaml" in refused.stderr


def test_validate_every_rubric_file_a_user_brings_in_one_command():
    """Issue 13: folders of real rubric files in every format validate; the three files that are not
    rubrics (a prompt; two grading prompts promptfoo configs name) are refused by name;
    multi-rubric files name each rubric."""
    res = run("rubric", "validate", str(SHARED_RUBRICS), str(TEST_DATA / "rubrics"), columns=400)
    lines = res.stdout.splitlines()
    ok = [line for line in lines if "│ ok" in line]
    refused = [line for line in lines if "│ refused" in line]
    assert len(ok) >= 40 and len(refused) == 3
    assert "completeness_rubric.md" in refused[0] and "political-bias-rubric.yaml" in refused[1]
    assert "vision-rubrics/standard.yaml" in refused[2]
    assert res.returncode == 1  # the refusal is reported as a failure
    assert any("multi_spec.yaml#quality-1to5" in line for line in ok)
    assert any("rag_quality.yaml" in line for line in ok) and any("lookahead_spec.xml" in line for line in ok)


def test_show_lists_the_groups_and_fails_on_a_rubric_that_does_not_compile(tmp_path):
    shown = run("rubric", "show", str(TEST_DATA / "rubrics/evaluator_yaml/rag_quality.yaml"))
    assert shown.returncode == 0 and "groups (the scoring tree)" in shown.stdout
    assert "coherence.logical_flow, coherence.consistency" in shown.stdout and "0.6" in shown.stdout
    broken = tmp_path / "broken.yaml"
    broken.write_text("metadata: {id: broken}\ngoal: g\ncriteria: [{id: a, patterns: [missing]}]\n")
    res = run("rubric", "show", str(broken))
    assert res.returncode == 1 and "does not compile" in res.stderr


def test_generate_drafts_a_rubric_from_a_source_document_and_reports_its_profile(tmp_path):
    (tmp_path / "style.md").write_text(
        "# House style\n\nRules we keep:\n\n- Every number cites its source.\n"
        "- Sentences stay under thirty words.\n1. Never use exclamation marks.\n"
        "- Be nice.\n"
    )  # two words: not a checkable rule
    done = run("rubric", "generate", "style.md", "--id", "house", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (
        "OFFLINE judge" in done.stdout and "profile compliance" in done.stdout and "compiled on draft 1" in done.stdout
    )
    from rubricflow.rubrics.compiler import compile_or_raise
    from rubricflow.rubrics.formats import load_rubric

    drafted = load_rubric(tmp_path / "house.yaml")
    assert drafted.metadata.id == "house" and [c.description for c in drafted.criteria] == [
        "Every number cites its source.",
        "Sentences stay under thirty words.",
        "Never use exclamation marks.",
    ]
    compile_or_raise(drafted)
    before = (tmp_path / "house.yaml").read_bytes()
    again = run("rubric", "generate", "style.md", "--id", "house", cwd=tmp_path)  # N7: never overwritten silently
    assert again.returncode == 2 and "house.yaml exists; pass --force" in again.stderr
    assert (tmp_path / "house.yaml").read_bytes() == before
    assert run("rubric", "generate", "style.md", "--id", "house", "--force", cwd=tmp_path).returncode == 0
    (tmp_path / "empty.md").write_text("# Nothing to check here\n\nJust prose, no rules.\n")
    refused = run("rubric", "generate", "empty.md", cwd=tmp_path)
    assert (
        refused.returncode == 2 and "2 drafts did not compile" in refused.stderr and "N2_NO_STRUCTURE" in refused.stderr
    )


def test_review_judges_every_builtin_rubric_with_the_meta_rubric():
    from rubricflow.rubrics.compiler import compile_or_raise
    from rubricflow.rubrics.formats import dump_yaml
    from rubricflow.rubrics.library import Library
    from rubricflow.tasks.improve.goldens import judge_text
    from rubricflow.tasks.judging.config import JudgeConfig
    from rubricflow.tasks.standins.judge_server import RunningServer

    meta = compile_or_raise(Library().get("rubric-quality").rubric)
    entries = Library().entries()
    with RunningServer() as server:
        config = JudgeConfig(base_url=server.base_url, strategy="per_criterion")
        reviews = {e.id: judge_text(meta, config, e.id, dump_yaml(e.rubric)) for e in entries}
    assert len(reviews) == 18
    for rubric_id, review in reviews.items():
        assert not review.errors and review.verdict.score is not None, rubric_id
        assert {j.criterion_id for j in review.judgments if j.status == "scored"} == {
            c.id for c in meta.rubric.criteria
        }
    assert reviews["llm-slop"].verdict.passed  # anchored, weighted, with disqualifiers
    done = run("rubric", "review", "llm-slop")
    assert (
        done.returncode == 0
        and "reviewed with rubric-quality@1.0.0" in done.stdout
        and "meta-judgment: score" in done.stdout
    )


def test_review_names_a_source_it_cannot_read_without_a_traceback(tmp_path):
    """N17: `rubric review --source` of a missing or non-UTF-8 file ended in a traceback."""
    (tmp_path / "latin1.md").write_bytes("Règles de la maison".encode("latin-1"))
    for name, says in (("missing.md", "cannot be read"), ("latin1.md", "not UTF-8 text")):
        done = run("rubric", "review", "llm-slop", "--source", name, cwd=tmp_path)
        assert done.returncode == 2 and f"{name}: {says}" in done.stderr and "Traceback" not in done.stderr


def test_doctor_says_which_importer_read_a_file_and_what_it_ignored(tmp_path):
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: [p.txt]\ndefaultTest:\n  assert:\n    - type: llm-rubric\n      value: Polite\n"
    )
    (tmp_path / "notes.yaml").write_text("shopping: [milk]\n")
    done = run("doctor", str(tmp_path / "promptfooconfig.yaml"), str(tmp_path / "notes.yaml"))
    assert done.returncode == 1  # one file refused
    assert "read by: the promptfoo importer" in done.stdout and "fields left alone (1):" in done.stdout
    assert "prompts: the prompts under test are promptfoo's" in done.stdout
    assert "refused" in done.stderr and "notes.yaml" in done.stderr
    folder = TEST_DATA / "rubrics" / "prompty"
    prompty = run("doctor", str(folder))
    files = len(list(folder.rglob("*.prompty")))
    assert prompty.returncode == 0 and files >= 5 and prompty.stdout.count("read by: the Prompty importer") == files


def test_show_names_the_verdict_space_rules_examples_and_the_seed_predicates():
    shown = run("rubric", "show", str(TEST_DATA / "rubrics/xml/compliance-judge-layout.xml"))
    out = " ".join(shown.stdout.split())
    assert shown.returncode == 0 and "profile: compliance" in out
    assert "verdicts: Yes (1), Somewhat (0.5), No (0) decision rules: 4 mapping examples: 5" in out
    assert '"P_decision": true' in out and '"P_examples": 5' in out
