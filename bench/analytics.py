"""Bench: the materialised analytics' property test at a larger size than CI runs it
(tests/warehouse/test_analytics.py: random runs, re-ingests, adoptions, labels, pattern counts and
loads killed -9, each sequence's tables held to the unmaterialised views and to a rebuild).

    python bench/analytics.py [--examples 500]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=500, help="random sequences (CI runs 25)")
    args = parser.parse_args()
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",  # one test: in this process, not in the two workers the project's addopts start
            "tests/warehouse/test_analytics.py",
            "-k",
            "scratch",
        ],
        cwd=ROOT,
        env=os.environ | {"RUBRICFLOW_ANALYTICS_EXAMPLES": str(args.examples)},
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - started
    if done.returncode:
        sys.exit(f"the property test failed at {args.examples} sequences:\n{done.stdout[-4000:]}")
    print(f"{args.examples} random sequences: materialised tables equal the from-scratch computation ({took:.0f} s)")


if __name__ == "__main__":
    main()
