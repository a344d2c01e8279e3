import os
import tempfile
from pathlib import Path

import pytest

# Prefect runs in ephemeral mode against a throwaway home; set before anything imports prefect.
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="rubricflow-prefect-"))
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ["DO_NOT_TRACK"] = "1"

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("RUBRICFLOW_SHARED", ROOT.parent / "shared")) / "data"
SHARED_RUBRICS = SHARED / "rubrics"
TEST_DATA = Path(__file__).parent / "data"


def shared_rubric_files() -> list[Path]:
    """Every rubric-ish file the shared folder holds (licenses aside)."""
    if not SHARED_RUBRICS.is_dir():
        raise RuntimeError(f"shared data not found at {SHARED_RUBRICS}; set RUBRICFLOW_SHARED")
    return sorted(p for p in SHARED_RUBRICS.rglob("*") if p.is_file() and not p.name.upper().startswith("LICENSE"))
