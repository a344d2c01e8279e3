"""The labelling queue through Label Studio (`labels export-ls`, `labels import-ls`) on a corpus
scored by two offline judges over HTTP: the tasks and the labelling config in Label Studio's
documented shapes, its JSON export back in as labels (annotators as raters, skipped annotations left
out, a value off the scale refused naming the task), and `estimate` of which of the two judges agrees
better with those labels: A's error less B's equal to scipy's paired t interval on the warehouse's own
numbers."""

import json
import xml.etree.ElementTree as ET

import duckdb
import numpy as np
import pytest

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from tests.conftest import run_cli as cli
from tests.conftest import write_corpus
from tests.tasks.stats import small_n_reference


def annotated(tasks: list[dict]) -> list[dict]:
    """What Label Studio exports after two annotators answered (its task format: data, annotations
    with completed_by, was_cancelled and result items of from_name / to_name / type / value)."""
    out = []
    for i, task in enumerate(tasks):
        slop = int(task["data"]["text_id"][1:]) % 3 == 0
        result = [
            {
                "from_name": "puffery",
                "to_name": "text",
                "type": "choices",
                "value": {"choices": ["1" if slop else "3"]},
            },
            {"from_name": "scaffolding", "to_name": "text", "type": "choices", "value": {"choices": ["2"]}},
            {
                "from_name": "meta-talk",
                "to_name": "text",
                "type": "choices",
                "value": {"choices": [str(int(not slop))]},
            },
        ]
        annotations = [
            {
                "id": 100 + i,
                "completed_by": {"id": 7, "email": "ann@example.org"},
                "was_cancelled": False,
                "result": result,
            },
            {"id": 200 + i, "completed_by": 8, "was_cancelled": True, "result": []},  # skipped by annotator 8
        ]
        out.append({"id": i + 1, "data": task["data"], "annotations": annotations, "predictions": []})
    return out


def test_label_studio_round_trip_and_which_judge_agrees_better(tmp_path, thread_judge_server):
    server = thread_judge_server()
    warehouse = str(tmp_path / "w.duckdb")  # ingested and scored in this process: the test is about `labels`
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 40)), warehouse, "c")
    for model in ("judge-a", "judge-b"):
        assert score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url, "model": model})["ok_cells"] == 40
    planned = cli(tmp_path, "labels", "plan", "-c", "c", "-r", "llm-slop", "--model", "judge-a", "--budget", "20")
    assert planned.returncode == 0, planned.stderr
    exported = cli(
        tmp_path, "labels", "export-ls", "-c", "c", "-r", "llm-slop", "--model", "judge-a",
        "--out", "tasks.json", "--config", "config.xml",
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    assert [t["data"]["text_id"] for t in tasks] == planned.stdout.split()  # the queue, in its order
    assert all(t["data"]["text"] for t in tasks)
    view = ET.fromstring((tmp_path / "config.xml").read_text())
    assert view.find("Text").attrib == {"name": "text", "value": "$text"}
    choices = {c.get("name"): [x.get("value") for x in c] for c in view.iter("Choices")}
    assert choices == {"puffery": ["0", "1", "2", "3"], "scaffolding": ["0", "1", "2", "3"], "meta-talk": ["0", "1"]}

    bad = annotated(tasks[:2])
    bad[1]["annotations"][0]["result"][0]["value"] = {"choices": ["7"]}
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    refused = cli(tmp_path, "labels", "import-ls", "bad.json", "-c", "c", "-r", "llm-slop")
    assert refused.returncode == 2 and "task 2" in refused.stderr and "'7' is not a point" in refused.stderr
    (tmp_path / "export.json").write_text(json.dumps(annotated(tasks)))
    imported = cli(tmp_path, "labels", "import-ls", "export.json", "-c", "c", "-r", "llm-slop")
    assert imported.returncode == 0, imported.stderr
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        stored = con.execute("SELECT rater, count(*) FROM labels GROUP BY rater").fetchall()
    assert stored == [("ann@example.org", 60)]  # 20 texts x 3 criteria; the skipped annotations left out

    done = cli(
        tmp_path, "estimate", "-c", "c", "-r", "llm-slop", "--model", "judge-a", "--model-b", "judge-b",
        "--human", "ann@example.org", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = {(r["side"], r["criterion_id"], r["figure"]): r for r in json.loads(done.stdout)}
    assert not [k for k in records if k[0] == "A-B" and k[2] == "mean"]  # a difference zero by construction
    judge, labels = {}, {}
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        for model in ("judge-a", "judge-b"):
            judge[model] = dict(
                con.execute(
                    "SELECT s.text_id, c.scale_min + s.unit_score * (c.scale_max - c.scale_min) "
                    "FROM criterion_scores s JOIN criteria c USING (rubric_hash, criterion_id) "
                    "JOIN runs r ON r.judge_hash = s.judge_hash AND r.corpus_id = s.corpus_id "
                    "WHERE s.criterion_id = 'puffery' AND r.model = ?",
                    [model],
                ).fetchall()
            )
        labels = dict(con.execute("SELECT text_id, score FROM labels WHERE criterion_id = 'puffery'").fetchall())
    texts = sorted(labels)  # a uniform plan: each side's error is the labelled texts' mean, paired t interval
    error = {m: np.array([abs(judge[m][t] - labels[t]) for t in texts]) for m in judge}
    diff = records[("A-B", "puffery", "error")]
    low, high = small_n_reference.labels_only(error["judge-a"] - error["judge-b"], 6.0)  # small-n, within -3..3
    low, high = max(-3.0, low), min(3.0, high)
    assert (diff["labels_only"], diff["labels_low"], diff["labels_high"]) == (
        pytest.approx((error["judge-a"] - error["judge-b"]).mean(), abs=1e-9),
        pytest.approx(low, abs=1e-9),
        pytest.approx(high, abs=1e-9),
    )

    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        hashes = dict(con.execute("SELECT model, judge_hash FROM runs").fetchall())
    compared = cli(
        tmp_path, "compare", "-c", "c", "--a", "llm-slop", "--no-score", "--judge-hash-a", hashes["judge-a"][:12],
        "--judge-hash-b", hashes["judge-b"][:12], "--human", "ann@example.org",
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    agreement = next(line for line in compared.stdout.splitlines() if "puffery" in line and "error" in line)
    assert f"{diff['labels_only']:.4f}" in agreement and f"{diff['labels_low']:.4f}" in agreement
