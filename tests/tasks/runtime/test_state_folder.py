"""G20: the state folder (servers' and workers' state, logs, command lines) is the user's only."""

import stat

from rubricflow.tasks.runtime.prefect_server import state_dir


def test_the_state_folder_is_created_and_kept_0700(tmp_path, monkeypatch):
    monkeypatch.setenv("RUBRICFLOW_STATE_DIR", str(tmp_path / "state"))
    assert stat.S_IMODE(state_dir().stat().st_mode) == 0o700
    (tmp_path / "state").chmod(0o755)  # made by an older version
    assert stat.S_IMODE(state_dir().stat().st_mode) == 0o700
