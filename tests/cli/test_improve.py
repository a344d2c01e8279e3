"""`rubricflow improve fit` on real human labels (Topical-Chat, with UniEval's published scores as the
judgments) and on a judge's own judgments: held-out figures reproducible from a seed, fitted weights
that beat equal ones, no judge call, and a written rubric that compiles, round-trips and says where
it came from."""

import json

import pytest

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.formats import dump_yaml, load_rubric
from tests.conftest import ROOT, SHARED, rows
from tests.conftest import run_cli as cli

RUBRIC = str(ROOT / "flows" / "samples" / "topical-chat-dialogue.yaml")


def test_fit_on_topical_chat_beats_equal_weights_held_out_and_writes_the_next_version(tmp_path):
    done = cli(tmp_path, "labels", str(SHARED / "calibration" / "topical_chat"), "-c", "tc")
    assert done.returncode == 0, done.stderr
    runs = []
    for name in ("first.yaml", "second.yaml"):
        done = cli(
            tmp_path,
            "improve",
            "fit",
            "-c",
            "tc",
            "-r",
            RUBRIC,
            "--from-rater",
            "unieval",
            "--labels",
            "human:overall",
            "--seed",
            "0",
            "--json",
            "-o",
            name,
        )
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout))
    first, second = runs
    assert first == {**second, "output": first["output"]}  # the seed reproduces every figure
    assert first["texts"] == 360 and first["judge_calls"] == 0
    held = first["held_out"]
    assert held["fitted"]["pearson"] > held["equal"]["pearson"]
    assert held["fitted"]["spearman"] > held["equal"]["spearman"]

    fitted = load_rubric(tmp_path / "first.yaml")
    assert fitted.metadata.version == "1.0.1"
    assert {c.id: c.weight for c in fitted.criteria} == first["weights"]
    provenance = fitted.metadata.provenance
    assert provenance["fit_scores"] == "rater:unieval" and provenance["fit_target"] == "human:overall"
    assert provenance["held_out_pearson_after"] == round(held["fitted"]["pearson"], 6)
    assert provenance["held_out_spearman_before"] == round(held["rubric"]["spearman"], 6)
    bundle = compile_or_raise(fitted)
    (tmp_path / "again.yaml").write_text(dump_yaml(fitted))
    assert compile_or_raise(load_rubric(tmp_path / "again.yaml")).hash == bundle.hash

    human = cli(tmp_path, "improve", "fit", "-c", "tc", "-r", RUBRIC, "--from-rater", "human")
    assert human.returncode == 2 and "outside the rubric's scale [0, 1]" in human.stderr  # human scales are 1-3


def test_fit_on_a_judges_judgments_makes_no_call(tmp_path, thread_judge_server):
    server = thread_judge_server()
    assert cli(tmp_path, "labels", str(SHARED / "calibration" / "topical_chat"), "-c", "tc").returncode == 0
    done = cli(tmp_path, "score", "-c", "tc", "-r", RUBRIC, "--base-url", server.base_url)
    assert done.returncode == 0, done.stderr
    calls, landed = server.stats()["answered"], rows(tmp_path / "w.duckdb", "SELECT count(*) FROM completions")
    done = cli(tmp_path, "improve", "fit", "-c", "tc", "-r", RUBRIC, "--json", "-o", "fitted.yaml")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (
        server.stats()["answered"] == calls
        and rows(tmp_path / "w.duckdb", "SELECT count(*) FROM completions") == landed
    )
    assert result["texts"] == 360 and sum(result["weights"].values()) == pytest.approx(5.0)
    assert load_rubric(tmp_path / "fitted.yaml").metadata.provenance["fit_scores"].startswith("judge:")
