"""A Dask scheduler with its workers, and a PostgreSQL, each a process started here on 127.0.0.1
and stopped by its PID: stand-ins for the cluster and the database a user runs on many machines,
used by the tests and benches.

`private=True` starts each worker in its own mount namespace (`unshare -m`, root only) with a
fresh tmpfs over the folder above `folder` (the test's folder: the flow's warehouse and run
folders) as its working folder, Dask scratch space and state folder: the workers then see none of
the flow's files and share no folder they write with it or each other, as on separate machines
(the installed code they read is theirs on each machine too).

The scheduler and workers speak TLS with mutual certificates made here for each cluster (one CA,
one certificate for 127.0.0.1), as `docs/deployment.md` asks of a real cluster; `tls_env` holds the
variables a client needs (`tasks/runtime/dask_access`).
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

from rubricflow.settings import environment
from rubricflow.tasks.runtime.processes import stop


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def can_isolate() -> bool:
    """Private mount namespaces need root and `unshare`."""
    return os.geteuid() == 0 and shutil.which("unshare") is not None


def make_certificates(folder: Path) -> dict[str, str]:
    """A CA and one certificate it signed for 127.0.0.1 (key 0600), as PEM files in `folder`:
    {"ca": ..., "cert": ..., "key": ...}."""
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def issue(subject: str, key, issuer_name, issuer_key, ca: bool) -> x509.Certificate:
        now = dt.datetime.now(dt.UTC)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
        builder = x509.CertificateBuilder().subject_name(name).issuer_name(issuer_name or name)
        builder = builder.public_key(key.public_key())
        builder = builder.serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
        builder = builder.not_valid_after(now + dt.timedelta(days=2))
        builder = builder.add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        if not ca:
            names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        return builder.sign(issuer_key or key, hashes.SHA256())

    folder.mkdir(parents=True, exist_ok=True)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = issue("rubricflow test CA", ca_key, None, None, ca=True)
    cert = issue("127.0.0.1", key, ca.subject, ca_key, ca=False)
    files = {"ca": folder / "ca.pem", "cert": folder / "cert.pem", "key": folder / "key.pem"}
    files["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files["cert"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    files["key"].touch(mode=0o600)
    files["key"].write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return {part: str(path) for part, path in files.items()}


class DaskCluster:
    """`with DaskCluster(3, folder) as cluster:` then `cluster.address` (tls://) and `cluster.tls_env`
    (the client's certificate variables); `kill(i)` ends worker i with SIGKILL."""

    def __init__(
        self,
        workers: int,
        folder: Path,
        private: bool = False,
        env: dict | None = None,
        preload: dict | None = None,
        threads: int = 1,
        nanny: bool = True,
    ):
        """`preload` {i: module file}: worker i runs that file's `dask_setup(worker)` first (a fault);
        `threads`: shards a worker judges at once (docs/deployment.md starts workers with 2);
        `nanny=False`: each worker one process, without the nanny that would restart it (half the
        processes to start: for tests whose faults are a task's or the scheduler's, not a worker's death)."""
        from rubricflow.tasks.runtime.dask_access import TLS_VARIABLES

        self.n, self.folder, self.private, self.threads = workers, Path(folder), private, threads
        self.env = {**environment(), "PYTHONUNBUFFERED": "1", **(env or {})}
        self.address = f"tls://127.0.0.1:{free_port()}"
        self.certs_folder = Path(tempfile.mkdtemp(prefix="rubricflow-tls-"))  # outside what private workers hide
        self.certs = make_certificates(self.certs_folder)
        self.tls_env = {TLS_VARIABLES[part]: path for part, path in self.certs.items()}
        self.tls_args = ["--tls-ca-file", self.certs["ca"], "--tls-cert", self.certs["cert"]]
        self.tls_args += ["--tls-key", self.certs["key"]]
        self.preload, self.nanny = preload or {}, nanny
        self.scheduler: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []

    def __enter__(self) -> DaskCluster:
        self.folder.mkdir(parents=True, exist_ok=True)
        port = self.address.rsplit(":", 1)[1]
        self.scheduler = self._start(
            "scheduler",
            ["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard", *self.tls_args],
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
        command = [*(wrap or []), sys.executable, "-m", *args]
        with open(self.folder / f"{name}.log", "ab") as log:  # the process writes to its own copy of the handle
            return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=self.env, cwd=self.folder)

    def _worker(self, i: int) -> subprocess.Popen:
        args = ["distributed.cli.dask_worker", self.address, "--nworkers", "1", "--nthreads", str(self.threads)]
        args += ["--no-dashboard", "--name", f"w{i}", "--host", "127.0.0.1", *self.tls_args]
        if i in self.preload:
            args += ["--preload", str(self.preload[i])]
        if not self.nanny:
            args += ["--no-nanny"]
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

        with Client(self.address, timeout="60s", security=self.security()) as client:
            client.wait_for_workers(workers, timeout=timeout_s)

    def security(self):
        from distributed.security import Security

        c = self.certs
        return Security(
            tls_ca_file=c["ca"], tls_client_cert=c["cert"], tls_client_key=c["key"], require_encryption=True
        )

    def kill_scheduler(self) -> None:
        assert self.scheduler is not None
        self.scheduler.kill()
        self.scheduler.wait()

    def restart(self) -> None:
        """Stop what is left (workers that lost their scheduler) and start the cluster afresh at the
        same address: what a user does after losing the scheduler."""
        self.__exit__()
        self.workers = []
        self.certs = make_certificates(self.certs_folder)
        self.__enter__()

    def kill(self, i: int) -> None:
        """SIGKILL worker i's process tree (the nanny and its worker process)."""
        proc = self.workers[i]
        children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        for pid in [*children, str(proc.pid)]:
            for grandchild in subprocess.run(["pgrep", "-P", pid], capture_output=True, text=True).stdout.split():
                _kill(int(grandchild))
            _kill(int(pid))
        proc.wait()

    def __exit__(self, *exc) -> None:
        for proc in self.workers:  # asked at once, each closes while the others do (one by one took seconds each)
            if proc.poll() is None:
                proc.terminate()
        for proc in self.workers:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # as stop() does: SIGKILL past the grace
                proc.kill()
                proc.wait()
        stop(self.scheduler)  # last: a worker says goodbye to its scheduler
        shutil.rmtree(self.certs_folder, ignore_errors=True)


def _kill(pid: int) -> None:
    """SIGKILL, where a process that ended between the listing and the kill is no error (it raised
    ProcessLookupError, and the nanny above it lived on)."""
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass


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
