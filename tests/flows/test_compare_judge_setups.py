"""`compare --no-score` between two judge setups of one rubric version and one model (two
strategies): each side is picked by its judge hash prefix, as `calibrate --judge-hash` picks one."""

import os
import subprocess

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from tests.conftest import EXE


def test_two_strategies_of_one_model_are_compared_by_judge_hash(tmp_path, corpus, judge_server):
    server = judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(corpus(8)), warehouse, "c")
    holistic = score_corpus("c", "writing-quality", warehouse, {"base_url": server.base_url})
    per_criterion = score_corpus(
        "c", "writing-quality", warehouse, {"base_url": server.base_url, "strategy": "per_criterion"}
    )
    a, b = holistic["judge_hash"], per_criterion["judge_hash"]
    assert a != b

    def compare(*extra):
        command = [EXE, "compare", "-c", "c", "--a", "writing-quality", "--no-score", "-w", warehouse, *extra]
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "250"}
        )
        return done.returncode, " ".join((done.stdout + done.stderr).split())

    code, said = compare()
    assert code != 0 and "matches 2 judgment sets" in said and "--judge-hash-a" in said, said
    code, said = compare("--judge-hash-a", a[:10], "--judge-hash-b", b[:10])
    assert code == 0, said
    assert f"judge {a[:8]}" in said and f"judge {b[:8]}" in said
    code, said = compare("--judge-hash-a", "ffffffffff", "--judge-hash-b", b[:10])
    assert code != 0 and "side A: no judgments of 'writing-quality' on corpus 'c' with that judge" in said, said
