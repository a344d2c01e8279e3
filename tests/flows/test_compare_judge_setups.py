"""`compare --no-score` between two judge setups of one rubric version and one model (two
strategies): each side is picked by its judge hash prefix, as `calibrate --judge-hash` picks one."""

import os
import subprocess

import pytest

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from tests.conftest import EXE, rows


def test_two_strategies_of_one_model_are_compared_by_judge_hash(tmp_path, corpus, thread_judge_server):
    server = thread_judge_server()
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


def test_a_named_model_finds_the_judgments_of_a_rubric_judged_by_its_own_strategy(
    tmp_path, corpus, thread_judge_server
):
    """zinsser-judge declares its execution strategy (grouped, seed 001): its runs' judge hash is the
    grouped one, and `--no-score --model` must look for that one, not the default strategy's."""
    from rubricflow.flows.compare import compare_flow
    from rubricflow.tasks.judging.config import OFFLINE_MODEL, JudgeConfig

    server = thread_judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(corpus(3)), warehouse, "c")
    ran = score_corpus("c", "zinsser-judge", warehouse, {"base_url": server.base_url, "model": OFFLINE_MODEL})
    judge = JudgeConfig(base_url=server.base_url, model=OFFLINE_MODEL)
    assert ran["judge_hash"] != judge.judge_hash()  # the grouped strategy, not the default holistic
    result = compare_flow("c", "zinsser-judge", "zinsser-judge", warehouse, judge, judge, score=False)
    assert result.summary["texts_paired"] == 3


def test_two_paired_texts_give_no_correlation_and_the_json_is_json(tmp_path, corpus, thread_judge_server):
    """An outside probe: on 2 paired texts `compare` printed Pearson, Spearman and Kendall -1.000
    (two points lie on a line whatever the agreement), and `--json` wrote a bare NaN (no JSON)."""
    import json

    server = thread_judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(corpus(2)), warehouse, "c")
    for strategy in ("holistic", "per_criterion"):
        score_corpus("c", "writing-quality", warehouse, {"base_url": server.base_url, "strategy": strategy})
    hashes = [h for (h,) in rows(warehouse, "SELECT judge_hash FROM runs ORDER BY started_at")]
    out = tmp_path / "ab.json"
    command = [EXE, "compare", "-c", "c", "--a", "writing-quality", "--no-score", "-w", warehouse, "--json", str(out)]
    command += ["--judge-hash-a", hashes[0][:10], "--judge-hash-b", hashes[1][:10]]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "250"})
    said = " ".join(done.stdout.split())
    assert done.returncode == 0, done.stderr
    assert "Pearson n/a Spearman n/a Kendall tau-b n/a (2 texts paired: correlations need 3)" in said, said
    summary = json.loads(out.read_text(), parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))["summary"]
    assert summary["texts_paired"] == 2 and (summary["pearson"], summary["spearman"], summary["kendall_tau_b"]) == (
        None,
        None,
        None,
    )


UNLABELLED = """metadata: {id: unlabelled, version: 1.0.0, title: No labels}
goal: Judge the texts.
criteria:
  - id: clear
    description: Is it clear?
    scale:
      kind: ordinal
      anchors: [{value: 1, description: murky}, {value: 2, description: fair}, {value: 3, description: clear}]
  - id: brief
    description: Is it brief?
    scale: {kind: binary}
"""


def test_the_flip_table_of_a_rubric_without_labels_says_no_label_not_unscored(tmp_path, corpus, thread_judge_server):
    """An outside probe: a rubric with no decision labels gave every text, scored on both sides, the
    flip row (unscored) -> (unscored); a scored text without a label reads (no label), as a run's
    label table says."""
    from rubricflow.flows.compare import compare_flow, comparison_markdown

    server = thread_judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    (tmp_path / "unlabelled.yaml").write_text(UNLABELLED)
    rubric = str(tmp_path / "unlabelled.yaml")
    ingest_flow(str(corpus(4)), warehouse, "c")
    ran = [
        score_corpus("c", rubric, warehouse, {"base_url": server.base_url, "strategy": strategy})
        for strategy in ("holistic", "per_criterion")
    ]
    assert rows(warehouse, "SELECT count(*), count(score), count(label) FROM text_scores") == [(8, 8, 0)]
    result = compare_flow(
        "c", rubric, rubric, warehouse, score=False,
        judge_hash_a=ran[0]["judge_hash"][:12], judge_hash_b=ran[1]["judge_hash"][:12],
    )  # fmt: skip
    assert result.flips == [{"label_a": "(no label)", "label_b": "(no label)", "texts": 4}]
    artifact = comparison_markdown(result)
    assert "| (no label) | (no label) | 4 |" in artifact and "unscored" not in artifact
