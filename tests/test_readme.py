"""The README's two commands are CI's, and the documented YAML example (docs/rubrics.md) is a real,
compiling rubric."""

import hashlib
import os
import re
import shutil
import subprocess
import textwrap

import pytest

from rubricflow.rubrics.compiler import compile_rubric
from rubricflow.rubrics.formats import loads_rubrics
from rubricflow.rubrics.scoring import verdict

from .conftest import ROOT, SHARED, ServerProcess


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


def shell_blocks() -> list[tuple[str, str]]:
    """(page#hash, text) for every shell block of the README and the docs, in reading order (the
    README first: its tour ingests and scores the `replies` corpus the docs' later blocks use). A
    block is named by its page and a hash of its text, not its line: an edit above it moves it and
    keeps its name; an edit of the block itself renames it, so an exception below is looked at again."""
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for block in re.finditer(r"```(?:bash|sh|shell|console)\n(.*?)```", text, re.S):
            body = textwrap.dedent(block.group(1))
            found.append((block_name(page.relative_to(ROOT).as_posix(), body), body))
    return found


def block_name(page: str, body: str) -> str:
    return f"{page}#{hashlib.sha256(body.encode()).hexdigest()[:8]}"


def where(name: str) -> str:
    """page:line of a named block now, for a failure's message."""
    page, _ = name.split("#")
    text = (ROOT / page).read_text(encoding="utf-8")
    body = dict(shell_blocks())[name]
    return f"{page}:{text[: text.index(body)].count(chr(10))}" if body in text else page


# Blocks not run here, each named with the reason (a block added to the docs runs unless named here).
NOT_RUN = {
    "README.md#3a825317": "installs the project and runs the whole suite: that is .ci/run itself",
    "docs/index.md#3a825317": "the README's install commands (docs/index.md repeats them): .ci/run",
    "docs/index.md#c0ce1b83": "the README's tour (docs/index.md repeats it, checked by test_the_docs_home_page_shows_the_same_tour)",
    "docs/benchmarks.md#1f2a6408": "the benches at full size (minutes each); tests/test_benches.py runs every one at a smoke size",
    "docs/browsing.md#84b0e7a7": "both lines start the viewer, a web server that serves until stopped; "
    "tests/flows/test_viewer.py serves and reads every page",
    "docs/deployment.md#071888c9": "a Prefect server and worker that serve until stopped; tests/flows/test_deploy_unset.py deploys for real",
    "docs/operations.md#5ac4c7d1": "Prefect's own server with its UI, which serves until stopped",
    "docs/models.md#02491f07": "builds llama.cpp (minutes); tests/flows/test_local_model.py runs the demo's flow on the real model",
    # Not a server, a key or a GPU but cost: these run `improve evolve` at the documented size, minutes of
    # judge calls each (the benches and the llama.cpp build above likewise: minutes each).
    "docs/analysis.md#828e8eda": "`improve evolve` at the documented size: over 10 minutes of judge calls here; "
    "tests/flows/test_evolve_objectives.py runs these options at a test size",
    "docs/analysis.md#af5baa6c": "`improve evolve --co-evolve` at the documented size (8 rounds): minutes of judge calls; "
    "tests/flows/test_evolve_coevolve.py runs it at a test size",
    "docs/analysis.md#e656bec9": "`improve evolve` at the default size (minutes of judge calls); "
    "tests/flows/test_evolve.py runs it at a test size",
    "docs/browsing.md#fb7b0865": "`report evolution -c tc` needs the `improve evolve` of tc above (not run here); "
    "tests/flows/test_evolve.py writes the report",
    "docs/analysis.md#2b77cebc": "`labels import-ls` reads an export that annotators made on a Label Studio server; "
    "tests/cli/test_label_studio.py round-trips one",
    "docs/operations.md#06e8f132": "its OTLP line needs the otel extra and a collector on 127.0.0.1:4318 (a server); "
    "tests/flows/test_telemetry.py checks the console exporter's spans",
    "docs/scoring.md#eaa332cd": "downloads the IMDB dataset from the Hugging Face Hub's servers (no internet in the tests)",
}
# Commands that exit non-zero here by design, each named by its block and how the line starts: (the exit
# code, what it must say). The block runs on past them; any other exit, or none, fails the block.
EXPECTED_EXITS = {
    # analysis.md's labels calibrate the offline judge's helpfulness at r = -0.13, under the gate's 0.7:
    # `rubric status` flags it and exits 1 (analysis.md, "Usage and the calibration gate"), and so does a
    # night of that rubric after recording it.
    "docs/rubrics.md#840a3485": ("rubricflow rubric status", 1, "calibration gate: helpfulness@1.0.0"),
    "docs/operations.md#90c5826f": ("rubricflow nightly", 1, "calibration gate: helpfulness"),
    # The stand-in under another model's name reorders the texts (rho 0.14): the documented refusal.
    "docs/operations.md#6a7ec4ed": ("rubricflow judge bridge", 1, "not stitchable:"),
}
# Lines dropped from a block that runs (by how they start): the fixture's judge server stands for the
# first; the viewer and `serve` run until stopped (tests/flows/test_viewer.py, tests/cli/test_serve.py).
DROPPED = ("rubricflow judge-server --port 8765 &", "rubricflow view", "rubricflow serve ")
# The documented endpoints (the offline judge's port, llama.cpp's, a placeholder for the user's): the
# fixture's offline judge answers for each, whatever the model's name.
DOCUMENTED_URLS = ("http://127.0.0.1:8765/v1", "http://127.0.0.1:8080/v1", "https://api.example/v1")


@pytest.fixture(scope="module")
def docs_workspace(tmp_path_factory):
    """A folder holding what a clone holds (the tracked files the docs name) and ../shared, one offline
    judge server standing for every endpoint the docs name (their local URLs, and OPENAI_BASE_URL with a
    key for the `--model gpt-...` commands), one warehouse that the blocks build on in reading order."""
    home = tmp_path_factory.mktemp("docs")
    clone = home / "clone"
    tracked = subprocess.run(
        ["git", "ls-files", "examples", "flows/samples", "tests/data"], cwd=ROOT, capture_output=True, text=True
    )
    for name in tracked.stdout.split():
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, clone / name)
    (home / "shared").symlink_to(SHARED.parent, target_is_directory=True)
    server = ServerProcess()
    env = {k: v for k, v in os.environ.items() if k != "RUBRICFLOW_WAREHOUSE"}
    env |= {"COLUMNS": "200", "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-docs-stand-in"}
    yield clone, server, env
    server.stop()


def run_block(text: str, workspace, place: str = "", expected: tuple | None = None) -> subprocess.CompletedProcess:
    """The block as one bash script in the workspace (its `export`s hold for its later lines), each
    command echoed (`set -x`) so a failure names its line; stops at the first that fails, but for the
    line `expected` names, which must exit with its code and say its words."""
    clone, server, env = workspace
    kept = [line for line in text.splitlines() if not line.split("  #")[0].strip().startswith(DROPPED)]
    if expected:
        start, code, _ = expected
        hits = [i for i, line in enumerate(kept) if line.startswith(start)]
        assert len(hits) == 1, f"{place}: one line starting {start!r} expected, found {len(hits)}"
        said = f"echo 'expected exit {code}, got' $rc >&2; exit 97"
        kept[hits[0]] = f"rc=0; {{ {kept[hits[0]]}\n}} || rc=$?; [ $rc = {code} ] || {{ {said}; }}"
    script = "\n".join(["set -ex -o pipefail", *kept])
    for url in DOCUMENTED_URLS:
        script = script.replace(url, server.base_url)
    done = subprocess.run(["bash", "-c", script], cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{place}\n{done.stdout[-1500:]}\n{done.stderr[-2500:]}"
    if expected:
        assert expected[2] in done.stdout + done.stderr, f"{place}: {expected[2]!r} not said\n{done.stderr[-2500:]}"
    return done


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.skip(reason=f"{n}: {NOT_RUN[n]}")) if n in NOT_RUN else n
        for n, _ in shell_blocks()
    ],
)
def test_every_shell_block_of_the_docs_runs_as_written(name, docs_workspace):
    """Every command of every shell block, verbatim but for the documented local addresses, from a
    fresh clone's files against the offline judge; blocks run in reading order on one warehouse."""
    output = run_block(dict(shell_blocks())[name], docs_workspace, where(name), EXPECTED_EXITS.get(name)).stdout
    if name == block_name("README.md", textwrap.dedent(tour("README.md"))):  # the tour
        assert "30 texts loaded" in output and "coverage 100%" in output
        assert "A/B on replies" in output and "gate passed (exit 0)" in output
        clone = docs_workspace[0]
        assert (clone / "warehouse" / "rubricflow.duckdb").is_file() and (clone / "gate.xml").is_file()


def test_the_blocks_named_as_not_run_are_in_the_docs():
    """A name left behind when its block changed or went would excuse nothing, silently."""
    names = {name for name, _ in shell_blocks()}
    assert set(NOT_RUN) <= names and set(EXPECTED_EXITS) <= names and not set(NOT_RUN) & set(EXPECTED_EXITS)


def test_no_block_that_runs_is_left_empty_by_its_dropped_lines():
    """A block whose every command is dropped would pass having run nothing: it must be named above."""
    for name, body in shell_blocks():
        commands = [line for line in body.splitlines() if line.strip() and not line.startswith("#")]
        kept = [line for line in commands if not line.split("  #")[0].strip().startswith(DROPPED)]
        assert kept or name in NOT_RUN, f"{where(name)}: every line is dropped; name it in NOT_RUN with its server"


def test_the_demos_warehouse_folder_is_ignored_by_git():
    """`rubricflow demo` run from a clone leaves warehouse/demo/ behind: git must not offer it."""
    done = subprocess.run(["git", "check-ignore", "-q", "warehouse/demo/demo.duckdb"], cwd=ROOT)
    assert done.returncode == 0


def tour(page: str) -> str:
    """The five-minute tour's block on a page (the README's, repeated by docs/index.md)."""
    pattern = r"## A five-minute tour\n\n```bash\n(.*?)```"
    return re.search(pattern, (ROOT / page).read_text(), re.S).group(1)


def test_the_docs_home_page_shows_the_same_tour():
    """docs/index.md (the site's first page) kept the tour's old, unrunnable paths (data/replies.jsonl,
    my-rubrics/...) after the README's was fixed: the two are one tour."""
    assert tour("docs/index.md") == tour("README.md")
