"""`rf.Warehouse.calibrate(corpus)` with no judge named checks the corpus's own judgments (#49 item 8),
not a rater called `unieval`; a corpus with nothing of its own to check is refused naming its raters."""

import numpy as np
import pytest
from scipy import stats

import rubricflow as rf
from rubricflow.tasks.stats.calibration import CalibrationError
from tests.cli.test_estimate_sides import SCALES, TOPICAL, _topical_chat
from tests.tasks.stats.judged_warehouse import judged_warehouse


def test_calibrate_defaults_to_the_corpus_own_judgments(tmp_path):
    judge, labels = _topical_chat()  # UniEval's scores recorded as this corpus's judge; 40 texts labelled
    rubric_hash = judged_warehouse(tmp_path / "w.duckdb", TOPICAL, {"my-model": judge}, labels)
    result = rf.Warehouse(tmp_path / "w.duckdb").calibrate("c")
    assert result.judge == f"judge:{rubric_hash[:12]}" and result.humans == ["human"]
    rows = {r.criterion_id: r for r in result.rows}
    assert set(rows) == set(SCALES)
    for cid, (lo, hi) in SCALES.items():
        human = {t: s for t, c, s, _ in labels if c == cid}
        texts = sorted(human)
        said = np.array([lo + round(judge[t][cid], 9) * (hi - lo) for t in texts])
        truth = np.array([human[t] for t in texts])
        assert rows[cid].n == 40
        assert rows[cid].pearson == pytest.approx(stats.pearsonr(said, truth)[0], abs=1e-9)


def test_a_corpus_with_no_judgments_of_its_own_is_refused_naming_its_raters(tmp_path):
    judge, labels = _topical_chat()
    judged_warehouse(tmp_path / "w.duckdb", TOPICAL, {}, [(t, c, s, "ann") for t, c, s, _ in labels])
    with pytest.raises(CalibrationError, match="corpus 'c' has no judgments of its own: .* \\(raters there: ann\\)"):
        rf.Warehouse(tmp_path / "w.duckdb").calibrate("c")
