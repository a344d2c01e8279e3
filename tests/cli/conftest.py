"""Fixtures the command tests share."""

import pytest

from tests.conftest import ROOT, ThreadServer, write_corpus

from .test_pipeline_commands import run


@pytest.fixture(scope="session")
def scored(tmp_path_factory):
    """A corpus of 60 texts (every third sloppy), scored with llm-slop 1.0.0 and with a harsher
    1.1.0 that counts "council" (in every plain text) as puffery: a real, significant drop."""
    home = tmp_path_factory.mktemp("gate")
    server = ThreadServer()
    try:
        write_corpus(home / "corpus.jsonl", 60)
        harsh = (ROOT / "rubrics" / "library" / "llm-slop.yaml").read_text()
        harsh = harsh.replace("version: 1.0.0", "version: 1.1.0").replace("|tapestry)", "|tapestry|council)")
        (home / "harsh.yaml").write_text(harsh)
        w = ["-w", str(home / "w.duckdb")]
        assert run("ingest", str(home / "corpus.jsonl"), "--corpus", "c", *w).returncode == 0
        for rubric in ("llm-slop", str(home / "harsh.yaml")):
            result = run("score", "-c", "c", "-r", rubric, "--base-url", server.base_url, *w)
            assert result.returncode == 0, result.stderr[-2000:]
        yield home, w, server
    finally:
        server.stop()
