"""Sequential A/B end to end: real score flows against the offline judge server over a real
warehouse, stopping once the confidence sequence decides, and paying only for new texts when
continued."""

import json
from pathlib import Path

import pytest
import yaml

from rubricflow.errors import InputError
from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.sequential import sequential_compare_flow
from rubricflow.rubrics.library import Library
from rubricflow.tasks.stats.sequential import ConfidenceSequence
from tests.conftest import ThreadServer, rows, write_corpus

TEXTS = 240


def worse_version(folder: Path) -> tuple[Path, Path]:
    """llm-slop as A, and B: the same plus a criterion whose pattern never matches, which the offline
    judge scores low for every text (B's text scores are lower: A wins)."""
    doc = yaml.safe_load(Library().get("llm-slop").path.read_text())
    doc["metadata"]["id"] = "slop-seq"
    a = folder / "a.yaml"
    a.write_text(yaml.safe_dump(doc, sort_keys=False))
    doc["metadata"]["version"] = "2.0.0"
    doc["patterns"].append({"id": "never_there", "regex": "zqxjzqxj"})
    doc["criteria"].append(
        {
            "id": "cites-zq",
            "description": "Cites the zq source.",
            "scale": {"kind": "binary"},
            "patterns": ["never_there"],
        }
    )
    b = folder / "b.yaml"
    b.write_text(yaml.safe_dump(doc, sort_keys=False))
    return a, b


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("seq")
    server = ThreadServer()
    try:
        warehouse = str(tmp / "w.duckdb")
        ingest_flow(str(write_corpus(tmp / "c.jsonl", TEXTS)), warehouse, "c")
        a, b = worse_version(tmp)
        yield {
            "warehouse": warehouse,
            "a": str(a),
            "b": str(b),
            "server": server,
            "judge": {"base_url": server.base_url},
        }
    finally:
        server.stop()


def test_a_clear_winner_stops_early_and_a_continuation_pays_nothing(setup):
    w, judge, server = setup["warehouse"], setup["judge"], setup["server"]
    first = sequential_compare_flow("c", setup["a"], setup["b"], w, judge, judge, alpha=0.05, batch_size=20, seed=7)
    assert first["decision"] == "A" and first["upper"] < 0
    assert first["texts_judged"] < TEXTS and first["texts_judged"] % 20 == 0
    assert server.stats()["requests"] == 2 * first["texts_judged"]  # holistic: one call per text and side
    assert first["cells_judged"] == 2 * first["texts_judged"]
    assert first["rest_cells"] == 2 * (TEXTS - first["texts_judged"])
    # the interval is the sequence over the recorded order's differences, as the stats module computes it
    order = rows(w, "SELECT text_order FROM sequential_abs WHERE ab_id = ?", [first["ab_id"]])[0][0]
    diffs = dict(
        rows(
            w,
            "SELECT a.text_id, b.score - a.score FROM text_scores a JOIN text_scores b USING (corpus_id, text_id) "
            "WHERE a.rubric_hash <> b.rubric_hash AND a.rubric_id = 'slop-seq' AND a.version = '1.0.0' "
            "AND a.score IS NOT NULL AND b.score IS NOT NULL",
        )
    )
    walked = json.loads(order)[: first["texts_judged"]]
    assert set(diffs) == set(walked)  # only the walked texts were judged
    cs = ConfidenceSequence(0.05)
    for start in range(0, len(walked), 20):
        cs.update([diffs[t] for t in walked[start : start + 20]])
    assert (cs.lower, cs.upper) == pytest.approx((first["lower"], first["upper"]))
    again = sequential_compare_flow("c", setup["a"], setup["b"], w, judge, judge, alpha=0.05, batch_size=20, seed=7)
    assert server.stats()["requests"] == 2 * first["texts_judged"]  # the cells are the cache
    assert (again["decision"], again["texts_judged"], again["lower"]) == ("A", first["texts_judged"], first["lower"])
    assert rows(w, "SELECT count(*), count(DISTINCT text_order) FROM sequential_abs")[0] == (2, 1)


def test_an_a_a_comparison_is_equivalent_or_runs_the_corpus_out(setup):
    w, judge = setup["warehouse"], setup["judge"]
    same = sequential_compare_flow("c", setup["a"], setup["a"], w, judge, judge, batch_size=40, equivalence=0.1)
    assert same["decision"] == "equivalent" and -0.1 < same["lower"] <= 0 <= same["upper"] < 0.1
    assert same["texts_judged"] < TEXTS
    undecided = sequential_compare_flow("c", setup["a"], setup["a"], w, judge, judge, batch_size=80, seed=3)
    assert undecided["decision"] == "undecided" and undecided["texts_judged"] == TEXTS
    assert undecided["rest_cells"] == 0
    stored = rows(w, "SELECT decision, texts_judged FROM sequential_abs WHERE ab_id = ?", [undecided["ab_id"]])
    assert stored == [("undecided", TEXTS)]


def test_bad_options_are_refused_before_any_call(setup):
    with pytest.raises(InputError, match="--alpha"):
        sequential_compare_flow("c", setup["a"], setup["b"], setup["warehouse"], alpha=1.5)
    with pytest.raises(InputError, match="--figure"):
        sequential_compare_flow("c", setup["a"], setup["b"], setup["warehouse"], figure="median")


def test_the_command_prints_the_decision_and_what_the_rest_would_cost(tmp_path):
    import os
    import shutil
    import subprocess

    server = ThreadServer()
    try:
        write_corpus(tmp_path / "c.jsonl", 20)
        a, b = worse_version(tmp_path)

        def run(*args):
            env = {**os.environ, "COLUMNS": "200"}
            return subprocess.run(
                [shutil.which("rubricflow"), *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300
            )

        ingest_flow(str(tmp_path / "c.jsonl"), str(tmp_path / "w.duckdb"), "c")  # in-process: `compare` is tested
        args = ["compare", "-c", "c", "--a", str(a), "--b", str(b), "-w", "w.duckdb", "--base-url", server.base_url]
        done = run(*args, "--sequential", "--batch-size", "10", "--json", "seq.json")
        assert done.returncode == 0, done.stderr[-2000:]
        said = json.loads((tmp_path / "seq.json").read_text())
        assert said["decision"] == "undecided" and "undecided: the corpus ran out" in done.stdout  # 20 texts: too few
        assert f"B - A in [{said['lower']:.4f}, {said['upper']:.4f}]" in done.stdout
        assert "texts judged 20 of 20 (20 paired), 40 calls" in done.stdout
        assert f"the rest would have cost {said['rest_cells']} calls" in done.stdout
        bad = run(*args, "--sequential", "--alpha", "2")
        assert bad.returncode == 2 and "--alpha must lie strictly between 0 and 1" in bad.stderr + bad.stdout
    finally:
        server.stop()
