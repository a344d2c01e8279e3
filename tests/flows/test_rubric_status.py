"""Forge's usage telemetry and calibration gate on real human labels (Topical-Chat): `rubric status`
counts each version's runs and calls and flags one whose latest calibration is under its threshold
(exit 1), a rubric's own threshold wins over the default, and the nightly job fails on a flagged rubric.
The figure is the latest calibrate run's, named by its corpus and judge: never a mix of runs."""

import json

import pytest
import yaml

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.nightly import CalibrationGateError, nightly_scoring
from rubricflow.flows.score import score_corpus
from rubricflow.rubrics.formats import dump_yaml, load_rubric
from rubricflow.tasks.loaders.labels import import_labels, import_topical_chat
from rubricflow.tasks.standins.scripted_judge import load_script
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
    gate = r"llm-slop@\S+ \(\w+\): latest calibration r = 0.200 < 0.7 \(corpus n, judge j, 1 criterion, calibrated "
    with pytest.raises(CalibrationGateError, match=gate):
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


PROBE = """metadata: {id: probe, version: 1.0.0, title: Probe, description: Three ordinal criteria.}
goal: Judge the probe texts.
criteria:
""" + "".join(
    f"""  - id: {c}
    title: {c.upper()}
    description: A 1-5 score.
    scale:
      kind: ordinal
      anchors: [{{value: 1, description: bad}}, {{value: 2, description: poor}}, {{value: 3, description: ok}},
                {{value: 4, description: good}}, {{value: 5, description: great}}]
"""
    for c in "abc"
)
JUDGED = [1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 2, 4]  # what the scripted judge says of each text, on every criterion
# the humans: on corpus c1, a and b as the judge (r = 1) and c nearly (r = 0.959); on c2, only c, r = 0.570
HUMANS = {"c1": {"a": JUDGED, "b": JUDGED, "c": [1, 2, 3, 4, 5, 2, 2, 3, 4, 4, 2, 4]}, "c2": {"c": [2, 1, 3, 5, 3, 2, 4, 2, 4, 4, 3, 3]}}  # fmt: skip


@pytest.mark.slow
def test_status_shows_the_latest_calibration_run_named_by_corpus_and_judge_never_a_mix(tmp_path, thread_judge_server):
    """An outside probe: calibrated with judge j1 on one corpus (every criterion), then with judge jm on
    another whose humans labelled one criterion, `rubric status` showed the mean of j1's r on the other
    criteria and jm's on that one, a figure no calibrate run printed (and here it cleared the gate)."""
    ids = [f"t{i:02d}" for i in range(1, 13)]
    (tmp_path / "probe.yaml").write_text(PROBE)
    key = {"texts": [{"name": t, "match": f"{t} about", "criteria": dict.fromkeys("abc", v)} for t, v in zip(ids, JUDGED, strict=True)]}  # fmt: skip
    (tmp_path / "key.yaml").write_text(yaml.safe_dump(key))
    server = thread_judge_server(script=load_script(tmp_path / "key.yaml"))
    texts = tmp_path / "texts.jsonl"
    texts.write_text("".join(json.dumps({"id": t, "text": f"Probe text {t} about item {t}."}) + "\n" for t in ids))
    warehouse, printed = str(tmp_path / "w.duckdb"), {}
    for corpus, model in (("c1", "j1"), ("c2", "jm")):  # two corpora, each scored and calibrated by its own judge
        ingest_flow(str(texts), warehouse, corpus, announce=False)
        score_corpus(corpus, str(tmp_path / "probe.yaml"), warehouse, {"base_url": server.base_url, "model": model})
        labels = [(t, c, v[i], "human") for c, v in HUMANS[corpus].items() for i, t in enumerate(ids)]
        (tmp_path / f"{corpus}.csv").write_text("text_id,criterion,score,rater\n" + "".join(f"{','.join(map(str, r))}\n" for r in labels))  # fmt: skip
        import_labels(tmp_path / f"{corpus}.csv", corpus, warehouse)
        done = cli(tmp_path, "calibrate", "-c", corpus, "--rubric", "probe.yaml", "--model", model, "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        printed[corpus] = {r["criterion_id"]: r["pearson"] for r in json.loads(done.stdout)}
    assert printed["c1"]["a"] == pytest.approx(1.0) and printed["c2"] == {"c": pytest.approx(0.570, abs=1e-3)}
    mixed = (printed["c1"]["a"] + printed["c1"]["b"] + printed["c2"]["c"]) / 3  # the mix status used to show: 0.857, ok
    assert mixed > 0.7
    shown = cli(tmp_path, "rubric", "status")
    assert shown.returncode == 1, shown.stdout + shown.stderr
    [line] = [x for x in shown.stdout.splitlines() if "probe@1.0.0" in x]
    cells = [c.strip() for c in line.split("│")[1:-1]]
    assert cells[6:] == ["0.570", "1", "c2", f"jm ({_judge_hash(warehouse, 'jm')[:12]})", "0.700", "FLAGGED"], line
    assert f"{mixed:.3f}" not in shown.stdout
    assert "probe@1.0.0" in shown.stderr and "r = 0.570 < 0.7 (corpus c2, judge jm (" in shown.stderr, shown.stderr


def _judge_hash(warehouse: str, model: str) -> str:
    with db.reader(warehouse) as con:
        return con.execute("SELECT any_value(judge_hash) FROM runs WHERE model = ?", [model]).fetchone()[0]
