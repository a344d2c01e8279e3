"""The materialised analytics (warehouse/analytics.py) held to a from-scratch computation.

Random sequences of what happens to a warehouse, each through the warehouse's own steps: ingests
that add, change and remove texts; runs of several rubric versions (flat and tree, with pattern,
criterion and judge disqualifiers) and judges, whose plans adopt the cells another version shares;
shards landed with scored, unscored and failed cells; loads killed -9 before their commit and
loaded again; human labels; pattern counts. After every sequence the materialised tables equal
the analytics as computed before they were materialised (bench/unmaterialised_views.sql, over the
raw rows), and equal a `rebuild`. RUBRICFLOW_ANALYTICS_EXAMPLES sets how many sequences (the bench
runs more).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.model import Rubric
from rubricflow.rubrics.render import call_units
from rubricflow.tasks.judging.run_options import RunOptions
from rubricflow.tasks.presentation.viewer import read_text
from rubricflow.warehouse import analytics, db, rows, sqlfiles, steps
from tests.conftest import ROOT

EXAMPLES = int(os.environ.get("RUBRICFLOW_ANALYTICS_EXAMPLES", "25"))
TABLES = (
    "criterion_scores", "node_scores", "disqualifier_hits", "text_scores", "run_summary", "run_costs", "pair_verdicts",
)  # fmt: skip
ORDINAL = {"kind": "ordinal", "anchors": [{"value": 1}, {"value": 2}, {"value": 3}]}


def flat(version: str, b_description: str) -> Rubric:
    return Rubric.model_validate(
        {
            "metadata": {"id": "flat", "version": version},
            "goal": "g",
            "criteria": [
                {"id": "a", "description": "first", "scale": {"kind": "binary"}, "importance": "essential"},
                {"id": "b", "description": b_description, "scale": ORDINAL, "weight": 2},
                {"id": "n", "description": "news only", "scale": ORDINAL, "genre": ["news"]},
            ],
            "patterns": [{"id": "p", "regex": "bad"}],
            "disqualifiers": [
                {"id": "pat", "kind": "pattern", "patterns": ["p"]},
                {"id": "floor", "kind": "criterion", "criterion": "b"},
                {"id": "judge", "kind": "judge", "description": "refuses"},
            ],
            "scoring": {"pass_threshold": 0.5, "labels": [{"label": "hi", "min": 0.6}, {"label": "lo", "min": 0.0}]},
        }
    )


def tree() -> Rubric:
    return Rubric.model_validate(
        {
            "metadata": {"id": "tree", "version": "1.0.0"},
            "goal": "g",
            "criteria": [{"id": c, "description": c, "scale": ORDINAL} for c in ("x", "y", "z")],
            "groups": [
                {"id": "inner", "children": ["x", "y"], "aggregation": "min", "weight": 3},
                {"id": "root", "children": ["inner", "z"]},
            ],
        }
    )


BUNDLES = [compile_or_raise(r) for r in (flat("1.0.0", "second"), flat("2.0.0", "second, reworded"), tree())]
SETS = [(0, "j1", "per_criterion"), (1, "j1", "per_criterion"), (2, "j1", "holistic"), (0, "j2", "holistic")]

ingest_op = st.tuples(st.just("ingest"), st.integers(0, 2**16))
judge_op = st.tuples(st.just("judge"), st.integers(0, len(SETS) - 1), st.integers(0, 2**16), st.booleans())
labels_op = st.tuples(st.just("labels"), st.integers(0, 2**16))
patterns_op = st.tuples(st.just("patterns"), st.integers(0, len(BUNDLES) - 1))
operations = st.lists(st.one_of(ingest_op, judge_op, labels_op, patterns_op), min_size=1, max_size=8)


def ingest(con, folder: Path, seed: int) -> None:
    """Twelve possible texts and two pairs' four (`p0:ab`, `p0:ba`...: as the pair loader names
    them, with a label that changes), each present, changed or gone at random (a re-ingest)."""
    rng = random.Random(seed)
    ids = [f"t{i:02d}" for i in range(12)] + [f"p{i}:{order}" for i in range(2) for order in ("ab", "ba")]
    texts = [
        {
            "text_id": text_id,
            "text": rng.choice(["fine text", "a bad text", "another fine one"]),
            "input": rng.choice([None, "q"]),
            "context": None,
            "genre": rng.choice([None, "news"]),
            "metadata": pair_metadata(text_id, rng),
        }
        for text_id in ids
        if rng.random() < 0.85
    ]
    load_texts(con, folder / f"corpus-{seed}.parquet", texts)


def load_texts(con, path: Path, texts: list[dict]) -> None:
    """The texts as an ingest's normalised Parquet, loaded as the source of corpus c."""
    for t in texts:
        t["sha256"] = hashlib.sha256(t["text"].encode()).hexdigest()
    schema = pa.schema(
        [(n, pa.string()) for n in ("text_id", "text", "input", "context", "genre", "metadata", "sha256")]
    )
    pq.write_table(pa.Table.from_pylist(texts, schema=schema), path)
    steps.load_corpus(con, "c", "source", path, len(texts), 0)


def pair_metadata(text_id: str, rng: random.Random) -> str | None:
    if ":" not in text_id:
        return None
    pair_id, order = text_id.split(":")
    label = rng.choice(["a", "b", "tie", None])
    return json.dumps({"pair_id": pair_id, "order": order, "label": label, "system_a": "x", "system_b": "y"})


def answer(rng: random.Random, bundle, plan_row: dict, run_id: str, judge: str) -> tuple[dict, list[dict]]:
    """One judged cell as a shard lands it: ok with scored or unscored criteria, or failed."""
    rubric = bundle.rubric
    units = {u.id: u.criteria for u in call_units(rubric, SETS[0][2], plan_row["genre"])}
    units |= {u.id: u.criteria for u in call_units(rubric, "holistic", plan_row["genre"])}
    ok = rng.random() < 0.9
    key = {k: plan_row[k] for k in ("cell_key", "text_id", "text_sha256", "sample")}
    base = {**key, "run_id": run_id, "corpus_id": "c", "rubric_hash": bundle.hash, "judge_hash": judge}
    completion = rows.blank_completion(
        **base,
        unit_id=plan_row["unit_id"],
        attempts=1,
        status="ok" if ok else "failed",
        error_kind=None if ok else "parse",
        declared_disqualifiers=["judge"] if ok and rng.random() < 0.1 and rubric.metadata.id == "flat" else [],
        created_at=datetime.now(),
        # counts as endpoints report them, odd ones included (cached above the prompt, negative)
        prompt_tokens=rng.choice([0, 120, 400, -3]),
        cached_tokens=rng.choice([None, 0, 64, 500]),
        completion_tokens=rng.choice([0, 30, 7]),
        output_mode=rng.choice(["json_schema", "batch:json_schema"]),
    )
    judgments = []
    for cid in units[plan_row["unit_id"]] if ok else ():
        scale = rubric.criterion(cid).scale
        value = rng.choice([True, False]) if scale.kind == "binary" else rng.choice([1, 2, 3])
        if ":" in plan_row["text_id"]:  # a pair's text: the judge names a slot
            value = rng.choice(["a", "b", "tie"]) if scale.kind != "binary" else value
        scored = rng.random() < 0.9
        judgments.append(
            dict.fromkeys(rows.JUDGMENT.names)
            | base
            | {
                "criterion_id": cid,
                "value": json.dumps(value),
                "unit_score": (rng.random() if isinstance(value, str) else scale.unit(value)) if scored else None,
                "status": "scored" if scored else "unscored",
                "evidence": [],
                "warnings": [],
            }
        )
    return completion, judgments


def judge(con, folder: Path, set_index: int, seed: int, kill: bool, finish: bool = True) -> None:
    """A run of one judgment set: plan (adopting shared cells), land a random part, load it, finish."""
    bundle_index, judge_hash, strategy = SETS[set_index]
    bundle, rng, run_id = BUNDLES[bundle_index], random.Random(seed), f"run-{seed}-{set_index}"
    db.register_rubric(con, bundle)
    steps.count_pattern_hits(con, "c", bundle)
    plan = steps.plan_cells(
        con,
        "c",
        bundle,
        judge_hash,
        strategy,
        1,
        folder / run_id,
        RunOptions(shard_size=50).model_dump(),
        run_id=run_id,
    )
    with db.transaction(con):  # a price, sometimes none, sometimes with a rate for cached input
        price = rng.choice([None, (3.0, 15.0, None), (0.5, 2.0, 0.125)])
        con.execute("DELETE FROM model_prices WHERE model = 'm'")
        if price:
            con.execute("INSERT INTO model_prices VALUES ('m', ?, ?, ?, 'test')", list(price))
        steps.start_run(
            con, run=run_id, corpus="c", rubric=bundle.hash, judge=judge_hash, model="m", strategy=strategy,
            samples=1, parameters="{}", planned=plan.total, skipped=plan.total - plan.cells,
            estimated_usd=None, budget_usd=None,
        )  # fmt: skip
    cells = [r for f in plan.files for r in pq.read_table(f).to_pylist() if rng.random() < 0.7]
    if not cells:
        steps.finish_run(con, run_id, "completed", None)
        return
    answered = [answer(rng, bundle, r, run_id, judge_hash) for r in cells]
    completions = folder / f"{run_id}.completions.parquet"
    pq.write_table(pa.Table.from_pylist([c for c, _ in answered], schema=rows.COMPLETION), completions)
    pq.write_table(
        pa.Table.from_pylist([j for _, js in answered for j in js], schema=rows.JUDGMENT),
        folder / f"{run_id}.judgments.parquet",
    )
    if kill:
        killed_mid_load(con, completions)
    steps.load_landed(con, completions)
    if finish:
        steps.finish_run(con, run_id, "completed", None)


KILLED = """
import os, sys
from pathlib import Path
from rubricflow.warehouse import analytics, db, sqlfiles
with db.writer(sys.argv[1]) as con:
    con.execute("BEGIN")
    sqlfiles.run_sql(con, "load_landed.sql", completions=sys.argv[2], judgments=sys.argv[3])
    analytics.refresh(con)
    os.kill(os.getpid(), 9)  # before the commit
"""


def killed_mid_load(con, completions: Path) -> None:
    """Stop here: the test's writer is closed (one writer per file), and the same load is run in
    another process and killed -9 before its commit (`kill_mid_load`)."""
    path = Path(
        con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()[0]
    )
    raise Reopen(path, completions)


def kill_mid_load(path: Path, completions: Path) -> None:
    judgments = completions.with_name(completions.name.replace(".completions.", ".judgments."))
    done = subprocess.run(
        [sys.executable, "-c", KILLED, str(path), str(completions), str(judgments)], cwd=ROOT, capture_output=True
    )
    assert done.returncode == -9, done.stderr.decode()[-2000:]


class Reopen(Exception):
    """A load to be killed mid-way in another process: the writer is closed, the load killed,
    the warehouse reopened and the shard loaded again."""

    def __init__(self, path: Path, completions: Path):
        self.path, self.completions = path, completions


def label(con, seed: int) -> None:
    import polars as pl

    rng = random.Random(seed)
    ids = [
        r[0] for r in con.execute("SELECT text_id FROM texts WHERE corpus_id = 'c' AND removed_at IS NULL").fetchall()
    ]
    chosen = [t for t in ids if rng.random() < 0.5]
    if chosen:
        frame = pl.DataFrame(
            [{"text_id": t, "criterion_id": c, "rater": rng.choice(["r1", "r2"]), "score": float(rng.choice([1, 2, 3]))}
             for t in chosen for c in ("x", "y", "b")]
        ).unique(["text_id", "criterion_id", "rater"])  # fmt: skip
        steps.load_labels(con, "c", frame, "labels.csv")


def apply(con, folder: Path, op: tuple, step: int) -> None:
    """One operation; its seed is mixed with its place in the sequence, so that the same drawn
    seed twice (hypothesis favours small, repeated values) still changes the corpus."""
    kind, *args = op
    if kind in ("ingest", "labels"):
        args[0] = args[0] * 100 + step
    if kind == "judge":
        args[1] = args[1] * 100 + step
    if kind == "ingest":
        ingest(con, folder, args[0])
    elif kind == "judge" and con.execute("SELECT count(*) FROM texts").fetchone()[0]:
        judge(con, folder, *args)
    elif kind == "labels":
        label(con, args[0])
    elif kind == "patterns":
        db.register_rubric(con, BUNDLES[args[0]])
        steps.count_pattern_hits(con, "c", BUNDLES[args[0]])


def table(con, name: str) -> list[tuple]:
    found = con.execute(f"SELECT * FROM {name}").fetchall()
    return sorted((tuple(round(v, 9) if isinstance(v, float) else v for v in r) for r in found), key=repr)


def assert_materialised_equals_scratch(path: Path) -> None:
    with db.writer(path) as con:
        con.execute((ROOT / "bench" / "unmaterialised_views.sql").read_text())
        assert con.execute("SELECT count(*) FROM stale_texts").fetchone()[0] == 0
        materialised = {name: table(con, name) for name in TABLES}
        for name in TABLES:
            assert materialised[name] == table(con, f"unmat_{name}"), name
        analytics.rebuild(con)
        for name in TABLES:
            assert materialised[name] == table(con, name), f"{name} after rebuild"
        assert_text_pages_show_current_judgments(con)


def assert_text_pages_show_current_judgments(con) -> None:
    """The viewer's text page reads a text's judgments by its version, not through current_judgments:
    the same rows for every text, changed and removed ones included."""
    fetch = functools.partial(db.fetch, con)
    for corpus, text_id in con.execute("SELECT corpus_id, text_id FROM texts").fetchall():
        shown = (read_text(fetch, corpus, text_id) or {"judgments": []})["judgments"]
        expected = con.execute(
            """SELECT rubric_hash, judge_hash, criterion_id, sample, value FROM current_judgments
               WHERE corpus_id = $corpus AND text_id = $text""",
            {"corpus": corpus, "text": text_id},
        ).fetchall()
        got = [(j["rubric_hash"], j["judge_hash"], j["criterion_id"], j["sample"], j["value"]) for j in shown]
        assert sorted(got, key=repr) == sorted(expected, key=repr), text_id


@pytest.fixture(scope="module")
def empty_warehouse(tmp_path_factory) -> Path:
    """A new warehouse file as a writer's first open leaves it (schema, analytics tables): each
    example starts from a copy, not from the ~0.2 s of CPU of applying the schema again (a new
    file's first open is tested above and in test_storage.py)."""
    path = tmp_path_factory.mktemp("empty") / "w.duckdb"
    with db.writer(path):
        pass
    assert not path.with_name(path.name + ".wal").exists()  # checkpointed: the file alone is the warehouse
    return path


@pytest.mark.slow  # tens of random warehouses, each with kill -9 loads
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
def test_materialised_analytics_equal_a_from_scratch_computation(ops, tmp_path_factory, monkeypatch, empty_warehouse):
    monkeypatch.setattr(analytics, "BATCH", 5)  # whole-corpus refreshes (ingests, pattern counts) in batches
    folder = tmp_path_factory.mktemp("w")
    path = folder / "w.duckdb"
    shutil.copyfile(empty_warehouse, path)
    pending = list(enumerate(ops))
    while pending:
        try:
            with db.writer(path) as con:
                while pending:
                    step, op = pending.pop(0)
                    apply(con, folder, op, step)
        except Reopen as stop:
            kill_mid_load(stop.path, stop.completions)
            with db.writer(path) as con:  # what load_pending does for a crashed run's shard
                for landed in folder.glob("*.completions.parquet"):
                    steps.load_landed(con, landed)
    assert_materialised_equals_scratch(path)


def test_a_warehouse_without_materialised_tables_gets_them_on_a_writers_open(tmp_path):
    """A warehouse from before (or built by other definitions): the first writer rebuilds."""
    path = tmp_path / "w.duckdb"
    with db.writer(path) as con:
        ingest(con, tmp_path, 1)
        judge(con, tmp_path, 0, 2, kill=False)
        (before,) = con.execute("SELECT count(*) FROM text_scores WHERE scored_criteria > 0").fetchone()
        con.execute("UPDATE analytics_state SET definition_sha = 'older'")
        con.execute("DELETE FROM mat_text_scores")
    assert before > 0
    with db.writer(path) as con:
        assert con.execute("SELECT count(*) FROM text_scores WHERE scored_criteria > 0").fetchone()[0] == before


def marked_by(con, source: Path) -> set[str]:
    """The texts a re-ingest of `source` marks for the refresh (load_corpus.sql, rolled back)."""
    con.execute("BEGIN")
    sqlfiles.run_sql(con, "load_corpus.sql", corpus="c", parquet=str(source), keep_absent=False)
    marked = {r[0] for r in con.execute("SELECT text_id FROM stale_texts").fetchall()}
    con.execute("ROLLBACK")
    return marked


def test_a_reingest_marks_only_the_texts_it_changed_or_removed(tmp_path):
    path = tmp_path / "w.duckdb"
    with db.writer(path) as con:
        ingest(con, tmp_path, 7)
        judge(con, tmp_path, 0, 7, kill=False)
        source = tmp_path / "corpus-7.parquet"
        assert marked_by(con, source) == set()
        texts = pq.read_table(source).to_pylist()
        changed, removed, kept = texts[0], texts[1], texts[2:]
        changed |= {"text": "now a bad text", "sha256": hashlib.sha256(b"now a bad text").hexdigest()}
        pq.write_table(pa.Table.from_pylist([changed, *kept], schema=pq.read_schema(source)), source)
        assert marked_by(con, source) == {changed["text_id"], removed["text_id"]}
        steps.load_corpus(con, "c", "source", source, len(kept) + 1, 0)
        steps.count_pattern_hits(con, "c", BUNDLES[0])
        (score,) = con.execute("SELECT score FROM text_scores WHERE text_id = ?", [changed["text_id"]]).fetchone()
        assert score == 0.0  # the pattern disqualifier now fails it
        gone = con.execute("SELECT count(*) FROM text_scores WHERE text_id = ?", [removed["text_id"]]).fetchone()
        assert gone == (0,)
    assert_materialised_equals_scratch(path)


def test_shard_loads_refresh_at_most_every_few_seconds_and_the_run_end_catches_up(tmp_path):
    """A run's loads leave their marks when a refresh ran in the last LOAD_REFRESH_LAG_S (each
    refresh scans the judgments); the run's end recomputes them."""
    path = tmp_path / "w.duckdb"
    with db.writer(path) as con:
        ingest(con, tmp_path, 31)
        judge(con, tmp_path, 0, 31, kill=False, finish=False)  # start_run refreshed just before the load
        assert con.execute("SELECT count(*) FROM stale_texts").fetchone()[0] > 0
        assert con.execute("SELECT count(*) FROM text_scores WHERE scored_criteria > 0").fetchone() == (0,)
        steps.finish_run(con, "run-31-0", "completed", None)
        assert con.execute("SELECT count(*) FROM stale_texts").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM text_scores WHERE scored_criteria > 0").fetchone()[0] > 0
    assert_materialised_equals_scratch(path)


def test_marks_a_crash_left_are_recomputed_by_the_next_writer(tmp_path):
    path = tmp_path / "w.duckdb"
    with db.writer(path) as con:
        ingest(con, tmp_path, 32)
        judge(con, tmp_path, 0, 32, kill=False, finish=False)
        assert con.execute("SELECT count(*) FROM stale_texts").fetchone()[0] > 0  # then the process ends
    with db.writer(path) as con:
        assert con.execute("SELECT count(*) FROM stale_texts").fetchone() == (0,)
    assert_materialised_equals_scratch(path)


def test_a_shard_loads_writer_leaves_the_marks_while_a_refresh_is_recent(tmp_path):
    """The next shard load's writer opens within LOAD_REFRESH_LAG_S of the last refresh: it leaves
    the marks too (refreshing them on every open made a 100k-cell run refresh after every shard)."""
    path = tmp_path / "w.duckdb"
    with db.writer(path) as con:
        ingest(con, tmp_path, 33)
        judge(con, tmp_path, 0, 33, kill=False, finish=False)
        marked = con.execute("SELECT count(*) FROM stale_texts").fetchone()[0]
    assert marked > 0
    with db.writer(path, refresh_lag_s=steps.LOAD_REFRESH_LAG_S) as con:
        assert con.execute("SELECT count(*) FROM stale_texts").fetchone()[0] == marked
    with db.writer(path) as con:
        assert con.execute("SELECT count(*) FROM stale_texts").fetchone() == (0,)
    assert_materialised_equals_scratch(path)


def test_a_pairs_new_label_alone_reaches_its_materialised_verdicts(tmp_path):
    """A re-ingest that changes only a pair's label (its metadata, not what the judge sees) marks
    the pair's texts: the materialised verdicts carry the new label."""
    path = tmp_path / "w.duckdb"

    def pair(label: str) -> list[dict]:
        return [
            {"text_id": f"p0:{o}", "text": "fine text", "input": None, "context": None, "genre": None,
             "metadata": json.dumps({"pair_id": "p0", "order": o, "label": label})}
            for o in ("ab", "ba")
        ]  # fmt: skip

    with db.writer(path) as con:
        load_texts(con, tmp_path / "first.parquet", pair("a"))
        for seed in range(40):  # runs land a random 70% of cells: until both orders are judged
            judge(con, tmp_path, 0, seed, kill=False)
            if con.execute("SELECT count(*) FROM pair_verdicts").fetchone()[0]:
                break
        assert con.execute("SELECT DISTINCT label FROM pair_verdicts").fetchall() == [("a",)]
        load_texts(con, tmp_path / "second.parquet", pair("b"))
        assert con.execute("SELECT DISTINCT label FROM pair_verdicts").fetchall() == [("b",)]


def covering_row_groups(con, table: str, text_id: str) -> tuple[int, int]:
    """How many of the table's row groups a lookup of one text must read (their text_id min/max
    hold it), of how many."""
    groups = con.execute(
        f"""SELECT row_group_id, stats.min::VARCHAR, stats.max::VARCHAR FROM pragma_storage_info('{table}')
            WHERE column_name = 'text_id' AND segment_type = 'VARCHAR'"""
    ).fetchall()
    covering = {g for g, low, high in groups if low <= text_id <= high}
    return len(covering), len({g for g, _, _ in groups})


def test_one_texts_materialised_rows_sit_in_a_few_row_groups(tmp_path):
    """The refresh writes the per-text tables in (corpus, judgment set, text) order: in the order
    an aggregate left them, every row group held texts from all over the corpus, and one text's
    scores read every row group (20M judgments: 17 ms instead of 1.7)."""
    texts, bundle = 40_000, BUNDLES[2]  # 3 criteria; two judges: 80k text scores, 240k criterion scores
    with db.writer(tmp_path / "w.duckdb") as con:
        db.register_rubric(con, bundle)
        con.execute("INSERT INTO corpora VALUES ('c', 'synthetic', '-', $n, 0, current_timestamp, NULL)", {"n": texts})
        con.execute(
            "INSERT INTO texts (corpus_id, text_id, sha256, text) SELECT 'c', 't' || lpad(range::VARCHAR, 5, '0'), "
            "sha256(range::VARCHAR), 'text ' || range FROM range($n)",
            {"n": texts},
        )
        for judge in ("j1", "j2"):
            con.execute(
                """INSERT INTO runs (run_id, corpus_id, rubric_hash, judge_hash, model, strategy, samples,
                   parameters, status, started_at) VALUES ($judge, 'c', $rubric, $judge, 'm', 'holistic', 1, '{}',
                   'completed', current_timestamp)""",
                {"judge": judge, "rubric": bundle.hash},
            )
            con.execute(
                """INSERT INTO judgments (cell_key, criterion_id, run_id, corpus_id, text_id, rubric_hash, judge_hash,
                   sample, value, unit_score, status, text_sha256)
                   SELECT sha256(t.text_id || $judge), c.id, $judge, 'c', t.text_id, $rubric, $judge, 0,
                          '2', 0.5, 'scored', t.sha256
                   FROM texts t, unnest(['x', 'y', 'z']) c(id) ORDER BY hash(t.text_id, c.id)""",
                {"judge": judge, "rubric": bundle.hash},
            )
        analytics.rebuild(con)
        for table, most in (("mat_text_scores", 3), ("mat_criterion_scores", 4)):
            covering, groups = covering_row_groups(con, table, "t20000")
            assert covering <= most < groups, (table, covering, groups)
