"""The `rubricflow` command's numpy runs OpenBLAS on one thread: its thread pool made a pairwise report's
small bootstrap fits ~3x slower on a busy two-core machine (rubricflow/cli/__init__.py's ENV_DEFAULTS)."""

import os
import subprocess
import sys

CHECK = """
import rubricflow.cli
import scipy.optimize
from threadpoolctl import threadpool_info
print(sorted({p["num_threads"] for p in threadpool_info() if p["internal_api"] == "openblas"}))
"""


def test_the_command_runs_openblas_on_one_thread():
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[1]", done.stdout
