"""Forge's usage telemetry and calibration gate on real human labels (Topical-Chat): `rubric status`
counts each version's runs and calls and flags one whose latest calibration is under its threshold
(exit 1), a rubric's own threshold wins over the default, and the nightly job fails on a flagged rubric."""

import pytest

from rubricflow.flows.nightly import CalibrationGateError, nightly_scoring
from rubricflow.rubrics.formats import dump_yaml, load_rubric
from rubricflow.tasks.loaders.labels import import_topical_chat
from rubricflow.tasks.stats.calibration import calibration, record
from rubricflow.warehouse import db
from rubricflow.warehouse.sqlfiles import run_sql
from tests.conftest import ROOT, SHARED, write_corpus
from tests.conftest import run_cli as cli
from tests.rubrics.test_metrics import exported_metrics

RUBRIC = ROOT / "flows" / "samples" / "topical-chat-dialogue.yaml"


@pytest.mark.slow
def test_status_counts_usage_and_flags_a_rubric_under_its_calibration_threshold(tmp_path, thread_judge_server):
    server = thread_judge_server()
    lenient = load_rubric(RUBRIC)
    provenance = {"calibration_threshold": -1.0}
    lenient = lenient.model_copy(
        update={"metadata": lenient.metadata.model_copy(update={"version": "1.0.1", "provenance": provenance})}
    )
    (tmp_path / "lenient.yaml").write_text(dump_yaml(lenient))
    warehouse = tmp_path / "w.duckdb"  # labels and calibrations made in-process: this test is about status
    import_topical_chat(SHARED / "calibration" / "topical_chat", "tc", warehouse)
    three = ["-r", str(RUBRIC), "-r", "lenient.yaml", "-r", str(RUBRIC)]  # each version, then the first again
    done = cli(tmp_path, "score", "-c", "tc", *three, "--base-url", server.base_url)  # three runs, in turn
    assert done.returncode == 0 and done.stdout.count("status completed") == 3, done.stdout + done.stderr
    before = cli(tmp_path, "rubric", "status")
    assert before.returncode == 0 and before.stdout.count("not calibrated") == 2, before.stdout + before.stderr
    assert "│ 2    │ 360" in before.stdout  # the first version: two runs, 360 calls (the second run adopted all)
    for rubric in (str(RUBRIC), str(tmp_path / "lenient.yaml")):  # as `rubricflow calibrate --rubric` does
        with db.reader(warehouse) as con:
            result = calibration(con, "tc", "unieval", None, rubric, None, 1.0, "sampled", None)
        with db.writer(warehouse) as con:
            record(con, result)
    flagged = cli(tmp_path, "rubric", "status", OTEL_METRICS_EXPORTER="console")
    assert flagged.returncode == 1 and "FLAGGED" in flagged.stdout
    gauges = exported_metrics(flagged.stdout)["rubric.calibration_correlation"]  # seed 002's gauge, per version
    assert sorted(p["attributes"]["rubric.version"] for p in gauges) == ["1.0.0", "1.0.1"]
    assert "calibration gate: topical-chat-dialogue@1.0.0" in flagged.stderr and "1.0.1" not in flagged.stderr
    assert cli(tmp_path, "rubric", "status", "--min-correlation", "-1").returncode == 0


@pytest.mark.slow
def test_the_nightly_job_fails_on_a_rubric_under_its_calibration_threshold(tmp_path, thread_judge_server):
    server = thread_judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    source = write_corpus(tmp_path / "corpus.jsonl", 12)
    judge = {"base_url": server.base_url}
    (first,) = nightly_scoring(str(source), "n", ["llm-slop"], warehouse, judge, canary_size=0, night="d1")
    with db.writer(warehouse) as con:  # a calibration as `rubricflow calibrate` records it, r = 0.2
        (rubric_hash,) = con.execute("SELECT rubric_hash FROM runs").fetchone()
        figures = dict.fromkeys(CALIBRATION_FIGURES)
        run_sql(
            con,
            "record_calibration.sql",
            corpus_id="n",
            judge="judge:llm-slop",
            reference="human",
            step=1.0,
            score="sampled",
            rubric_hash=rubric_hash,
            judge_hash="j",
            criterion_id="c",
            n=30,
            **figures,
            pearson=0.2,
        )
    with pytest.raises(CalibrationGateError, match=r"llm-slop@\S+ \(\w+\): latest calibration r = 0.200 < 0.7"):
        nightly_scoring(str(source), "n", ["llm-slop"], warehouse, judge, canary_size=0, night="d2")
    nightly_scoring(str(source), "n", ["llm-slop"], warehouse, judge, canary_size=0, night="d3", min_correlation=0.1)


CALIBRATION_FIGURES = (
    "spearman",
    "kendall_tau_b",
    "cohen_kappa",
    "qwk",
    "humans",
    "fleiss_kappa",
    "fleiss_texts",
    "alpha_humans",
    "alpha_with_judge",
    "human_pearson",
    "human_qwk",
    "note",
)


def test_a_calibration_on_too_few_texts_neither_flags_nor_clears_a_version(tmp_path):
    """An outside probe: calibrated at r = -1.0 on 20 texts (flagged), then at r = 1.0 on 2 (a line
    through two points), the version showed `ok`: the gate counts calibrations on >= 10 texts."""
    from rubricflow.rubrics.library import Library
    from rubricflow.tasks.pipeline.rubric_status import MIN_LABELS, status

    bundle = Library().bundle("llm-slop")
    with db.writer(tmp_path / "w.duckdb") as con:
        db.register_rubric(con, bundle)
        for n, pearson in ((20, -1.0), (2, 1.0), (MIN_LABELS - 1, 0.9)):  # the latest two: too few texts
            figures = dict.fromkeys(CALIBRATION_FIGURES)
            run_sql(con, "record_calibration.sql", corpus_id="c", judge="judge:llm-slop", reference="h", step=1.0,
                    score="sampled", rubric_hash=bundle.hash, judge_hash="j", criterion_id="puffery", n=n,
                    **figures, pearson=pearson)  # fmt: skip
        [row] = status(con)
    assert row["pearson"] == -1.0 and row["flagged"]
