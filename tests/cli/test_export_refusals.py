"""`rubricflow export` refuses what it cannot export truthfully, in one line with exit 2: a judgment set
with nothing scored (a failed run's blank rows were written with exit 0), a rubric never scored on the
corpus, a file it cannot write (a traceback after the query); a partly scored set says its coverage."""

import socket
from pathlib import Path

import polars as pl
import pytest

from rubricflow.errors import InputError
from rubricflow.tasks.presentation.export import write
from tests.conftest import ThreadServer, rows, run_cli, write_corpus


def _closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on: a judge that never answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """4 texts in each of three corpora: `small` scored in full, `part` one cell of four (--max-cells 1),
    `dead` by a run that failed (no endpoint answered), all with llm-slop."""
    home = tmp_path_factory.mktemp("refusals")
    server = ThreadServer()
    try:
        for corpus in ("small", "part", "dead"):  # texts of their own: judgments are reused across corpora
            write_corpus(home / f"{corpus}.jsonl", 4)
            lines = (
                (home / f"{corpus}.jsonl").read_text().replace("day ", f"{corpus} day ").replace("town ", f"{corpus} ")
            )
            (home / f"{corpus}.jsonl").write_text(lines)
            assert run_cli(home, "ingest", f"{corpus}.jsonl", "--corpus", corpus).returncode == 0
        judge = ["-r", "llm-slop", "--base-url", server.base_url]
        assert run_cli(home, "score", "-c", "small", *judge).returncode == 0
        assert run_cli(home, "score", "-c", "part", *judge, "--max-cells", "1").returncode == 0
        dead = run_cli(
            home, "score", "-c", "dead", "-r", "llm-slop", "--base-url", f"http://127.0.0.1:{_closed_port()}/v1"
        )
        assert dead.returncode == 2, dead.stderr[-2000:]
        yield home
    finally:
        server.stop()


def _one_line_error(result, code: int = 2) -> str:
    assert result.returncode == code, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    return result.stderr.strip()


@pytest.mark.parametrize("kind, out", [("scores", "dead.csv"), ("judgments", "dead.parquet")])
def test_a_judgment_set_with_nothing_scored_is_refused_and_nothing_written(home, kind, out):
    [[status]] = rows(home / "w.duckdb", "SELECT status FROM runs WHERE corpus_id = 'dead'")
    assert status == "failed"
    line = _one_line_error(run_cli(home, "export", kind, "-o", out, "-c", "dead", "-r", "llm-slop"))
    assert "nothing scored" in line and "corpus 'dead'" in line and "llm-slop@1.0.0" in line
    assert not (home / out).exists() and not (home / f"{out}.meta.json").exists()


def test_a_partly_scored_set_says_its_coverage_and_a_full_one_does_not(home):
    part = run_cli(home, "export", "scores", "-o", "part.csv", "-c", "part", "-r", "llm-slop")
    assert part.returncode == 0, part.stderr
    assert "coverage 25.0%: 1 of 4 texts scored" in part.stderr and "wrote 4 rows" in part.stderr
    assert pl.read_csv(home / "part.csv")["score"].null_count() == 3
    full = run_cli(home, "export", "scores", "-o", "small.csv", "-c", "small", "-r", "llm-slop")
    assert full.returncode == 0 and "coverage" not in full.stderr, full.stderr
    assert full.stderr.strip() == "wrote 4 rows to small.csv (metadata in small.csv.meta.json)"


def test_a_rubric_never_scored_on_the_corpus_is_bad_input(home):
    line = _one_line_error(run_cli(home, "export", "scores", "-o", "w.csv", "-c", "small", "-r", "writing-quality"))
    assert line == "error: no judgments of 'writing-quality' on corpus 'small'; score it first (`rubricflow score`)"


@pytest.mark.parametrize("out", ["/proc/x.csv", "/proc/x.parquet", "/proc/x.jsonl", "small.csv.meta.json/x.csv"])
def test_a_file_it_cannot_write_is_named_in_one_line(home, out):
    if not (home / "small.csv.meta.json").exists():
        assert run_cli(home, "export", "scores", "-o", "small.csv", "-c", "small", "-r", "llm-slop").returncode == 0
    line = _one_line_error(run_cli(home, "export", "scores", "-o", out, "-c", "small", "-r", "llm-slop"))
    assert line.startswith(f"error: {out}: cannot write there (")


def test_a_refused_write_is_an_input_error_naming_the_file():
    with pytest.raises(InputError, match=r"^/proc/x\.parquet: cannot write there \(No such file or directory\)$"):
        write(pl.DataFrame({"score": [0.5]}), Path("/proc/x.parquet"), "parquet", {})
