"""Nothing is bought before every input is checked (an outside probe): `compare` judged side A and
then failed on an unknown side B; `score -r good -r bad` judged the good rubric and then failed on
the bad one; `pairwise` on a plain corpus bought its calls and exited 0 with no verdict; `compare`
of one rubric version and one judge with itself exited 0. Each is now exit 2 before any call, counted
on the offline judge server over HTTP, and an A/B of two judges on one rubric still runs."""

import re

import pytest

from tests.conftest import ROOT, ThreadServer, rows, run_cli, write_corpus


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A plain corpus of 6 texts, a rubric file that does not compile (`criteria: []`), and a judge."""
    home = tmp_path_factory.mktemp("pays-after-checks")
    write_corpus(home / "corpus.jsonl", 6)
    done = run_cli(home, "ingest", "corpus.jsonl", "--corpus", "small")
    assert done.returncode == 0, done.stderr
    slop = (ROOT / "rubrics" / "library" / "llm-slop.yaml").read_text(encoding="utf-8")
    criteria = re.search(r"^criteria:\n(?:[ -].*\n)+", slop, re.MULTILINE)
    (home / "no-criteria.yaml").write_text(slop.replace(criteria.group(0), "criteria: []\n"), encoding="utf-8")
    server = ThreadServer()
    try:
        yield home, server
    finally:
        server.stop()


def refused(small, *args: str) -> str:
    """Run a command that must be refused as bad input before any call: exit 2, no call answered by
    the judge, no run recorded in the warehouse. Returns what it said."""
    home, server = small
    calls, runs = server.stats()["answered"], rows(home / "w.duckdb", "SELECT count(*) FROM runs")
    done = run_cli(home, *args, "--base-url", server.base_url)
    assert done.returncode == 2, (done.stdout[-2000:], done.stderr[-2000:])
    assert server.stats()["answered"] == calls, done.stdout[-2000:]
    assert rows(home / "w.duckdb", "SELECT count(*) FROM runs") == runs
    return done.stderr


@pytest.mark.parametrize("b", ["llm-slopp", "no-criteria.yaml"])
def test_compare_resolves_both_sides_before_judging_either(small, b):
    said = refused(small, "compare", "-c", "small", "--a", "llm-slop@1.0.0", "--b", b)
    assert said.startswith("error:") and ("llm-slopp" in said or "no-criteria.yaml" in said), said


@pytest.mark.parametrize("bad", ["llm-slopp", "no-criteria.yaml"])
def test_score_compiles_every_rubric_before_the_first_call(small, bad):
    said = refused(small, "score", "-c", "small", "-r", "writing-quality", "-r", bad)
    assert said.startswith("error:") and bad in said, said


def test_pairwise_refuses_a_corpus_that_is_not_a_pair_corpus(small):
    said = refused(small, "pairwise", "-c", "small", "-r", "llm-slop")
    assert said.strip() == (
        "error: corpus small: not a pair corpus (6 of 6 texts are no pair; every row needs prompt, "
        "response_a and response_b)"
    ), said


def test_one_judgment_set_is_not_compared_with_itself_but_two_judges_are(small):
    home, server = small
    same = "are one rubric version (rubric "
    for extra in (["--b", "llm-slop"], [], ["--model", "x", "--model", "y"]):  # no --b: B is A
        said = refused(small, "compare", "-c", "small", "--a", "llm-slop", *extra)
        assert same in said and len(said.strip().splitlines()) == 1, said
    calls = server.stats()["answered"]
    two = ["compare", "-c", "small", "--a", "llm-slop", "--model-a", "x", "--model-b", "y"]
    done = run_cli(home, *two, "--base-url", server.base_url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert server.stats()["answered"] == calls + 12  # 6 texts, each judged once by each judge
    assert same in refused(small, "compare", "-c", "small", "--a", "llm-slop", "--no-score", "--model", "x")
    landed = run_cli(home, *two, "--no-score")
    assert landed.returncode == 0 and "texts paired 6 of 6" in landed.stdout, landed.stderr[-2000:]
    assert server.stats()["answered"] == calls + 12
