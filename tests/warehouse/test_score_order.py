"""The same judgments give the same scores, labels and pass/fail bits whatever order they were loaded
in and however many threads DuckDB adds them with (#49 item 3): a weighted mean of 0.75 summed in
another order is 0.7499999999999999 unless scores are rounded to the stated precision before any
threshold meets them; rf.Judge's reference scorer rounds alike, so the two agree bit for bit."""

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.model import Rubric
from rubricflow.rubrics.scoring import verdict
from rubricflow.warehouse import analytics, db

# weights and 1-5 values whose weighted mean is 0.75 in one order of addition, 0.7499999999999999 in another
WEIGHTS = {"a": 0.2, "b": 0.35, "c": 0.3, "d": 0.05}
EDGE = {"a": 3, "b": 4, "c": 5, "d": 2}
FIVE = {"kind": "ordinal", "anchors": [{"value": v} for v in range(1, 6)]}
RUBRIC = Rubric.model_validate(
    {
        "metadata": {"id": "order-check"},
        "goal": "scores that do not depend on the order of addition",
        "criteria": [{"id": cid, "scale": FIVE, "weight": w} for cid, w in WEIGHTS.items()],
        "scoring": {
            "labels": [{"label": "Strong draft", "min": 0.75}, {"label": "Workable draft", "min": 0.0}],
            "pass_threshold": 0.75,
        },
    }
)
BUNDLE = compile_or_raise(RUBRIC)


def _texts(seed: int) -> dict[str, dict[str, int]]:
    """Forty texts on the edge (every one scores exactly 0.75) and forty with values drawn at random."""
    rng = random.Random(seed)
    texts = {f"edge{i}": dict(EDGE) for i in range(40)}
    texts |= {f"rand{i}": {cid: rng.randint(1, 5) for cid in WEIGHTS} for i in range(40)}
    return texts


def _scores(path, texts: dict[str, dict[str, int]], order: list[int], threads: int) -> dict[str, tuple]:
    rows = [(t, cid, v) for t, values in texts.items() for cid, v in values.items()]
    rows = [rows[i] for i in order]
    with db.writer(path) as con:
        con.execute(f"SET threads = {threads}")
        db.register_rubric(con, BUNDLE)
        con.execute(
            "INSERT INTO runs (run_id, corpus_id, rubric_hash, judge_hash, model, strategy, samples, parameters, status, "
            "planned_cells, skipped_cells, started_at, finished_at, message, estimated_usd, budget_usd) "
            "VALUES ('run', 'c', ?, 'j', 'm', 'holistic', 1, '{}', 'completed', 80, 0, "
            "now(), now(), NULL, NULL, NULL)",
            [BUNDLE.hash],
        )
        con.executemany(
            "INSERT INTO texts (corpus_id, text_id, sha256, text) VALUES ('c', ?, ?, 'text')",
            [(t, f"sha-{t}") for t in texts],
        )
        con.executemany(
            "INSERT INTO judgments (cell_key, criterion_id, run_id, corpus_id, text_id, rubric_hash, judge_hash, "
            "sample, value, unit_score, evidence, warnings, status) VALUES (?, ?, 'run', 'c', ?, ?, 'j', 0, ?, ?, "
            "[], [], 'scored')",
            [(f"k-{t}", cid, t, BUNDLE.hash, json.dumps(v), RUBRIC.criterion(cid).scale.unit(v)) for t, cid, v in rows],
        )
        con.execute(
            "INSERT INTO completions (cell_key, run_id, corpus_id, text_id, text_sha256, unit_id, rubric_hash, "
            "judge_hash, sample, declared_disqualifiers, attempts, status, created_at) "
            "SELECT DISTINCT cell_key, 'run', 'c', text_id, '', '_all', rubric_hash, 'j', 0, [], 1, 'ok', now() "
            "FROM judgments"
        )
        for table in ("judgments", "completions"):
            con.execute(
                f"UPDATE {table} x SET text_sha256 = text_version(t.sha256, t.input, t.context, t.genre) "
                "FROM texts t WHERE t.corpus_id = x.corpus_id AND t.text_id = x.text_id"
            )
        analytics.rebuild(con)
        got = con.execute("SELECT text_id, score, label, passed FROM text_scores").fetchall()
    return {r[0]: r[1:] for r in got}


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**16), threads=st.sampled_from([1, 2, 4, 8]), data=st.data())
def test_scores_do_not_depend_on_load_order_or_threads(tmp_path_factory, seed, threads, data):
    texts = _texts(seed)
    order = data.draw(st.permutations(range(sum(len(v) for v in texts.values()))))
    got = _scores(tmp_path_factory.mktemp("w") / "w.duckdb", texts, order, threads)
    expected = {t: verdict(RUBRIC, values) for t, values in texts.items()}
    assert got == {t: (v.score, v.label, v.passed) for t, v in expected.items()}  # bit for bit, not approx
    assert {got[t] for t in texts if t.startswith("edge")} == {(0.75, "Strong draft", True)}


def test_the_reference_scorer_rounds_an_edge_sum_to_its_stated_precision():
    """The issue's case: summed in one order the weighted mean is 0.7499999999999999; rounded it is 0.75."""
    order = ["b", "d", "a", "c"]
    raw = sum(WEIGHTS[c] * RUBRIC.criterion(c).scale.unit(EDGE[c]) for c in order) / sum(WEIGHTS[c] for c in order)
    assert raw != 0.75  # the unrounded sum is off by an ulp in this order
    v = verdict(RUBRIC, EDGE)
    assert (v.score, v.label, v.passed) == (0.75, "Strong draft", True)
