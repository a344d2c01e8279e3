"""The SQL analytics views agree with the Python reference scoring (rubrics.scoring) text by text."""

import json
import random

import pytest

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.model import Rubric
from rubricflow.rubrics.scoring import verdict
from rubricflow.warehouse import analytics, db

BASE = {
    "metadata": {"id": "view-check"},
    "goal": "check the views",
    "criteria": [
        {"id": "a", "importance": "essential", "points": 5},
        {"id": "b", "scale": {"kind": "ordinal", "anchors": [{"value": 1}, {"value": 5}]}, "weight": 2, "points": -3},
        {"id": "c", "scale": {"kind": "numeric", "min": 0, "max": 10}, "pass_threshold": 0.7, "points": 2},
        {
            "id": "d",
            "scale": {"kind": "nominal", "categories": [{"value": "x", "score": 1}, {"value": "y", "score": 0.25}]},
        },
        {"id": "news", "genre": ["news"], "weight": 3},
    ],
    "patterns": [{"id": "p", "regex": "forbidden"}],
    "disqualifiers": [
        {"id": "dq-pattern", "kind": "pattern", "patterns": ["p"]},
        {"id": "dq-floor", "kind": "criterion", "criterion": "b"},
        {"id": "dq-judge", "kind": "judge"},
    ],
    "scoring": {
        "labels": [{"label": "high", "min": 0.7}, {"label": "mid", "min": 0.4}, {"label": "low", "min": 0.0}],
        "pass_threshold": 0.5,
        "essential_minimum": 1.0,
    },
}
VARIANTS = {
    "flat-weighted-mean": {},
    "nested-groups": {
        "groups": [
            {"id": "inner", "children": ["b", "c"], "aggregation": "min", "weight": 2},
            {"id": "outer", "children": ["inner", "d"], "aggregation": "weighted_mean"},
            {"id": "top", "children": ["outer", "a", "news"], "aggregation": "weighted_mean"},
        ],
        "scoring": {**BASE["scoring"], "root": "top"},
    },
    "points": {"scoring": {"method": "points", "pass_threshold": 0.5}},
    "all": {"scoring": {"method": "all", "labels": [{"label": "ok", "min": 1.0}]}},
    "any-inverted": {"scoring": {"method": "any", "invert": True}},
    "min": {"scoring": {"method": "min"}},
    "max": {"scoring": {"method": "max"}},
    "weighted-sum": {"scoring": {"method": "weighted_sum"}},
    # children that all weigh 0 (`free`): PaperBench's 0 (seed 003); `mixed` with b unscored and
    # news (weight 0) scored: unscored, and left out of `top`, its weight too
    "weightless-children": {
        "criteria": [{**c, "weight": 0} if c["id"] in ("c", "d", "news") else c for c in BASE["criteria"]],
        "groups": [
            {"id": "free", "children": ["c", "d"]},
            {"id": "mixed", "children": ["b", "news"], "weight": 2},
            {"id": "top", "children": ["free", "mixed", "a"]},
        ],
        "scoring": {**BASE["scoring"], "root": "top"},
    },
    "weightless-top": {  # no root named: the top level is combined as a group is
        "groups": [
            {"id": "g1", "children": ["a", "b", "news"], "weight": 0},
            {"id": "g2", "children": ["c", "d"], "weight": 0},
        ],
    },
}
DOMAINS = {"a": [0, 1], "b": [1, 2, 3, 4, 5], "c": [0, 2.5, 7, 10], "d": ["x", "y"], "news": [0, 1]}


@pytest.mark.parametrize("variant", VARIANTS)
def test_text_scores_match_the_python_reference(variant, tmp_path):
    rubric = Rubric.model_validate({**BASE, **VARIANTS[variant]})
    bundle = compile_or_raise(rubric)
    rng = random.Random(variant)
    texts, judgment_rows, completions, hits, expected = [], [], [], [], {}
    for i in range(150):
        text_id, genre = f"t{i}", rng.choice([None, "news", "sport"])
        texts.append(("c", text_id, f"sha{i}", "text", None, None, genre, None))
        values, unscored = {}, []
        for cid in [c.id for c in rubric.active_criteria(genre)]:
            roll = rng.random()
            if roll < 0.1:
                continue  # never landed
            if roll < 0.2:
                unscored.append(cid)  # landed, unscored
                continue
            values[cid] = rng.choice(DOMAINS[cid])
        matched = {"p"} if rng.random() < 0.1 else set()
        declared = ["dq-judge"] if rng.random() < 0.1 else []
        for cid in list(values) + unscored:
            unit = rubric.criterion(cid).scale.unit(values[cid]) if cid in values else None
            judgment_rows.append(
                (
                    f"k{i}",
                    cid,
                    "run",
                    "c",
                    text_id,
                    bundle.hash,
                    "j",
                    0,
                    json.dumps(values.get(cid)),
                    unit,
                    None,
                    [],
                    None,
                    [],
                    "scored" if cid in values else "unscored",
                    None,
                )
            )
        completions.append((f"k{i}", "run", "c", text_id, f"sha{i}", "_all", bundle.hash, "j", 0, declared))
        if matched:
            hits.append(("c", text_id, f"sha{i}", bundle.hash, "p", 2))
        expected[text_id] = verdict(rubric, values, genre, matched_patterns=matched, judge_disqualifiers=set(declared))
    with db.writer(tmp_path / "w.duckdb") as con:
        db.register_rubric(con, bundle)
        con.execute(
            "INSERT INTO runs (run_id, corpus_id, rubric_hash, judge_hash, model, strategy, samples, parameters, status, "
            "planned_cells, skipped_cells, started_at, finished_at, message, estimated_usd, budget_usd) "
            "VALUES ('run', 'c', ?, 'j', 'm', 'holistic', 1, '{}', 'completed', 150, 0, "
            "now(), now(), NULL, NULL, NULL)",
            [bundle.hash],
        )
        con.executemany(
            "INSERT INTO texts (corpus_id, text_id, sha256, text, input, context, genre, metadata) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            texts,
        )
        con.executemany(
            "INSERT INTO judgments (cell_key, criterion_id, run_id, corpus_id, text_id, rubric_hash, judge_hash, "
            "sample, value, unit_score, rationale, evidence, evidence_verified, warnings, status, reason) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            judgment_rows,
        )
        con.executemany(
            "INSERT INTO completions (cell_key, run_id, corpus_id, text_id, text_sha256, unit_id, rubric_hash, "
            "judge_hash, sample, declared_disqualifiers, attempts, status, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 'ok', now())",
            completions,
        )
        for table in ("judgments", "completions"):  # each row judged the text's current version
            con.execute(
                f"UPDATE {table} x SET text_sha256 = text_version(t.sha256, t.input, t.context, t.genre) "
                "FROM texts t WHERE t.corpus_id = x.corpus_id AND t.text_id = x.text_id"
            )
        if hits:
            con.executemany("INSERT INTO pattern_hits VALUES (?, ?, ?, ?, ?, ?)", hits)
        analytics.rebuild(con)  # the rows went in by hand, past the steps that refresh the analytics
        got = {
            r[0]: r[1:]
            for r in con.execute(
                "SELECT text_id, score, label, passed, disqualifiers, coverage FROM text_scores"
            ).fetchall()
        }
    assert set(got) == set(expected)
    for text_id, v in expected.items():
        score, label, passed, disqualifiers, coverage = got[text_id]
        assert score == (pytest.approx(v.score) if v.score is not None else None), (text_id, got[text_id], v)
        assert (label, passed) == (v.label, v.passed), text_id
        assert set(disqualifiers) == set(v.disqualified), text_id
        assert coverage == pytest.approx(v.coverage), text_id


def test_pattern_and_run_summary_views(tmp_path):
    bundle = compile_or_raise(Rubric.model_validate(BASE))
    with db.writer(tmp_path / "w.duckdb") as con:
        db.register_rubric(con, bundle)
        con.executemany(
            "INSERT INTO texts (corpus_id, text_id, sha256, text) VALUES ('c', ?, ?, ?)",
            [("t1", "s1", "a forbidden word, forbidden twice"), ("t2", "s2", "clean"), ("t3", "s3", "forbidden")],
        )
        from rubricflow.warehouse.steps import count_pattern_hits

        count_pattern_hits(con, "c", bundle)
        summary = con.execute("SELECT texts_hit, texts_checked, total_hits, hit_rate FROM pattern_summary").fetchall()
        per_text = dict(con.execute("SELECT text_id, hits FROM pattern_hit_counts").fetchall())
        con.execute("UPDATE texts SET sha256 = 's3-new', text = 'now clean' WHERE text_id = 't3'")
        count_pattern_hits(con, "c", bundle)  # only the changed text is counted again
        after = dict(con.execute("SELECT text_id, hits FROM pattern_hit_counts").fetchall())
        rows = con.execute("SELECT count(*) FROM pattern_hits").fetchone()[0]
    assert rows == 3  # the changed text's old count was replaced, not kept beside the new one
    assert summary == [(2, 3, 3, pytest.approx(2 / 3))]
    assert per_text == {"t1": 2, "t2": 0, "t3": 1} and after == {"t1": 2, "t2": 0, "t3": 0}
