"""Every bench runs at a smoke size (seconds), so a schema or API change cannot silently break one:
two did (`bench/compare.py` and `bench/views.py` failed with binder errors after the tables gained
columns). The figures are not checked here; that the script runs to its last line and prints
its ratios is."""

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow

SMOKE = {
    "throughput.py": (["--sizes", "200,400", "--latency-cells", "150"], "mean in flight"),
    "compare.py": (["--texts", "2000", "--repeat", "1"], "x"),
    "views.py": (["--texts", "2000"], "x"),
    "viewer.py": (["--texts", "2000", "--runs", "1"], "x"),
    "library_lookup.py": (["--rubrics", "50", "--lookups", "500"], "p99"),
    "rate_limit.py": (["--rpm", "600", "--seconds", "3", "--latency-ms", "50"], "rpm"),
    "nightly.py": (["--texts", "300"], "s"),
    "scale.py": (["--texts", "300"], "score"),
    "pairwise.py": (["--pairs", "30"], "s"),
    "cli_flows.py": (["--runs", "1"], "x"),
    "cli_start.py": (["--runs", "1"], "s"),
}


def test_every_bench_has_a_smoke_size():
    benches = {p.name for p in (ROOT / "bench").glob("*.py")} - {"common.py", "local_model.py"}
    assert benches == set(SMOKE), "give the new bench a smoke size in SMOKE"


@pytest.mark.parametrize("script", sorted(SMOKE))
def test_the_bench_runs_at_a_smoke_size(script, tmp_path):
    args, expected = SMOKE[script]
    env = {**os.environ, "PREFECT_LOGGING_LEVEL": "WARNING"}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert expected in done.stdout, done.stdout[-2000:]
