"""A warm worker for the commands that run a flow. Such a command spends most of its time importing
(Prefect, openai, DuckDB, the flows: about 2.5 s of a 4 s `score` on 2 cores); here it runs in a
process forked from one that imported all of that already, so the imports are paid once per idle
period, not once per command (bench/cli_flows.py measures both).

The first flow command starts the worker in the background and runs itself as usual; later ones
connect to its Unix socket and hand over their arguments, environment, working directory and
terminal (stdin, stdout and stderr as file descriptors). The worker forks a waiter, which forks the
runner: the runner becomes the command (the caller's environment, fresh random state and consoles)
and the waiter reports its exit code. The caller forwards Ctrl-C, SIGTERM and SIGHUP to the runner
and exits with its code; a caller that dies takes its runner with it.

A worker serves one setup: the Python (and the variables it reads at start), Prefect settings
(variables and settings files in the working directory), the installed packages and rubricflow's code
(file sizes and times) it started with; a change starts a new worker, which retires the old one (one
per state folder).

Safe to fork: the worker imports nothing that starts a thread (polars and statsmodels are imported by
the commands that use them; OpenBLAS and Arrow's jemalloc are configured single-threaded) and checks
before every fork that its own thread is the only one, else it refuses and the caller runs the
command itself. A command never runs twice: the worker offers, the caller says go or hangs up. An idle worker stops after
RUBRICFLOW_PREFECT_IDLE_S seconds (default 1800), or with `rubricflow prefect-server --stop`.
RUBRICFLOW_WARM_WORKER=0 turns it off. The worker's own environment holds no secrets; a command's
API key reaches only its runner, over a socket that only its user can open.
"""

from __future__ import annotations

import gc
import hashlib
import io
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rubricflow.layout import code_folders
from rubricflow.settings import environment, settings
from rubricflow.tasks.runtime.flow_commands import FLOW_COMMANDS, WORKER_FLAG
from rubricflow.tasks.runtime.prefect_server import IDLE_S, _alive, _server_env, state_dir, use_shared_server

PREFECT_SETTINGS_FILES = (".env", "prefect.toml", "pyproject.toml")  # read by Prefect from the working directory
OFFER_WAIT_S = 5.0  # a ready worker offers to run a command within this, or the caller runs it itself
GO_WAIT_S = 5.0  # a worker's offer not taken within this is withdrawn: the command never runs twice
# What makes the libraries a worker imports start no thread of their own: it forks with one thread.
SINGLE_THREADED = {"OPENBLAS_NUM_THREADS": "1", "JE_ARROW_MALLOC_CONF": "background_thread:false"}
# Variables read when Python starts (paths, encodings): a change needs another worker.
INTERPRETER_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONIOENCODING", "PYTHONUTF8", "LANG", "LC_ALL", "LC_CTYPE")


def wanted(argv: list[str]) -> bool:
    """Whether this command line is one a warm worker runs: a flow command, not asking for help."""
    if settings().warm_worker in ("0", "") or sys.platform != "linux":
        return False
    words = [a for a in argv if not a.startswith("-")]
    return bool(words) and words[0] in FLOW_COMMANDS and not {"--help", "-h"} & set(argv)


def run(argv: list[str]) -> int | None:
    """Run the command in the warm worker and return its exit code; None when there is no worker
    ready (one is started for the next command) and the caller should run the command itself."""
    if (settings().prefect_server or "shared") != "shared" and not settings().prefect.api_url:
        return None  # Prefect's per-process ephemeral server: nothing to share
    env = environment()  # what the runner gets (it finds the shared Prefect server itself, as any command does)
    try:
        use_shared_server()
        key = setup_key()
    finally:
        os.environ.clear()
        os.environ.update(env)
    path = socket_path(key)
    record = _read_record(key)
    if record is None:
        _start(key, path)
        return None
    if not record.get("ready"):
        return None  # still importing: this command runs itself, the next one goes to the worker
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(str(path))
    except OSError:
        conn.close()
        _start(key, path)
        return None
    with conn:
        code = _hand_over(conn, argv, env)
    if code is None and not _offered_in_time[0]:
        _retire(record)  # a stalled worker: the next command starts a fresh one
    return code


def setup_key() -> str:
    """What a worker's imports depend on: the interpreter and the variables it reads at start,
    Prefect's settings (its variables and the settings files Prefect reads from the working
    directory), the installed distributions (each import folder's modification time: installing or
    removing a package changes it) and rubricflow's code (else the worker kept running old code)."""
    h = hashlib.sha256()
    h.update(f"{sys.executable}\0{state_dir()}\0".encode())
    env = environment()
    for name in sorted(
        k
        for k in env
        if k.startswith(("PREFECT_", "RUBRICFLOW_PREFECT")) or k == "DO_NOT_TRACK" or k in INTERPRETER_ENV
    ):
        h.update(f"{name}={env[name]}\0".encode())
    for folder in sys.path:
        try:
            h.update(f"{folder}\0{os.stat(folder or '.').st_mtime_ns}\0".encode())
        except OSError:
            h.update(f"{folder}\0-\0".encode())
    for name in PREFECT_SETTINGS_FILES:
        file = Path(name)
        h.update(file.read_bytes() if file.is_file() else b"-")
    for code_folder in code_folders():
        for file in sorted(code_folder.rglob("*.py")):
            st = file.stat()
            h.update(f"{file}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()[:20]


def socket_path(key: str) -> Path:
    """In a folder only this user can enter (socket paths are limited to ~100 characters, so not
    under a deep state folder)."""
    folder = Path(tempfile.gettempdir()) / f"rubricflow-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    if folder.stat().st_uid != os.getuid() or folder.stat().st_mode & 0o077:
        raise PermissionError(f"{folder} must belong to you and be closed to others")
    return folder / f"worker-{key}.sock"


def _record(key: str) -> Path:
    return state_dir() / f"warm-worker-{key}.json"


def _read_record(key: str) -> dict | None:
    """The record of this setup's worker, if that worker is alive."""
    try:
        data = json.loads(_record(key).read_text())
        return data if _alive(int(data["pid"])) and _is_worker(int(data["pid"])) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _retire(record: dict) -> None:
    """End a worker that did not offer in time (stopped, or stuck), by the PID it recorded."""
    pid = int(record["pid"])
    if _alive(pid) and _is_worker(pid):
        os.kill(pid, signal.SIGKILL)
    Path(record["socket"]).unlink(missing_ok=True)
    for found in state_dir().glob("warm-worker-*.json"):
        try:
            if json.loads(found.read_text()).get("pid") == pid:
                found.unlink(missing_ok=True)
        except (OSError, ValueError):
            continue


def _start(key: str, path: Path) -> None:
    """Start a worker in the background unless one of this setup is starting already."""
    record = _record(key)
    try:
        data = json.loads(record.read_text())
        if _alive(int(data["pid"])):
            return
    except (OSError, ValueError, KeyError, TypeError):
        pass
    log = open(state_dir() / f"warm-worker-{key}.log", "ab")
    subprocess.Popen(
        [sys.executable, "-m", "rubricflow.launch", WORKER_FLAG, str(path), key],
        env={**_server_env(), **SINGLE_THREADED},
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    log.close()


_offered_in_time = [True]  # whether the last hand-over got the worker's offer (or its refusal) in time


def _hand_over(conn: socket.socket, argv: list[str], env: dict[str, str]) -> int | None:
    """Hand the command to the worker and wait for its exit code; None when the worker did not take
    it, so the caller runs it itself. Two steps make that decision the caller's alone (else a stalled
    worker could run a request its caller had given up on and run itself): the worker offers, the caller
    says "go" or hangs up, and a worker never runs a command whose caller did not say "go"."""
    request = json.dumps({"argv": argv, "env": env, "cwd": os.getcwd(), "umask": _umask()}).encode()
    _offered_in_time[0] = True
    replies = conn.makefile("rb")
    try:
        socket.send_fds(conn, [b"R"], [0, 1, 2])
        conn.sendall(struct.pack("!I", len(request)) + request)
        conn.settimeout(float(settings().warm_worker_wait_s or OFFER_WAIT_S))
        offer = json.loads(replies.readline() or b"{}")
    except (OSError, ValueError):
        _offered_in_time[0] = False
        return None  # no offer in time: the caller hangs up (withdrawing the request) and runs it itself
    if not offer.get("offer"):
        return None  # refused (say, a thread alive at fork): nothing ran
    conn.settimeout(None)
    conn.sendall(b"G")
    first = replies.readline()  # from here the command is the worker's: never run here as well
    if not first:
        print("rubricflow: the warm worker ended before starting the command", file=sys.stderr)
        return 1
    runner = json.loads(first)["pid"]

    def forward(signum, frame):
        try:
            os.kill(runner, signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    line = replies.readline()  # the exit code, when the runner ends
    if not line:
        print("rubricflow: the warm worker ended without an exit code", file=sys.stderr)
        return 1
    return int(json.loads(line)["exit"])


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def running() -> list[int]:
    """The PIDs of the warm workers recorded in the state folder that are alive (any setup)."""
    return [pid for _, pid, _ in _recorded_workers() if _alive(pid) and _is_worker(pid)]


def stop_all() -> int:
    """Stop every warm worker recorded in the state folder (its running commands go on); returns how many."""
    stopped = 0
    for record, pid, path in _recorded_workers():
        if _alive(pid) and _is_worker(pid):
            os.kill(pid, signal.SIGTERM)
            stopped += 1
        path.unlink(missing_ok=True)
        record.unlink(missing_ok=True)
    return stopped


def _recorded_workers() -> list[tuple[Path, int, Path]]:
    """(record file, PID, socket) of each worker record in the state folder; unreadable ones skipped."""
    found = []
    for record in state_dir().glob("warm-worker-*.json"):
        try:
            data = json.loads(record.read_text())
            found.append((record, int(data["pid"]), Path(data["socket"])))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def _is_worker(pid: int) -> bool:
    """Whether the process's command line is a warm worker's. One just started reads an empty command
    line for a moment while its exec completes (8 in 20 reads right after Popen on a busy machine): read
    again, for up to 0.5 s, before saying no."""
    for _ in range(50):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False
        if cmdline:
            return WORKER_FLAG.encode() in cmdline
        time.sleep(0.01)
    return False


# The worker process.


def serve(path: Path, key: str, prewarm: Callable[[], tuple[str, ...]], command: Callable[[list[str]], None]) -> None:
    """Import the modules `prewarm()` names (once this worker holds its socket), then fork
    `command(argv)` for each caller until idle for RUBRICFLOW_PREFECT_IDLE_S."""
    listener = _bind(path)
    if listener is None:
        return  # another worker of this setup serves
    signal.signal(signal.SIGTERM, lambda *_: _leave(path, key))
    stop_all()  # one worker per state folder: the others served a setup that changed (or another one)
    record = {"pid": os.getpid(), "socket": str(path)}
    _record(key).write_text(json.dumps(record))
    import importlib

    for name in prewarm():
        importlib.import_module(name)
    gc.collect()
    gc.freeze()  # the imports' objects out of every runner's collections: a runner's GC scanned them all again
    _record(key).write_text(json.dumps({**record, "ready": True, "threads": threads()}))
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # waiters are reaped by the kernel
    listener.settimeout(float(settings().prefect_idle_s or IDLE_S))
    print(f"warm worker {os.getpid()} ready on {path}", flush=True)
    while True:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            _leave(path, key)
        except InterruptedError:
            continue
        try:
            _, fds, _, _ = socket.recv_fds(conn, 1, 3)
            size = struct.unpack("!I", _read(conn, 4))[0]
            request = json.loads(_read(conn, size))
        except (OSError, ValueError, struct.error) as exc:
            print(f"refused a request: {exc}", flush=True)
            conn.close()
            continue
        if len(threads()) > 1:  # forking with another thread alive is unsafe (locks it holds stay held)
            print(f"refused a request: threads alive at fork: {threads()}", flush=True)
            _send_quietly(conn, {"offer": False, "why": "threads alive"})
        elif os.fork() == 0:
            listener.close()
            _wait_for(conn, fds, request, command)  # never returns
        conn.close()
        for fd in fds:
            os.close(fd)
        print(f"ran {' '.join(request['argv'][:1])} at {time.strftime('%H:%M:%S')}", flush=True)


def _bind(path: Path) -> socket.socket | None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(path))
    except OSError:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(path))
            return None  # alive
        except OSError:
            path.unlink(missing_ok=True)  # left by a worker that died
            listener.bind(str(path))
        finally:
            probe.close()
    os.chmod(path, 0o600)
    listener.listen(16)
    return listener


def _leave(path: Path, key: str) -> None:
    path.unlink(missing_ok=True)
    _record(key).unlink(missing_ok=True)
    os._exit(0)


def _read(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise OSError("the caller hung up")
        data += chunk
    return data


def threads() -> list[str]:
    """The names of this process's OS threads (one when it has only its main thread)."""
    names = []
    for task in os.listdir("/proc/self/task"):
        try:
            names.append(Path(f"/proc/self/task/{task}/comm").read_text().strip())
        except OSError:
            continue
    return sorted(names)


def _send_quietly(conn: socket.socket, message: dict) -> None:
    try:
        conn.sendall(json.dumps(message).encode() + b"\n")
    except OSError:
        pass


def _taken(conn: socket.socket) -> bool:
    """Offer to run the request; True once the caller says go (it may have given up meanwhile)."""
    try:
        conn.sendall(b'{"offer": true}\n')
        conn.settimeout(GO_WAIT_S)
        taken = conn.recv(1) == b"G"
        conn.settimeout(None)
        return taken
    except OSError:
        return False


def _wait_for(conn: socket.socket, fds: list[int], request: dict, command: Callable[[list[str]], None]) -> None:
    """The waiter: offer, then fork the runner, report its PID and exit code; end it if the caller goes away."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if not _taken(conn):
        print(f"{request['argv'][0]}: withdrawn by its caller", flush=True)
        os._exit(0)
    pid = os.fork()
    if pid == 0:
        conn.close()
        _become_caller(fds, request)
        command(request["argv"])
        sys.exit(0)  # a command's own SystemExit ends the runner as it ends any command: atexit handlers run
    print(f"{request['argv'][0]}: runner {pid}", flush=True)
    for fd in fds:
        os.close(fd)
    code = 1
    try:
        conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        done = os.pidfd_open(pid)
        while True:
            ready, _, _ = select.select([conn.fileno(), done], [], [])
            if done in ready:
                break
            if not conn.recv(1):  # the caller is gone (even by kill -9): so is its command
                os.kill(pid, signal.SIGKILL)
                break
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        code = 128 - code if code < 0 else code
        conn.sendall(json.dumps({"exit": code}).encode() + b"\n")
    except OSError:
        pass
    os._exit(0)


def _become_caller(fds: list[int], request: dict) -> None:
    """The runner takes the caller's terminal, directory, environment and arguments, and fresh random state."""
    import random

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.setpgid(0, 0)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()  # the caller's TZ, not the worker's
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=sys.stdout.isatty())
    sys.argv = ["rubricflow", *request["argv"]]
