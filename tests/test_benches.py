"""Every bench runs at a smoke size (seconds), so a schema or API change cannot silently break one:
two did (`bench/compare.py` and `bench/views.py` failed with binder errors after the tables gained
columns). The figures are not checked here; that the script runs to its last line and prints
its ratios is."""

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow

SMOKE = {  # script (and a mode of it): (smoke-size arguments, its last stage's line, its other ratio lines)
    "throughput.py": (
        ["--sizes", "30,60", "--latency-cells", "30"],  # two sizes: the RSS line compares them
        "mean in flight",
        "| flow / bare | flow / tuned |",
        "peak RSS at 60 cells / at 30",
    ),
    "analytics.py": (["--examples", "1"], "materialised tables equal the from-scratch computation"),
    "compare.py": (["--texts", "2000", "--repeat", "1"], "ratio stored / bare", "computed / old way"),
    "views.py": (
        ["--texts", "2000"],
        "text_scores rows that differ from the hand query: 0",
        "view/old",
        "of a full rebuild",
    ),
    "viewer.py": (["--texts", "500", "--runs", "1"], "calibration", "page/old", "targets: over HTTP"),
    "library_lookup.py": (["--rubrics", "50", "--lookups", "500"], "baseline: parse file each time", "ratio on / off"),
    "rate_limit.py": (["--rpm", "600", "--seconds", "3", "--latency-ms", "50"], "cells ok: 30/30", "rpm   ratio"),
    "nightly.py": (["--texts", "60"], "night 2 (no change)", "no-change night / empty flow"),
    "scale.py": (["--texts", "50"], "server saw 0 new requests", "(target < 1024)"),
    "pairwise.py": (["--pairs", "30"], "panel of 2 judges", "x scoring; target >= 0.90"),
    "cli_flows.py": (
        ["--runs", "1", "--no-ephemeral"],
        "ratio warm / cold, score 5 texts",
        "ratio warm / cold, ingest 5 rows",
        "x the import (target <= 2.00x)",
    ),
    "cli_start.py": (["--runs", "1"], "rubricflow rubric list", "x baseline (target <= 1.50x)"),
    "cluster.py": (
        ["--cells", "40", "--workers", "1", "--no-nanny"],  # one worker, no nanny process: the same path
        "of the plain flow's",
        "plain flow (the baseline)",
    ),
    "python_api.py": (
        ["--texts", "50", "--runs", "1"],
        "ratio import rubricflow / import prefect",
        "ratio evaluate_many / bare",
    ),
    "ppi.py": (
        ["--reps", "20", "--hhh-pairs", "12", "--hhh-samples", "1"],
        "width ratio active / uniform",
        "uniform PPI++ covers",
    ),
    "ppi.py --small-n": (["--small-n", "10", "--reps", "20"], "least coverage of the small-n corrected intervals"),
    "sequential.py": (["--runs", "5"], "cost ratio sequential / full corpus", "baseline: a t-test peeked"),
    "cascade.py": (
        ["--texts", "60", "--splits", "20"],
        "cost ratio cascade / strong-only",
        "share kept ratio margin / modal",
    ),
    "telemetry.py": (["--cells", "60", "--repeat", "1"], "hooks alone when off", "ratio off / bare"),
    "labelling.py": (["--texts", "200", "--answers", "3"], "ratio kept writer / one writer a save"),
    "traces.py": (["--transcripts", "200"], "ratio transcripts / plain-text ingest"),
    "bridge.py": (["--bridges", "2"], "cost: bridge", "stitched mean |error|", "A/B decisions"),
    "reward.py": (
        ["--rollouts", "48", "--in-flight", "16", "--latency-rollouts", "32", "--p99-judge-ms", "50", "--rounds", "2"],
        "repeated rollout: cached=True",
        "ratio pointwise / bare loop (calls/s)",
        "ratio group / pointwise (rewards/s)",
        "server's added p99 latency",
    ),
    "layout.py": (["--scale", "0.002", "--send"], "case c: uncached/minimum"),
}


def test_every_bench_has_a_smoke_size():
    benches = {p.name for p in (ROOT / "bench").glob("*.py")} - {"common.py", "local_model.py"}
    assert benches == {name.split()[0] for name in SMOKE}, "give the new bench a smoke size in SMOKE"


@pytest.mark.parametrize("script", sorted(SMOKE))
def test_the_bench_runs_at_a_smoke_size(script, tmp_path):
    args, *expected = SMOKE[script]
    # a bench runs on Prefect's own ephemeral server: not on a shared server an earlier test stopped
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"} | {"PREFECT_LOGGING_LEVEL": "WARNING"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script.split()[0]), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    missing = [line for line in expected if line not in done.stdout]
    assert not missing, (missing, done.stdout[-2000:])


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="a GPU machine runs the bench itself")
def test_the_gpu_layout_bench_says_it_needs_a_gpu():
    """bench/layout_gpu.sh (vLLM with prefix caching) on a machine without a GPU: a clear line, exit 2."""
    done = subprocess.run(["bash", str(ROOT / "bench" / "layout_gpu.sh")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "needs a GPU" in done.stderr, done.stderr
