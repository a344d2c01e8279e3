"""`rubricflow estimate` and `rubricflow labels plan` on a corpus scored by the offline judge over
HTTP: the printed and stored figures equal the small-n references' (ppi-python's point and standard
error, scipy's t quantile, one pseudo-observation of the scale's variance) on the warehouse's own numbers (to 1e-9),
an active plan's inclusion probabilities weight the labels, and what cannot be estimated honestly
is refused with one line naming the cause."""

import json

import duckdb
import numpy as np
import pytest
import statsmodels.api as sm
from ppi_py import classical_mean_ci, ppi_mean_ci
from statsmodels.stats.proportion import proportion_confint

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from tests.conftest import run_cli as cli
from tests.conftest import write_corpus
from tests.tasks.stats import small_n_reference


def scored_corpus(tmp_path, server) -> None:
    """Corpus c of 60 texts judged by llm-slop in w.duckdb: the flows `ingest` and `score` run, in this
    process (these tests are about `estimate` and `labels`, not the commands before them)."""
    ingest_flow(str(write_corpus(tmp_path / "c.jsonl", 60)), str(tmp_path / "w.duckdb"), "c")
    score_corpus("c", "llm-slop", str(tmp_path / "w.duckdb"), {"base_url": server.base_url})


def label_file(path, texts, rater="ann", puffery=None):
    """A human who agrees with the judge about slop most of the time (native scales: 0-3, 0/1)."""
    lines = ["text_id,criterion,score,rater"]
    for i, text_id in enumerate(texts):
        slop = int(text_id[1:]) % 3 == 0  # write_corpus: every third text is slop
        lines.append(
            f"{text_id},puffery,{puffery if puffery is not None else (1 if slop else 3 - (i % 4 == 0))},{rater}"
        )
        lines.append(f"{text_id},scaffolding,{2 if slop else 3},{rater}")
        lines.append(f"{text_id},meta-talk,{int(not slop or i % 2 == 1)},{rater}")
    path.write_text("\n".join(lines) + "\n")


def judged(tmp_path, criterion):
    """(text_id -> judge score in native units, label by ann) straight from the warehouse."""
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        rows = con.execute(
            "SELECT s.text_id, c.scale_min + s.unit_score * (c.scale_max - c.scale_min), l.score "
            "FROM criterion_scores s JOIN criteria c USING (rubric_hash, criterion_id) "
            "LEFT JOIN labels l ON l.text_id = s.text_id AND l.criterion_id = s.criterion_id AND l.rater = 'ann' "
            "WHERE s.criterion_id = ? ORDER BY s.text_id",
            [criterion],
        ).fetchall()
    return rows


def test_estimate_matches_ppi_python_and_refuses_what_it_cannot_compute(tmp_path, thread_judge_server):
    server = thread_judge_server()
    scored_corpus(tmp_path, server)

    label_file(tmp_path / "few.csv", [f"t{i:04d}" for i in range(5)], rater="few")
    label_file(tmp_path / "off.csv", [f"t{i:04d}" for i in range(12)], rater="off", puffery=7)
    label_file(tmp_path / "ann.csv", [f"t{i:04d}" for i in range(0, 60, 2)])
    for name in ("few.csv", "off.csv"):  # `labels FILE` (the command before it became a group) still imports
        assert cli(tmp_path, "labels", name, "-c", "c").returncode == 0
    assert cli(tmp_path, "labels", "import", "ann.csv", "-c", "c").returncode == 0

    for rater, cause in (
        ("few", "criterion 'meta-talk': 5 texts labelled by 'few'; an estimate needs at least 10"),
        ("off", "labels of criterion 'puffery' are off its scale 0-3 (text 't0000': 7)"),
        ("nobody", "no labels by 'nobody' on the criteria judge A scored"),
    ):
        refused = cli(tmp_path, "estimate", "-c", "c", "-r", "llm-slop", "--human", rater)
        assert refused.returncode == 2 and cause in " ".join(refused.stderr.split()), refused.stderr

    done = cli(tmp_path, "estimate", "-c", "c", "-r", "llm-slop", "--human", "ann", "--json")
    assert done.returncode == 0, done.stderr
    records = {(r["criterion_id"], r["figure"]): r for r in json.loads(done.stdout)}
    assert {c for c, _ in records} == {"puffery", "scaffolding", "meta-talk", "(overall)"}
    rows = judged(tmp_path, "puffery")
    judge = np.array([r[1] for r in rows])
    labelled = [r for r in rows if r[2] is not None]
    y, yhat = np.array([r[2] for r in labelled]), np.array([r[1] for r in labelled])
    mean = records[("puffery", "mean")]
    assert (mean["n_labels"], mean["n_texts"]) == (30, 60) and mean["judge_only"] == pytest.approx(judge.mean())
    _, low, high = small_n_reference.powered(y, yhat, judge, mean["power_weight"], 3.0)  # on 0-3
    assert (mean["powered_low"], mean["powered_high"]) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
    low, high = small_n_reference.labels_only(y, 3.0)
    assert (mean["labels_low"], mean["labels_high"]) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
    assert mean["powered_high"] - mean["powered_low"] < high - low and mean["effective_labels"] > 30
    passed = records[("puffery", "pass_rate")]  # pass threshold 0.5 of 0-3: a 2 or a 3 passes
    rates = ((y >= 1.5) * 1.0, (yhat >= 1.5) * 1.0, (judge >= 1.5) * 1.0)
    _, low, high = small_n_reference.powered(*rates, passed["power_weight"], 1.0)
    k = int(rates[0].sum())
    if min(k, 30 - k) < 10:  # few passes or fails: the powered interval holds Clopper-Pearson's (statsmodels)
        exact = proportion_confint(k, 30, alpha=0.1, method="beta")
        low, high = max(0.0, min(low, exact[0])), min(1.0, max(high, exact[1]))
    assert passed["powered_low"] == pytest.approx(low, abs=1e-9) and passed["powered_high"] == pytest.approx(
        high, abs=1e-9
    )
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        stored = con.execute(
            "SELECT powered_low, powered_high FROM estimates WHERE criterion_id = 'puffery' AND figure = 'mean'"
        ).fetchall()
    assert stored == [(mean["powered_low"], mean["powered_high"])]


def test_an_active_plan_records_inclusion_probabilities_that_weight_the_labels(tmp_path, thread_judge_server):
    server = thread_judge_server()
    scored_corpus(tmp_path, server)
    planned = cli(
        tmp_path, "labels", "plan", "-c", "c", "-r", "llm-slop", "--budget", "20", "--active", "--out", "q.txt"
    )
    assert planned.returncode == 0, planned.stderr
    chosen = planned.stdout.split()
    assert len(chosen) == len(set(chosen)) == 20 and (tmp_path / "q.txt").read_text().split() == chosen
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        probs = dict(con.execute("SELECT text_id, inclusion_prob FROM label_plans").fetchall())
    assert len(probs) == 60 and sum(probs.values()) == pytest.approx(20)
    assert max(probs.values()) > 1.5 * min(probs.values())  # active: uncertain texts are likelier
    label_file(tmp_path / "ann.csv", chosen[:16])  # the queue's first 16 of 20: a random 16 of the chosen
    assert cli(tmp_path, "labels", "import", "ann.csv", "-c", "c").returncode == 0
    done = cli(tmp_path, "estimate", "-c", "c", "-r", "llm-slop", "--human", "ann", "--json")
    assert done.returncode == 0, done.stderr
    mean = next(r for r in json.loads(done.stdout) if (r["criterion_id"], r["figure"]) == ("puffery", "mean"))
    assert mean["plan_id"].startswith("active-20-") and mean["n_labels"] == 16
    rows = judged(tmp_path, "puffery")
    judge, xi = np.array([r[1] for r in rows]), np.array([r[2] is not None for r in rows])
    y, pi = np.array([r[2] or 0.0 for r in rows]), np.array([probs[r[0]] * 16 / 20 for r in rows])

    def z(lam):  # Zrnic and Candes's active inference, every text of the corpus: lam f + xi (y - lam f) / pi,
        paper, d = lam * judge + xi * (y - lam * judge) / pi, 1 - xi / pi  # centred by c d, c from statsmodels
        return paper - sm.OLS(paper, sm.add_constant(d)).fit().params[1] * d

    lam = mean["power_weight"]
    for low, high, got in (
        (*classical_mean_ci(z(lam), alpha=0.1), "powered"),
        (*classical_mean_ci(z(0.0), alpha=0.1), "labels"),
    ):
        assert (mean[f"{got}_low"], mean[f"{got}_high"]) == (
            pytest.approx(low, abs=1e-9),
            pytest.approx(high, abs=1e-9),
        )
    assert np.std(z(lam)) <= min(np.std(z(g)) for g in np.linspace(0, 1, 101)) + 1e-12  # lam: the narrowest
    horvitz_thompson = sum(y[xi] / pi[xi]) / len(y)  # the labels alone, unbiased whatever the plan
    assert mean["labels_only"] == pytest.approx(z(0.0).mean(), abs=1e-9) != pytest.approx(horvitz_thompson)
    (low,), (high,) = ppi_mean_ci(y[xi], judge[xi], judge, alpha=0.1)
    assert mean["powered_low"] != pytest.approx(low, abs=1e-6)  # the unweighted figure would differ
