"""`rubricflow calibrate` reproduces the published Topical-Chat correlations to 6 decimals."""

import os
import subprocess

from tests.conftest import EXE, SHARED

PUBLISHED = {  # the table in shared/data/README.md (UniEval vs human, sample level)
    "naturalness": ("0.443666", "0.513986", "0.373973"),
    "coherence": ("0.595143", "0.612942", "0.465915"),
    "engagingness": ("0.556510", "0.604739", "0.455941"),
    "groundedness": ("0.536209", "0.574954", "0.451533"),
    "understandability": ("0.380038", "0.467807", "0.360741"),
    "overall": ("0.632796", "0.662583", "0.487272"),
}


def test_topical_chat_correlations_match_the_published_table(tmp_path):
    result = subprocess.run([EXE, "calibrate", "--topical-chat", str(SHARED / "calibration" / "topical_chat"),
                             "-w", "w.duckdb"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    first_table = result.stdout.split("└")[0]
    rows = {line.split()[1]: line.split()[2:] for line in first_table.splitlines() if line.startswith("│")}
    for criterion, (pearson, spearman, kendall) in PUBLISHED.items():
        n, *got = [cell for cell in rows[criterion] if cell != "│"]
        assert n == "360" and got == [pearson, spearman, kendall], criterion


def test_labels_import_refuses_bad_files(tmp_path):
    (tmp_path / "bad.csv").write_text("text_id,criterion,score,rater\nt1,c,high,h\n")
    (tmp_path / "cols.csv").write_text("id,score\n1,2\n")
    (tmp_path / "nan.csv").write_text("text_id,criterion,score,rater\nt1,c,3,h\nt2,c,NaN,h\n")  # crashed calibrate
    for name, message in (("bad.csv", "bad.csv: row 1: score 'high' is not a finite number"),
                          ("nan.csv", "nan.csv: row 2: score nan is not a finite number"),
                          ("cols.csv", "cols.csv: missing columns ['text_id', 'criterion', 'rater']")):
        result = subprocess.run([EXE, "labels", name, "-c", "x", "-w", "w.duckdb"], cwd=tmp_path,
                                capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
        assert result.returncode == 2 and message in " ".join(result.stderr.split()), result.stderr
