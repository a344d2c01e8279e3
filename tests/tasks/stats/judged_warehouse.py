"""A warehouse holding recorded judgments and human labels, written as a finished run would leave
them (texts, runs, completions, judgments, labels; the analytics rebuilt), for the statistics that
read them (`estimate`, `calibrate`): no judge is run, so the scores are exactly the ones given."""

from __future__ import annotations

import json
from pathlib import Path

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.model import Rubric
from rubricflow.warehouse import analytics, db


def judged_warehouse(
    path: Path,
    rubric: Rubric,
    judges: dict[str, dict[str, dict[str, float]]],
    labels: list[tuple[str, str, float, str]],
    corpus: str = "c",
) -> str:
    """Write `judges` (model -> text id -> criterion id -> unit score) and `labels` ((text id,
    criterion id, score on the criterion's own scale, rater)) into a new warehouse at `path`;
    returns the rubric's hash. Each model is one judge setup, judge hash `judge-<model>`."""
    bundle = compile_or_raise(rubric)
    texts = sorted({t for scores in judges.values() for t in scores} | {lab[0] for lab in labels})
    with db.writer(path) as con:
        db.register_rubric(con, bundle)
        con.executemany(
            "INSERT INTO texts (corpus_id, text_id, sha256, text) VALUES (?, ?, ?, ?)",
            [(corpus, t, f"sha-{t}", f"text {t}") for t in texts],
        )
        for model, scores in judges.items():
            _judge(con, corpus, bundle.hash, model, scores)
        con.executemany(
            "INSERT INTO labels (corpus_id, text_id, criterion_id, rater, score) VALUES (?, ?, ?, ?, ?)",
            [(corpus, t, cid, rater, float(score)) for t, cid, score, rater in labels],
        )
        for table in ("judgments", "completions"):
            con.execute(
                f"UPDATE {table} x SET text_sha256 = text_version(t.sha256, t.input, t.context, t.genre) "
                "FROM texts t WHERE t.corpus_id = x.corpus_id AND t.text_id = x.text_id"
            )
        analytics.rebuild(con)
    return bundle.hash


def _judge(con, corpus: str, rubric_hash: str, model: str, scores: dict[str, dict[str, float]]) -> None:
    run, judge = f"run-{model}", f"judge-{model}"
    con.execute(
        "INSERT INTO runs (run_id, corpus_id, rubric_hash, judge_hash, model, strategy, samples, parameters, status, "
        "planned_cells, skipped_cells, started_at, finished_at) "
        "VALUES (?, ?, ?, ?, ?, 'holistic', 1, '{}', 'completed', ?, 0, now(), now())",
        [run, corpus, rubric_hash, judge, model, len(scores)],
    )
    con.executemany(
        "INSERT INTO judgments (cell_key, criterion_id, run_id, corpus_id, text_id, rubric_hash, judge_hash, "
        "sample, value, unit_score, evidence, warnings, status) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, [], [], 'scored')",
        [
            (f"{model}-{t}", cid, run, corpus, t, rubric_hash, judge, json.dumps(unit), unit)
            for t, by_criterion in scores.items()
            for cid, unit in by_criterion.items()
        ],
    )
    con.executemany(
        "INSERT INTO completions (cell_key, run_id, corpus_id, text_id, text_sha256, unit_id, rubric_hash, "
        "judge_hash, sample, declared_disqualifiers, attempts, status, created_at) "
        "VALUES (?, ?, ?, ?, '', '_all', ?, ?, 0, [], 1, 'ok', now())",
        [(f"{model}-{t}", run, corpus, t, rubric_hash, judge) for t in scores],
    )
