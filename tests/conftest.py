import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("RUBRICFLOW_SHARED", ROOT.parent / "shared")) / "data"
SHARED_RUBRICS = SHARED / "rubrics"
TEST_DATA = Path(__file__).parent / "data"


def shared_rubric_files() -> list[Path]:
    """Every rubric-ish file the shared folder holds (licenses aside)."""
    if not SHARED_RUBRICS.is_dir():
        raise RuntimeError(f"shared data not found at {SHARED_RUBRICS}; set RUBRICFLOW_SHARED")
    return sorted(p for p in SHARED_RUBRICS.rglob("*") if p.is_file() and not p.name.upper().startswith("LICENSE"))


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    monkeypatch.setenv("DO_NOT_TRACK", "1")
