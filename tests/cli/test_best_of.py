"""#36 best-of-n in one call: `rubricflow best-of` judges each candidate set of a corpus (n responses
to one prompt) with ONE call through the hardened client, by the best-of form of OpenAI Evals' own
best-of-n grader (openai/evals' `best.yaml`, `choice_strings: from_n`), and lands one judgment per
candidate plus the winner; the `best_of_candidates` view reads them back."""

import json

import pytest
from typer.testing import CliRunner

import rubricflow as rf
from rubricflow.cli import app
from rubricflow.errors import InputError
from rubricflow.flows.ingest import ingest_flow
from tests.conftest import TEST_DATA, ThreadServer, rows

from .test_pipeline_commands import run

BEST = TEST_DATA / "rubrics/openai_evals/registry/best.yaml"  # openai/evals' own file, unchanged
LONG = "Wrap the loaf in a cloth bag and keep it at room temperature for two days."
SETS = [  # the offline judge rates a response of 8 words or more above a short one
    {"set_id": "s1", "prompt": "Keep bread fresh?", "candidates": ["Freezer.", LONG, "Fridge."], "label": 2},
    {"set_id": "s2", "prompt": "Boil an egg?", "candidates": ["Boil it.", "Heat.", LONG + " Or boil."], "label": 3},
    {"set_id": "s3", "prompt": "Capital of France?", "candidates": [LONG, "Paris.", "Lyon."], "label": 2},
]


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("best-of")
    corpus = tmp / "sets.jsonl"
    corpus.write_text("".join(json.dumps({**s, "systems": ["x", "y", "z"]}) + "\n" for s in SETS))
    w = ["-w", str(tmp / "w.duckdb")]
    assert ingest_flow(str(corpus), str(tmp / "w.duckdb"), "sets")["rows_ok"] == len(SETS)
    server = ThreadServer()
    try:
        done = run("best-of", "-c", "sets", "-r", str(BEST), "--base-url", server.base_url, *w)
        calls = server.stats()["answered"]
        frame = rf.Warehouse(tmp / "w.duckdb").best_of("sets", str(BEST), rf.Judge(base_url=server.base_url))
        calls_after = server.stats()["answered"]
    finally:
        server.stop()
    return {
        "done": done,
        "calls": calls,
        "python": (frame, calls_after),
        "warehouse": tmp / "w.duckdb",
        "w": w,
        "tmp": tmp,
    }


def test_each_set_is_one_call_with_a_judgment_per_candidate_and_the_winner(judged):
    assert judged["done"].returncode == 0, judged["done"].stderr[-2000:]
    assert judged["calls"] == len(SETS)  # pairs would be 6 calls per set of 3, in both orders
    landed = rows(
        judged["warehouse"],
        "SELECT text_id, list(criterion_id ORDER BY criterion_id), count(DISTINCT cell_key) FROM judgments "
        "WHERE status = 'scored' GROUP BY text_id ORDER BY text_id",
    )
    assert landed == [(s["set_id"], ["response-1", "response-2", "response-3", "winner"], 1) for s in SETS]


def test_the_view_names_each_candidate_its_system_and_the_winner(judged):
    view = rows(
        judged["warehouse"],
        "SELECT set_id, candidate, system, score, is_winner, label FROM best_of_candidates ORDER BY set_id, candidate",
    )
    assert len(view) == 9
    winners = {(s, c, system) for s, c, system, _, won, _ in view if won}
    assert winners == {("s1", 2, "y"), ("s2", 3, "z"), ("s3", 1, "x")}  # the long response, wherever it stands
    for set_id, candidate, _, score, won, _ in view:
        assert score == (0.75 if won else 0.25), (set_id, candidate)
    out = judged["done"].stdout
    assert "0.667" in out and "0.333" in out  # winners 2, 3, 1: two are the human's pick, one was shown first


def test_python_reads_the_same_sets_and_judges_nothing_twice(judged):
    frame, calls_after = judged["python"]
    assert calls_after == len(SETS)  # the landed cells are the command's: the same form, hash and judge
    winners = frame.filter(frame["is_winner"]).select("set_id", "candidate").rows()
    assert winners == [("s1", 2), ("s2", 3), ("s3", 1)] and frame.height == 9


def test_a_corpus_of_mixed_set_sizes_or_plain_texts_is_refused_naming_it(judged):
    tmp, w = judged["tmp"], judged["w"]
    mixed = tmp / "mixed.jsonl"
    mixed.write_text(
        json.dumps({"set_id": "a", "prompt": "p", "candidates": ["x", "y"]})
        + "\n"
        + json.dumps({"set_id": "b", "prompt": "p", "candidates": ["x", "y", "z"], "label": 4})
        + "\n"
        + json.dumps({"set_id": "c", "prompt": "p", "candidates": ["x", "y", "z"]})
        + "\n"
    )
    assert ingest_flow(str(mixed), str(judged["warehouse"]), "mixed")["rows_quarantined"] == 1  # b: label 4 of 3
    for corpus, why in (("mixed", "its sets hold [2, 3] candidates"), ("nope", "not a candidate-set corpus")):
        args = ["best-of", "-c", corpus, "-r", str(BEST), "--base-url", "http://127.0.0.1:9/v1", *w]
        refused = CliRunner().invoke(app, args, env={"COLUMNS": "400"})
        assert isinstance(refused.exception, InputError) and why in str(refused.exception), refused.output[-800:]
