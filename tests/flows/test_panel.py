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


STEPPED = """metadata: {id: stepped, version: 1.0.0, title: Stepped scales, description: Scales whose step is not 1.}
goal: Judge the texts.
criteria:
  - id: overall
    title: Overall
    description: 0-10 in halves.
    scale: {kind: numeric, min: 0, max: 10, step: 0.5}
  - id: rater
    title: Rater
    description: 0-1 in quarters.
    scale: {kind: numeric, min: 0, max: 1, step: 0.25}
"""
STEPS = {"overall": (0.0, 10.0, 0.5), "rater": (0.0, 1.0, 0.25)}


def _stepped_scores(n: int = 12) -> dict:
    """judge -> criterion -> scores on the scale's own grid (an outside probe's seed and draws)."""
    rng = np.random.default_rng(7)
    truth = rng.random(n)
    out = {}
    for judge in ("j1", "j2", "j3"):
        x = np.clip(truth + rng.normal(0, 0.15, n), 0, 1)
        out[judge] = {"overall": np.round(20 * x) / 2, "rater": np.round(4 * x) / 4}
    return out


def _sklearn_panel(values: dict, criterion: str) -> tuple[float, float, float]:
    """(mean kappa, mean QWK, lowest QWK) by sklearn over the scale's own categories (min..max by step)."""
    from itertools import combinations

    from sklearn.metrics import cohen_kappa_score

    low, high, step = STEPS[criterion]
    labels = list(range(round((high - low) / step) + 1))
    coded = {j: np.rint((v[criterion] - low) / step).astype(int) for j, v in values.items()}
    ks, qs = [], []
    for a, b in combinations(sorted(coded), 2):
        ks.append(cohen_kappa_score(coded[a], coded[b], labels=labels))
        qs.append(cohen_kappa_score(coded[a], coded[b], labels=labels, weights="quadratic"))
    return float(np.mean(ks)), float(np.mean(qs)), float(min(qs))


def test_kappas_use_the_scale_own_step_through_the_cli_and_the_api(tmp_path):
    """An outside probe: `panel` made categories of width 1 whatever the scale, so a 0-10 scale in
    halves printed kappa 0.187 / QWK 0.792 / lowest 0.726 (sklearn: 0.184 / 0.797 / 0.739) and a
    0-1 scale in quarters, folded into 0 and 1, 0.771 / 0.771 / 0.657 (sklearn: 0.402 / 0.776 / 0.690)."""
    import duckdb
    import yaml

    from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig
    from rubricflow.tasks.standins.scripted_judge import load_script

    values = _stepped_scores()
    ids = [f"t{i:02d}" for i in range(1, 13)]
    (tmp_path / "c.jsonl").write_text("".join(f'{{"id": "{t}", "text": "Probe text {t} about it."}}\n' for t in ids))
    (tmp_path / "stepped.yaml").write_text(STEPPED)
    warehouse = str(tmp_path / "w.duckdb")
    ingest_flow(str(tmp_path / "c.jsonl"), warehouse, "c")
    for judge, mine in values.items():
        key = tmp_path / f"{judge}.yaml"
        entries = [{"name": t, "match": f"{t} about", "criteria": {c: float(v[i]) for c, v in mine.items()}}
                   for i, t in enumerate(ids)]  # fmt: skip
        key.write_text(yaml.safe_dump({"texts": entries}))
        with RunningServer(ServerConfig(script=load_script(key))) as server:
            scored = score_corpus(
                "c", str(tmp_path / "stepped.yaml"), warehouse, {"base_url": server.base_url, "model": judge}
            )
            assert scored["ok_cells"] == 12, scored
    expected = {c: _sklearn_panel(values, c) for c in STEPS}
    assert [round(v, 3) for v in expected["overall"]] == [0.184, 0.797, 0.739]  # the probe's reference figures
    assert [round(v, 3) for v in expected["rater"]] == [0.402, 0.776, 0.690]
    with duckdb.connect(warehouse, read_only=True) as con:
        _, result = panel_agreement(con, "c", "stepped")
    assert [r.criterion_id for r in result] == sorted(STEPS)
    for r in result:
        assert (r.mean_kappa, r.mean_qwk, r.min_qwk) == pytest.approx(expected[r.criterion_id]), r
    shown = subprocess.run(
        [EXE, "panel", "-c", "c", "-r", "stepped", "-w", warehouse],
        cwd=tmp_path, env={**os.environ, "COLUMNS": "200"}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    for criterion, figures in expected.items():
        row = next(line for line in shown.stdout.splitlines() if f" {criterion} " in line)
        assert [f"{v:.3f}" for v in figures] == row.replace("│", " ").split()[4:7], row
