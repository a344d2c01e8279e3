"""Judge panels: several models score one rubric (the offline judge acts as a different judge for
each model name: a persona); the panel view pools them and `panel` measures their agreement,
both recomputed here from the raw judgments."""

import os
import subprocess

import krippendorff
import numpy as np
import pytest

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.tasks.stats.panel import PanelError, panel_agreement
from tests.conftest import EXE, rows, write_corpus

JUDGES = ("judge-a", "judge-b", "judge-c")


@pytest.fixture(scope="module")
def panel_warehouse(tmp_path_factory):
    from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig

    tmp = tmp_path_factory.mktemp("panel")
    warehouse = str(tmp / "w.duckdb")
    ingest_flow(str(write_corpus(tmp / "c.jsonl", 15)), warehouse, "c")
    with RunningServer(ServerConfig()) as server:
        for model in JUDGES:
            score_corpus("c", "writing-quality", warehouse, {"base_url": server.base_url, "model": model})
    return warehouse


def native(warehouse) -> dict:
    """criterion -> model -> text -> value, straight from the judgments table."""
    out: dict = {}
    for criterion, model, text, value in rows(
        warehouse,
        """
            SELECT j.criterion_id, r.model, j.text_id, j.value::INTEGER FROM judgments j JOIN runs r USING (run_id)
            WHERE j.status = 'scored'""",
    ):
        out.setdefault(criterion, {}).setdefault(model, {})[text] = value
    return out


def test_the_panel_view_pools_every_judge_per_text_and_criterion(panel_warehouse):
    scores = native(panel_warehouse)
    pooled = rows(
        panel_warehouse, "SELECT criterion_id, text_id, judges, mean, median, spread, majority_share FROM panel_scores"
    )
    assert len(pooled) == 15 * 3
    for criterion, text, judges, mean, median, spread, share in pooled:
        units = [(scores[criterion][m][text] - 1) / 3 for m in JUDGES]  # writing-quality levels are 1..4
        assert judges == 3 and mean == pytest.approx(np.mean(units)) and median == pytest.approx(np.median(units))
        assert spread == pytest.approx(max(units) - min(units))
        assert share == pytest.approx(max(units.count(u) for u in units) / 3)
    assert any(spread > 0 for *_, spread, _ in pooled), "the personas should not agree everywhere"


def test_panel_agreement_matches_krippendorff_on_the_raw_judgments(panel_warehouse):
    import duckdb

    scores = native(panel_warehouse)
    with duckdb.connect(panel_warehouse, read_only=True) as con:
        judges, result = panel_agreement(con, "c", "writing-quality")
    assert len(judges) == 3 and [r.criterion_id for r in result] == sorted(scores)
    for r in result:
        texts = sorted(scores[r.criterion_id]["judge-a"])
        grid = np.array([[scores[r.criterion_id][m][t] for t in texts] for m in JUDGES], dtype=float)
        assert r.alpha == pytest.approx(krippendorff.alpha(reliability_data=grid, level_of_measurement="ordinal"))
        assert r.judges == 3 and r.texts == 15 and -1 <= r.mean_qwk <= 1 and r.min_qwk <= r.mean_qwk


def test_a_panel_needs_two_judges_and_the_cli_scores_a_panel_in_one_command(tmp_path, thread_judge_server):
    server = thread_judge_server()
    write_corpus(tmp_path / "c.jsonl", 6)
    env = {**os.environ, "COLUMNS": "200"}

    def cli(*args):
        return subprocess.run(
            [EXE, *args, "-w", "w.duckdb"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )

    warehouse = str(tmp_path / "w.duckdb")  # one judge's run, made in this process: the commands come after
    ingest_flow(str(tmp_path / "c.jsonl"), warehouse, "c")
    assert score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url, "model": "solo"})["ok_cells"] == 6
    import duckdb

    with (
        duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con,
        pytest.raises(PanelError, match="one judge"),
    ):
        panel_agreement(con, "c", "llm-slop")
    scored = cli("score", "-c", "c", "-r", "llm-slop", "--base-url", server.base_url, "--model", "x", "--model", "y")
    assert scored.returncode == 0 and "a panel of 2 judges" in scored.stdout
    shown = cli("panel", "-c", "c", "-r", "llm-slop")
    assert shown.returncode == 0, shown.stderr
    assert "panel of 3 judges" in shown.stdout and "solo (" in shown.stdout and "mean QWK" in shown.stdout
    compared = cli(
        "compare",
        "-c",
        "c",
        "--a",
        "llm-slop",
        "--b",
        "writing-quality",  # llm-slop against itself, by one judge, is refused: nothing compared
        "--base-url",
        server.base_url,
        "--model",
        "x",
        "--model",
        "y",
    )
    assert compared.returncode == 0, compared.stderr
    assert compared.stdout.count("A/B on c") == 2  # one comparison per judge of the panel


def test_a_criterion_every_judge_scored_alike_is_n_a_without_numpy_warnings(tmp_path):
    """An outside probe: with every judge scoring `tone` 1 on every text, `panel` printed numpy's
    "Mean of empty slice" and "All-NaN axis encountered" to the user (the figures were right)."""
    import warnings

    from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig
    from rubricflow.warehouse import db
    from tests.conftest import ROOT

    source = tmp_path / "three.jsonl"
    source.write_text("".join((ROOT / "examples" / "replies.jsonl").read_text().splitlines(keepends=True)[:3]))
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(source), warehouse, "three")
    with RunningServer(ServerConfig()) as server:
        for model in ("gpt-4.1-mini", "judge-b", "judge-c"):
            score_corpus("three", "helpfulness", warehouse, {"base_url": server.base_url, "model": model})
    with db.reader(warehouse) as con, warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's RuntimeWarnings too, whoever they are attributed to
        _, result = panel_agreement(con, "three", "helpfulness")
    tone = next(r for r in result if r.criterion_id == "tone")
    assert np.isnan(tone.mean_kappa) and np.isnan(tone.mean_qwk) and np.isnan(tone.min_qwk), tone
    assert tone.split_share == 0.0
