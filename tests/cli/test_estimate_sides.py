"""`rubricflow estimate --json` on recorded judgments (no judge run: tests/tasks/stats/judged_warehouse.py),
its figures checked against ppi-python / scipy on the same numbers: a criterion named `overall` keeps
its own figures beside the composite, and an A/B pair says which side agrees better with the humans."""

import json

import numpy as np
import pytest

from rubricflow.rubrics.model import Rubric
from rubricflow.tasks.loaders.labels import topical_chat
from rubricflow.tasks.stats.estimate import OVERALL
from tests.conftest import SHARED
from tests.conftest import run_cli as cli
from tests.tasks.stats import small_n_reference
from tests.tasks.stats.judged_warehouse import judged_warehouse

SCALES = {"overall": (1.0, 5.0), "naturalness": (1.0, 3.0)}
TOPICAL = Rubric.model_validate(
    {
        "metadata": {"id": "tc-check"},
        "goal": "Topical-Chat responses as UniEval judged them",
        "criteria": [
            {"id": cid, "scale": {"kind": "numeric", "min": lo, "max": hi}, "pass_threshold": 0.5}
            for cid, (lo, hi) in SCALES.items()
        ],
    }
)


def _topical_chat():
    """(UniEval's scores as unit scores, the humans' labels of the first 40 texts) on two criteria."""
    _, labels = topical_chat(SHARED / "calibration" / "topical_chat")
    rows = [r for r in labels.iter_rows(named=True) if r["criterion_id"] in SCALES]
    judge: dict[str, dict[str, float]] = {}
    for r in rows:
        if r["rater"] == "unieval":
            judge.setdefault(r["text_id"], {})[r["criterion_id"]] = min(1.0, r["score"])
    humans = [(r["text_id"], r["criterion_id"], r["score"], "human") for r in rows if r["rater"] == "human"]
    return judge, [h for h in humans if int(h[0].removeprefix("tc-")) < 40]


def test_a_criterion_named_overall_keeps_its_own_mean_and_pass_rate(tmp_path):
    judge, labels = _topical_chat()
    judged_warehouse(tmp_path / "w.duckdb", TOPICAL, {"unieval": judge}, labels)
    done = cli(tmp_path, "estimate", "-c", "c", "-r", "tc-check", "--human", "human", "--json")
    assert done.returncode == 0, done.stderr
    records = {(r["criterion_id"], r["figure"]): r for r in json.loads(done.stdout)}
    assert set(records) == {
        ("overall", "mean"), ("overall", "pass_rate"), ("naturalness", "mean"), ("naturalness", "pass_rate"),
        (OVERALL, "mean"),
    }  # fmt: skip
    assert OVERALL != "overall"
    texts = sorted(judge)
    lo, hi = SCALES["overall"]
    f = np.array([lo + round(judge[t]["overall"], 9) * (hi - lo) for t in texts])  # native, as stored (1e-9)
    human = {t: s for t, cid, s, _ in labels if cid == "overall"}
    at = [i for i, t in enumerate(texts) if t in human]
    y = np.array([human[texts[i]] for i in at])
    mean = records[("overall", "mean")]
    assert (
        mean["labels_only"] == pytest.approx(y.mean(), abs=1e-12) and mean["labels_only"] > 1
    )  # on 1-5, not the unit scale
    assert mean["judge_only"] == pytest.approx(f.mean(), abs=1e-12)
    _, low, high = small_n_reference.powered(y, f[at], f, mean["power_weight"], hi - lo)
    assert (mean["powered_low"], mean["powered_high"]) == (
        pytest.approx(max(lo, low), abs=1e-9),
        pytest.approx(min(hi, high), abs=1e-9),
    )
    rate = records[("overall", "pass_rate")]
    passed = (y - lo) / (hi - lo) >= 0.5
    assert rate["labels_only"] == pytest.approx(passed.mean(), abs=1e-12)
    composite = records[(OVERALL, "mean")]
    assert 0 <= composite["labels_only"] <= 1  # the unit-scale composite, under an id of its own


def test_an_ab_pair_says_which_side_agrees_better_with_a_paired_interval(tmp_path):
    """Judge A reads the humans' overall (1-5) with a little noise, judge B a full point higher: the
    A/B figures say A agrees better, with an interval of A's error less B's that excludes 0 and
    equals scipy's paired t interval (small-n corrected) on the same numbers; no difference of corrected means is printed."""
    _, labels = _topical_chat()
    human = {t: s for t, cid, s, _ in labels if cid == "overall"}
    _, every = topical_chat(SHARED / "calibration" / "topical_chat")
    truth = {r["text_id"]: r["score"] for r in every.iter_rows(named=True)
             if r["rater"] == "human" and r["criterion_id"] == "overall"}  # fmt: skip
    rng = np.random.default_rng(0)
    native = {
        "judge-a": {t: float(np.clip(v + rng.normal(0, 0.3), 1, 5)) for t, v in truth.items()},
        "judge-b": {t: float(np.clip(v + 1, 1, 5)) for t, v in truth.items()},
    }
    judges = {m: {t: {"overall": (v - 1) / 4} for t, v in scores.items()} for m, scores in native.items()}
    rubric = Rubric.model_validate({**TOPICAL.model_dump(mode="json", exclude_none=True),
                                    "criteria": [TOPICAL.criterion("overall").model_dump(mode="json", exclude_none=True)]})  # fmt: skip
    judged_warehouse(tmp_path / "w.duckdb", rubric, judges, [lab for lab in labels if lab[1] == "overall"])
    done = cli(tmp_path, "estimate", "-c", "c", "-r", "tc-check", "--human", "human", "--model", "judge-a",
               "--model-b", "judge-b", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = {(r["side"], r["criterion_id"], r["figure"]): r for r in json.loads(done.stdout)}
    assert not [k for k in records if k[0] == "A-B" and k[2] in ("mean", "pass_rate")]  # zero by construction
    texts = sorted(human)
    errors = {m: np.array([abs(native[m][t] - human[t]) for t in texts]) for m in native}
    gap = records[("A-B", "overall", "error")]
    low, high = small_n_reference.labels_only(errors["judge-a"] - errors["judge-b"], 8.0)  # within -4..4
    assert (gap["labels_only"], gap["labels_low"], gap["labels_high"]) == (
        pytest.approx((errors["judge-a"] - errors["judge-b"]).mean(), abs=1e-9),
        pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9),
    )  # fmt: skip
    assert gap["better"] == "A" and gap["labels_high"] < 0 and gap["powered"] is None
    for side, model in (("A", "judge-a"), ("B", "judge-b")):
        assert records[(side, "overall", "error")]["labels_only"] == pytest.approx(errors[model].mean(), abs=1e-9)
    flips = records[("A-B", "overall", "disagreement")]  # pass/fail at 3 on 1-5 (unit 0.5)
    said = {m: np.array([native[m][t] >= 3 - 1e-9 for t in texts]) for m in native}
    truth_passed = np.array([human[t] >= 3 - 1e-9 for t in texts])
    assert flips["labels_only"] == pytest.approx(
        (said["judge-a"] != truth_passed).mean() - (said["judge-b"] != truth_passed).mean(), abs=1e-9
    )
    # each side's label-corrected mean: PPI++ on its own judge (ppi-python)
    mean_b = records[("B", "overall", "mean")]
    f = np.array([native["judge-b"][t] for t in sorted(truth)])
    at = [i for i, t in enumerate(sorted(truth)) if t in human]
    y = np.array([human[t] for t in texts])
    _, low, high = small_n_reference.powered(y, f[at], f, mean_b["power_weight"], 4.0)
    assert (mean_b["powered_low"], mean_b["powered_high"]) == (
        pytest.approx(max(1, low), abs=1e-9),
        pytest.approx(min(5, high), abs=1e-9),
    )
