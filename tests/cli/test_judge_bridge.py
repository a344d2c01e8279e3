"""`rubricflow judge bridge` (#54) on a copy of the shared scored warehouse: a new judge setup that
answers as the old one is stitched with an identity mapping; a new judge whose scores do not hold on
the nightly canary is refused, exit 1, with the criterion and the reason."""

import json
import shutil

from tests.conftest import run_cli


def test_a_bridge_stitches_a_judge_that_agrees_and_refuses_one_whose_mapping_fails(scored, tmp_path):
    home, _, server = scored
    shutil.copy(home / "w.duckdb", tmp_path / "w.duckdb")
    old = "rubricflow-offline-judge"  # the old judge by its model's name (or a judge hash prefix)
    common = ("-c", "c", "-r", "llm-slop", "--base-url", server.base_url, "--budget", "10", "--canary", "8")
    # the same offline judge with a seed: another judge hash, the same answers (it is deterministic)
    same = run_cli(tmp_path, "judge", "bridge", "--from", old, "--to", "rubricflow-offline-judge",
                   "--seed", "7", *common, "--json")  # fmt: skip
    assert same.returncode == 0, same.stderr[-2000:]
    verdict = json.loads(same.stdout)
    assert verdict["stitchable"] and verdict["bridge_texts"] == 10 and verdict["new_judge"] != verdict["old_judge"]
    for c in [verdict["score"], *verdict["criteria"]]:
        assert abs(c["stitched_mean"] - c["old_mean"]) < 1e-9 and c["rank_agreement"] > 0.99, c
    # another model of the offline judge: its answers move on some texts and not on others
    other = run_cli(tmp_path, "judge", "bridge", "--from", old, "--to", "judge-two", *common)
    said = " ".join((other.stdout + other.stderr).split())
    assert other.returncode == 1, said
    series = run_cli(tmp_path, "judge", "series", "-c", "c", "-r", "llm-slop", "--json")
    assert series.returncode == 0 and json.loads(series.stdout) == [], series.stderr  # no night recorded here
    assert "not stitchable:" in said and "does not hold on the canary" in said, said
