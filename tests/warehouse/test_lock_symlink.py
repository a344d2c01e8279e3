"""G10: one warehouse reached through a symlink or another spelling of its path takes the same
run lock, so the same cells are never bought twice by two runs."""

import pytest

from rubricflow.warehouse.locks import RunInProgress, run_lock


def test_a_symlinked_warehouse_takes_the_same_lock(tmp_path):
    real = tmp_path / "a.duckdb"
    real.touch()
    link = tmp_path / "current.duckdb"
    link.symlink_to(real)
    (tmp_path / "sub").mkdir()
    with run_lock(real, "c", "rubric", "judge", "r1"):
        for other in (link, tmp_path / "sub" / ".." / "a.duckdb"):
            with pytest.raises(RunInProgress, match="r1"):
                with run_lock(other, "c", "rubric", "judge", "r2"):
                    pass
