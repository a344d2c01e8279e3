"""A Dask scheduler with its workers, and a PostgreSQL, each a process started here on 127.0.0.1
and stopped by its PID: stand-ins for the cluster and the database a user runs on many machines,
used by the tests and benches.

`private=True` starts each worker in its own mount namespace (`unshare -m`, root only) with a
fresh tmpfs over the folder above `folder` (the test's folder: the flow's warehouse and run
folders) as its working folder, Dask scratch space and state folder: the workers then see none of
the flow's files and share no folder they write with it or each other, as on separate machines
(the installed code they read is theirs on each machine too).
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rubricflow.tasks.runtime.processes import stop


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def can_isolate() -> bool:
    """Private mount namespaces need root and `unshare`."""
    return os.geteuid() == 0 and shutil.which("unshare") is not None


class DaskCluster:
    """`with DaskCluster(3, folder) as cluster:` then `cluster.address`; `kill(i)` ends worker i with SIGKILL."""

    def __init__(self, workers: int, folder: Path, private: bool = False, env: dict | None = None):
        self.n, self.folder, self.private = workers, Path(folder), private
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.address = f"tcp://127.0.0.1:{free_port()}"
        self.scheduler: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []

    def __enter__(self) -> DaskCluster:
        self.folder.mkdir(parents=True, exist_ok=True)
        port = self.address.rsplit(":", 1)[1]
        self.scheduler = self._start(
            "scheduler", ["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"]
        )
        try:
            for i in range(self.n):
                self.workers.append(self._worker(i))
            self.wait_for(self.n)
        except BaseException:  # workers that never arrived: stop what was started, not leave it running
            self.__exit__()
            raise
        return self

    def _start(self, name: str, args: list[str], wrap: list[str] | None = None) -> subprocess.Popen:
        log = open(self.folder / f"{name}.log", "ab")
        command = [*(wrap or []), sys.executable, "-m", *args]
        return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=self.env, cwd=self.folder)

    def _worker(self, i: int) -> subprocess.Popen:
        args = ["distributed.cli.dask_worker", self.address, "--nworkers", "1", "--nthreads", "1"]
        args += ["--no-dashboard", "--name", f"w{i}", "--host", "127.0.0.1"]
        if not self.private:
            return self._start(f"worker{i}", args)
        hide = shlex.quote(str(self.folder.parent))
        inner = (
            f"mount -t tmpfs tmpfs {hide} && cd {hide} && export RUBRICFLOW_STATE_DIR={hide}/state HOME={hide} "
            f'&& exec "$@" --local-directory {hide}/scratch'
        )
        return self._start(f"worker{i}", args, ["unshare", "-m", "--propagation", "private", "sh", "-c", inner, "sh"])

    def wait_for(self, workers: int, timeout_s: float = 90) -> None:
        from distributed import Client

        with Client(self.address, timeout="60s") as client:
            client.wait_for_workers(workers, timeout=timeout_s)

    def kill(self, i: int) -> None:
        """SIGKILL worker i's process tree (the nanny and its worker process)."""
        proc = self.workers[i]
        children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        for pid in [*children, str(proc.pid)]:
            for grandchild in subprocess.run(["pgrep", "-P", pid], capture_output=True, text=True).stdout.split():
                os.kill(int(grandchild), 9)
            os.kill(int(pid), 9)
        proc.wait()

    def __exit__(self, *exc) -> None:
        for proc in self.workers:
            stop(proc)
        stop(self.scheduler)


class Postgres:
    """A PostgreSQL server in a fresh data folder (under /tmp: the server's own user must reach it)
    on a free 127.0.0.1 port; `url` names its database. As root it runs as the `postgres` user."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="rubricflow-pg-"))
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, tool: str, *args: str) -> None:
        as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*as_user, shutil.which(tool) or tool, *args], check=True, capture_output=True, timeout=120)

    def __enter__(self) -> Postgres:
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres")
        data = str(self.folder / "data")
        self._run("initdb", "-D", data, "-A", "trust", "-U", "postgres")
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder}"
        self._run("pg_ctl", "-D", data, "-o", options, "-l", str(self.folder / "pg.log"), "-w", "start")
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.folder / "data"), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def wait_until(check, timeout_s: float = 60.0, every_s: float = 0.1) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("gave up waiting")
        time.sleep(every_s)
