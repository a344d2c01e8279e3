"""G10: one warehouse reached through a symlink or another spelling of its path takes the same
run lock, so the same cells are never bought twice by two runs."""

import pytest

from rubricflow.warehouse.locks import RunInProgress, holder, run_lock


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


def test_a_hard_linked_warehouse_takes_the_same_lock(tmp_path):
    """#50 item 14: two runs through two hard links of one warehouse bought the same 120 cells twice."""
    real = tmp_path / "a.duckdb"
    real.touch()
    (tmp_path / "elsewhere").mkdir()
    for name in (tmp_path / "b.duckdb", tmp_path / "elsewhere" / "a.duckdb"):
        name.hardlink_to(real)
    with run_lock(real, "c", "rubric", "judge", "r1"):
        for other in (tmp_path / "b.duckdb", tmp_path / "elsewhere" / "a.duckdb"):
            with pytest.raises(RunInProgress, match="r1"):
                with run_lock(other, "c", "rubric", "judge", "r2"):
                    pass
        with run_lock(tmp_path / "b.duckdb", "other-corpus", "rubric", "judge", "r3"):
            pass  # other work on the same file is not held up
        assert holder(tmp_path / "elsewhere" / "a.duckdb", "c", "rubric", "judge") == "r1"  # its running row is live
    with run_lock(tmp_path / "b.duckdb", "c", "rubric", "judge", "r4"):
        pass  # released with the first run
