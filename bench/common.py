"""Helpers the benchmarks share: a judge server in its own process, synthetic corpora, peak RSS."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")


def on_the_shared_prefect_server() -> None:
    """This process's flows on the local Prefect server rubricflow's commands and Python API share
    (tasks/runtime/prefect_server.py: started once, then reused), as a user's flows run: not on an
    ephemeral server of the bench process's own, whose start every bench process paid (10-25 s on
    a loaded machine, the most of a smoke run)."""
    from rubricflow.cli.flow_start import start_flows

    start_flows()


class Server:
    """`rubricflow judge-server` in a separate process (so client and server do not share a GIL)."""

    def __init__(self, *options: str):
        exe = shutil.which("rubricflow")
        if exe is None:
            sys.exit("install the project first: pip install -e .")
        self.proc = subprocess.Popen([exe, "judge-server", "--port", "0", *options], stdout=subprocess.PIPE, text=True)
        self.base_url = self.proc.stdout.readline().strip().rsplit(" ", 1)[-1]

    def stats(self) -> dict:
        import urllib.request

        with urllib.request.urlopen(self.base_url.removesuffix("/v1") + "/stats") as r:
            return json.load(r)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        os.kill(self.proc.pid, signal.SIGTERM)
        self.proc.wait(timeout=10)


def write_corpus(path: Path, n: int) -> Path:
    words = (
        "council budget river bridge engineer museum library market ferry bakery report trial "
        "moreover vibrant nestled stunning however tapestry"
    ).split()
    with path.open("w") as fh:
        for i in range(n):
            body = " ".join(words[(i * 7 + k * 3) % len(words)] for k in range(40))
            fh.write(json.dumps({"id": f"t{i:07d}", "text": f"Text {i}: {body}."}) + "\n")
    return path


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


MATERIALISED = (
    "criterion_scores", "node_scores", "disqualifier_hits", "text_scores", "run_summary", "run_costs", "pair_verdicts",
)  # fmt: skip


class Unmaterialised:
    """The analytics asked the old way on a connection (read-only is fine): temp views named like
    the public ones, computed from the raw rows by bench/unmaterialised_views.sql, shadow the
    materialised tables' views until the block ends."""

    def __init__(self, con):
        self.con = con

    def __enter__(self):
        baseline = (Path(__file__).parent / "unmaterialised_views.sql").read_text()
        self.con.execute(baseline.replace("CREATE OR REPLACE VIEW", "CREATE OR REPLACE TEMP VIEW"))
        for name in MATERIALISED:
            self.con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT * FROM unmat_{name}")
        return self.con

    def __exit__(self, *exc) -> None:
        for name in MATERIALISED:
            self.con.execute(f"DROP VIEW temp.{name}")
