"""CLI start-up: `rubricflow --help` and `rubricflow rubric list` against importing the rubric code
alone (`python -c "import rubricflow.rubrics.compiler, rubricflow.rubrics.formats"`: the package's
face imports its names on first use), each the median of several fresh processes.
Target: both commands within 1.5x the baseline (they run no flow, so they never import Prefect).

    python bench/cli_start.py [--runs 7]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time


def median_seconds(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    exe = shutil.which("rubricflow")
    if exe is None:
        sys.exit("install the project first: pip install -e .")
    code = "import rubricflow.rubrics.compiler, rubricflow.rubrics.formats"
    baseline = median_seconds([sys.executable, "-c", code], args.runs)
    print(f"baseline  python -c '{code}'  {baseline:.3f} s")
    for label, command in (("rubricflow --help", [exe, "--help"]), ("rubricflow rubric list", [exe, "rubric", "list"])):
        seconds = median_seconds(command, args.runs)
        print(f"{label:<26}{seconds:>12.3f} s   {seconds / baseline:.2f}x baseline (target <= 1.50x)")


if __name__ == "__main__":
    main()
