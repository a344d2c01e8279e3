"""CLI latency of the commands that run a flow: `rubricflow ingest` of 5 rows and `rubricflow score`
of those 5 texts on the offline judge, against `python -c "import prefect"`, each the median of
fresh processes run in turn (so a busy moment hits all alike). The commands share one local
Prefect server (tasks/runtime/prefect_server.py) and run in the warm worker (tasks/runtime/warm_worker.py); the
same commands without the worker (RUBRICFLOW_WARM_WORKER=0), the first command's start of the
server, and Prefect's per-process ephemeral server are printed for comparison (the ephemeral pair
costs ~50 s, two fresh servers; --no-ephemeral leaves it out, as the CI smoke does, where
tests/cli/test_pipeline_commands.py already runs a command on an ephemeral server). Target: <= 2x the import.

    python bench/cli_flows.py [--runs 5] [--no-ephemeral]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig

SAMPLE = Path(__file__).resolve().parents[1] / "flows" / "samples" / "demo_corpus.jsonl"


def seconds(command: list[str], cwd: Path, env: dict) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ephemeral", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    exe = shutil.which("rubricflow")
    if exe is None:
        sys.exit("install the project first: pip install -e .")
    with tempfile.TemporaryDirectory() as tmp, RunningServer(ServerConfig()) as judge:
        work = Path(tmp)
        (work / "five.jsonl").write_text("".join(SAMPLE.read_text().splitlines(keepends=True)[:5]))
        env = {**os.environ, "RUBRICFLOW_STATE_DIR": str(work / "state"), "PREFECT_HOME": str(work / "prefect")}
        env.pop("PREFECT_API_URL", None)

        def ingest(i: int, e: dict) -> list[str]:
            return [exe, "ingest", "five.jsonl", "-c", f"c{i}", "-w", "w.duckdb"]

        def score(i: int, e: dict) -> list[str]:
            return [exe, "score", "-c", f"c{i}", "-r", "llm-slop", "--base-url", judge.base_url, "-w", "w.duckdb"]

        first = seconds(ingest(0, env), work, env)  # starts the shared server
        cold_env = {**env, "RUBRICFLOW_WARM_WORKER": "0"}
        times: dict[str, list[float]] = {
            "import prefect": [],
            "ingest 5 rows": [],
            "score 5 texts": [],
            "cold ingest 5 rows": [],
            "cold score 5 texts": [],
        }
        for i in range(1, args.runs + 1):
            times["import prefect"].append(seconds([sys.executable, "-c", "import prefect"], work, env))
            times["ingest 5 rows"].append(seconds(ingest(i, env), work, env))
            times["score 5 texts"].append(seconds(score(i, env), work, env))
            times["cold ingest 5 rows"].append(seconds(ingest(100 + i, cold_env), work, cold_env))
            times["cold score 5 texts"].append(seconds(score(100 + i, cold_env), work, cold_env))
        ephemeral_env = {**env, "RUBRICFLOW_PREFECT_SERVER": "ephemeral"}
        ephemeral = {}
        if args.ephemeral:
            ephemeral["ingest 5 rows"] = seconds(ingest(99, ephemeral_env), work, ephemeral_env)
            ephemeral["score 5 texts"] = seconds(score(99, ephemeral_env), work, ephemeral_env)
        subprocess.run([exe, "prefect-server", "--stop"], env=env, stdout=subprocess.DEVNULL)
    baseline = statistics.median(times["import prefect"])
    print(f"median of {args.runs} fresh processes each, run in turn")
    label = 'python -c "import prefect"'
    print(f"{label:<28}{baseline:7.2f} s")
    for name in ("ingest 5 rows", "score 5 texts"):
        median, cold = statistics.median(times[name]), statistics.median(times["cold " + name])
        fresh = ephemeral.get(name)
        on_ephemeral = "not measured (--no-ephemeral)" if fresh is None else f"{fresh:6.2f} s ({fresh / baseline:.2f}x)"
        print(
            f"{'rubricflow ' + name:<28}{median:7.2f} s  {median / baseline:5.2f}x the import (target <= 2.00x)   "
            f"without the warm worker: {cold:5.2f} s ({cold / baseline:.2f}x)   on an ephemeral server: {on_ephemeral}"
        )
    for name in ("ingest 5 rows", "score 5 texts"):  # the warm worker's trade, one figure per command
        warm, cold = statistics.median(times[name]), statistics.median(times["cold " + name])
        print(f"ratio warm / cold, {name}: {warm / cold:.2f} (RUBRICFLOW_WARM_WORKER=0 is the cold side)")
    print(f"the first command, which starts the shared server: {first:.2f} s")


if __name__ == "__main__":
    main()
