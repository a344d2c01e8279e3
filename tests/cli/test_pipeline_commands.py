"""The pipeline commands as a user runs them."""

import json
import os
import shutil
import subprocess

import pytest

EXE = shutil.which("rubricflow")


def run(*args, cwd=None, env=None):
    return subprocess.run(
        [EXE, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        timeout=300,
    )


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory):
    """`rubricflow demo` from an empty folder, as the README's first command runs it."""
    cwd = tmp_path_factory.mktemp("demo")
    result = run("demo", cwd=cwd)
    assert result.returncode == 0, result.stderr[-2000:]
    return cwd, result


def test_demo_runs_offline_and_prints_summaries(demo_dir):
    cwd, result = demo_dir
    assert "OFFLINE judge" in result.stdout and "deterministic stand-in" in result.stdout
    assert "22 texts loaded, 2 rows quarantined" in result.stdout
    assert "deliberate: the sample corpus ends in two bad rows" in result.stdout
    assert result.stdout.count("status completed") == 2 and "coverage 100%" in result.stdout
    for table in ("labels", "criteria", "top pattern hits"):
        assert table in result.stdout
    assert (cwd / "warehouse" / "demo" / "demo.duckdb").is_file()
    # what it leaves running is named, with how to end it
    assert "left running for the next command: the local Prefect server (pid" in result.stdout
    assert result.stdout.rstrip().endswith("or now with: rubricflow stop")


def test_query_formats_and_read_only(demo_dir):
    cwd, _ = demo_dir
    w = ["-w", "warehouse/demo/demo.duckdb"]
    table = run("query", "SELECT count(*) AS n FROM texts", *w, cwd=cwd)
    assert table.returncode == 0 and "22" in table.stdout
    as_json = run("query", "SELECT text_id, label FROM text_scores ORDER BY text_id LIMIT 3", "-f", "json", *w, cwd=cwd)
    assert [json.loads(line)["text_id"] for line in as_json.stdout.splitlines()] == ["doc-001", "doc-001", "doc-002"]
    as_csv = run("query", "SELECT 1 AS one", "-f", "csv", *w, cwd=cwd)
    assert as_csv.stdout.splitlines() == ["one", "1"]
    out = cwd / "scores.parquet"
    assert run("query", "SELECT * FROM text_scores", "-f", "parquet", "-o", str(out), *w, cwd=cwd).returncode == 0
    assert out.stat().st_size > 0
    for statement in ("DELETE FROM texts", "DROP TABLE judgments", "CREATE TABLE x AS SELECT 1"):
        refused = run("query", statement, *w, cwd=cwd)
        assert refused.returncode == 1 and "read-only" in refused.stderr.replace("\n", " ")
    assert "22" in run("query", "SELECT count(*) FROM texts", *w, cwd=cwd).stdout
    lists = run("query", "SELECT text_id, evidence FROM judgments ORDER BY text_id LIMIT 1", "-f", "csv", *w, cwd=cwd)
    assert lists.returncode == 0 and lists.stdout.splitlines()[1].startswith('doc-001,"[')  # list columns as JSON


EVERY_TYPE = (
    "SELECT INTERVAL 3 DAY AS i, union_value(n := 2)::UNION(n INT, s VARCHAR) AS u, '\\xAA\\x00'::BLOB AS b,"
    " 1::VARIANT AS v, {'a': INTERVAL 1 DAY} AS s, [1, 2] AS l, MAP {'k': 1} AS m, 1::HUGEINT AS h,"
    " 1.5::DECIMAL(38, 2) AS d, uuid() AS id, 'x'::ENUM('x', 'y') AS e, '101'::BIT AS bits, TIMETZ '01:02:03+01' AS tz"
)


@pytest.mark.parametrize("form", ["table", "csv", "json", "parquet"])
def test_query_writes_every_duckdb_type_in_every_format(demo_dir, form):
    """#21 N15: INTERVAL, UNION, BLOB and VARIANT columns crashed some formats (a panic in JSON)."""
    cwd, _ = demo_dir
    target = cwd / f"every.{form}"
    done = run("query", EVERY_TYPE, "-f", form, "-o", str(target), "-w", "warehouse/demo/demo.duckdb", cwd=cwd)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-1500:]
    if form == "json":
        row = json.loads(target.read_text())
        assert row["i"] == "3 days" and row["u"] == "2" and row["b"] == "\\xAA\\x00" and row["v"] == "1"
        assert row["l"] == [1, 2] and row["m"] == {"k": 1} and row["bits"] == "101" and row["tz"] == "01:02:03+01"
    if form == "table":
        assert "3 days" in done.stdout and "\\xAA\\x00" in done.stdout
    twice = run("query", "SELECT 1 AS a, 2 AS a", "-w", "warehouse/demo/demo.duckdb", cwd=cwd)
    assert twice.returncode == 1 and "'a' appear twice" in twice.stderr and "Traceback" not in twice.stderr


def test_runs_and_show(demo_dir):
    cwd, _ = demo_dir
    runs = run("runs", "-w", "warehouse/demo/demo.duckdb", cwd=cwd)
    assert runs.returncode == 0 and "llm-slop v1.0.0" in runs.stdout and "writing-quality v1.0.0" in runs.stdout
    prompts = runs.stdout.split("prompt tokens", 1)[-1]  # the second table: sent, cached, minimum, saved
    assert "prompt_cached" in prompts and "cache_saved_usd" in prompts and "rubric-first" in prompts
    shown = run("show", "doc-013", "-w", "warehouse/demo/demo.duckdb", cwd=cwd)
    assert shown.returncode == 0 and "Nestled in the heart" in shown.stdout and "offline stand-in judge" in shown.stdout
    missing = run("show", "nope", "-w", "warehouse/demo/demo.duckdb", cwd=cwd)
    assert missing.returncode == 1 and "no text 'nope'" in missing.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (("score", "-c", "x", "-r", "llm-slop"), "no judge endpoint"),
        (("ingest", "missing.jsonl"), "missing.jsonl: no such file"),
        (("query", "SELECT 1", "-w", "nowhere.duckdb"), "no warehouse at nowhere.duckdb"),
        (("judge-server", "--faults", "gremlins"), "unknown faults ['gremlins']"),
        (  # F19: a path the machine refuses was a traceback
            ("score", "-c", "x", "-r", "llm-slop", "--base-url", "http://127.0.0.1:9/v1", "-w", "/proc/x.duckdb"),
            "/proc/runs: No such file or directory",
        ),
        (
            ("nightly", "-c", "x", "--source", "gone.jsonl", "-r", "llm-slop"),
            "gone.jsonl: the night's source is missing",
        ),
    ],
)
def test_errors_name_the_problem(tmp_path, args, message):
    result = run(*args, cwd=tmp_path, env={"OPENAI_BASE_URL": "", "COLUMNS": "1000"})  # no line wrapped
    assert result.returncode == 2 and message in result.stderr.replace("\n", " ")
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) <= 3  # one error, said once


def test_score_unknown_rubric_and_corpus(tmp_path, demo_dir):
    cwd, _ = demo_dir
    bad_rubric = run(
        "score",
        "-c",
        "demo",
        "-r",
        "no-such-rubric",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "-w",
        "warehouse/demo/demo.duckdb",
        cwd=cwd,
    )
    assert bad_rubric.returncode == 2 and "no rubric named 'no-such-rubric'" in bad_rubric.stderr
    bad_corpus = run(
        "score",
        "-c",
        "nope",
        "-r",
        "llm-slop",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "-w",
        "warehouse/demo/demo.duckdb",
        cwd=cwd,
    )
    assert bad_corpus.returncode == 2 and "no corpus 'nope'" in bad_corpus.stderr
    # an error raised inside the flow is one line, not Prefect's 60 lines of traceback
    assert "Traceback" not in bad_corpus.stderr and "Task run failed" not in bad_corpus.stderr
    assert "nanobind" not in bad_corpus.stderr and len(bad_corpus.stderr.splitlines()) <= 4  # N18: ~40 "leaked" lines
    here = run(
        "score",
        "-c",
        "nope",
        "-r",
        "llm-slop",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "-w",
        "warehouse/demo/demo.duckdb",
        cwd=cwd,
        env={"RUBRICFLOW_WARM_WORKER": "0"},
    )
    assert (
        here.returncode == 2 and "no corpus" in here.stderr and "nanobind" not in here.stderr
    )  # without the worker too
    assert (
        "Traceback"
        in run(
            "--debug",
            "score",
            "-c",
            "nope",
            "-r",
            "llm-slop",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "-w",
            "warehouse/demo/demo.duckdb",
            cwd=cwd,
        ).stderr
    )


def test_demo_never_deletes_what_it_did_not_create(tmp_path):
    """Finding 2: `demo -w` once unlinked a real warehouse and the runs/ folder beside it."""
    mine = tmp_path / "data"
    (mine / "runs" / "r1" / "landing").mkdir(parents=True)
    (mine / "runs" / "r1" / "landing" / "shard-00000.completions.parquet").write_bytes(b"landed work")
    (mine / "w.duckdb").write_bytes(b"a real warehouse")
    result = run("demo", "-w", str(mine / "w.duckdb"), cwd=tmp_path)
    assert result.returncode == 2 and "files the demo did not create" in " ".join(result.stderr.split())
    assert (mine / "w.duckdb").read_bytes() == b"a real warehouse"
    assert (mine / "runs" / "r1" / "landing" / "shard-00000.completions.parquet").read_bytes() == b"landed work"


def test_a_folder_the_demo_used_once_is_not_the_demos_for_good(tmp_path):
    """F2: after one demo in an empty folder, its marker made the folder the demo's: a production
    warehouse put there later (with pending shards) was deleted by the next `demo --fresh`."""
    folder = tmp_path / "data"
    first = run("demo", "-w", str(folder / "w.duckdb"), "--texts", "3", cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    corpus = tmp_path / "prod.jsonl"
    corpus.write_text('{"id": "p1", "text": "production text"}\n')
    assert run("ingest", str(corpus), "-c", "prod", "-w", str(folder / "w.duckdb"), cwd=tmp_path).returncode == 0
    again = run("demo", "-w", str(folder / "w.duckdb"), "--texts", "3", cwd=tmp_path)
    assert again.returncode == 2 and "did not create (corpora/prod)" in " ".join(again.stderr.split())
    shutil.rmtree(folder / "corpora" / "prod")  # the corpus's Parquet moved away: the warehouse still holds it
    again = run("demo", "-w", str(folder / "w.duckdb"), "--texts", "3", cwd=tmp_path)
    assert again.returncode == 2 and "corpora other than the demo's (prod)" in " ".join(again.stderr.split())
    (folder / "notes.txt").write_text("mine")
    third = run("demo", "-w", str(folder / "other.duckdb"), "--texts", "3", cwd=tmp_path)
    assert third.returncode == 2 and "notes.txt" in third.stderr
    from tests.conftest import rows

    assert rows(folder / "w.duckdb", "SELECT count(*) FROM texts WHERE corpus_id = 'prod'") == [(1,)]


def test_prefects_shutdown_notes_never_reach_the_terminal():
    """On a loaded machine Prefect's events worker logged "Still processing items" at exit, a second
    line after a command's one-line error (seen in CI); a real warning still shows."""
    import subprocess
    import sys

    code = (
        "import logging; from rubricflow.cli.flow_start import start_flows; start_flows(); "
        "log = logging.getLogger('EventsWorker'); "
        "log.warning('Still processing items: 2 items remaining...'); log.warning('a real warning')"
    )
    env = {**os.environ, "RUBRICFLOW_PREFECT_SERVER": "ephemeral"}
    env.pop("PREFECT_API_URL", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert "a real warning" in done.stderr and "Still processing" not in done.stderr, done.stderr
