"""One scoring run at a time per (corpus, rubric version, judge) on a warehouse: an advisory file
lock (flock) that the run's process holds from planning to finish, with the run's id written in
it. A second run of the same work is refused at once, before it plans anything, instead of judging
the same cells twice. A "running" row is live only while a process holds its work's lock under
that row's run id: a run whose process died (kill -9, a full disk, a lost machine) is closed as
interrupted by the next run, even when that next run holds the same lock itself.

Locks live beside the warehouse (`runs/<warehouse file>/locks/`), so runs on one machine, or on
machines sharing that folder over a filesystem that honours flock, see each other.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rubricflow.errors import TransientError


class _ThreadHold:
    """A work's hold among this process's threads: the lock they share, and the thread holding it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.owner: int | None = None


_threads: dict[str, _ThreadHold] = {}  # by lock file
_threads_lock = threading.Lock()


class RunInProgress(TransientError):
    """Another live process is running the same corpus, rubric version and judge."""


def runs_root(warehouse_path: str | Path) -> Path:
    """Where a warehouse's runs keep their plans, landed shards and locks: `runs/<file name>/`
    beside it. One folder per warehouse, so two warehouses in one folder never see (and never
    recover) each other's landed shards."""
    warehouse_path = Path(warehouse_path)
    return warehouse_path.parent / "runs" / warehouse_path.name


def lock_path(warehouse_path: str | Path, corpus_id: str, rubric_hash: str, judge_hash: str) -> Path:
    """The work's lock file, named by the warehouse's real path: one file reached through a symlink
    (`current.duckdb -> a.duckdb`) or `..` takes the same lock."""
    warehouse_path = Path(warehouse_path).resolve()
    key = hashlib.sha256(f"{warehouse_path.name}|{corpus_id}|{rubric_hash}|{judge_hash}".encode()).hexdigest()[:24]
    return runs_root(warehouse_path) / "locks" / f"{key}.lock"


def file_lock_path(warehouse_path: str | Path, corpus_id: str, rubric_hash: str, judge_hash: str) -> Path | None:
    """The work's second lock, named by the warehouse file itself (its device and inode) in this
    user's state folder: a hard link (`b.duckdb`, same file, another name or folder) resolves to
    another path, and two runs through the two names bought the same 120 cells twice. None while
    the warehouse does not exist yet (a new file has no other name)."""
    from rubricflow.tasks.runtime.prefect_server import state_dir

    try:
        info = Path(warehouse_path).stat()
    except OSError:
        return None
    key = hashlib.sha256(f"{info.st_dev}:{info.st_ino}|{corpus_id}|{rubric_hash}|{judge_hash}".encode()).hexdigest()
    return state_dir() / "locks" / f"{key[:24]}.lock"


@contextmanager
def _work_flocked(path: Path, work: tuple[str, str, str], warehouse_path: str | Path, run_id: str) -> Iterator[None]:
    """The path-named lock (seen by other machines sharing the folder) and the file-named one (seen
    through every hard link on this machine), both held for the block."""
    with _flocked(path, work[0], warehouse_path, run_id):
        second = file_lock_path(warehouse_path, *work)
        if second is None:
            yield
            return
        second.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with _flocked(second, work[0], warehouse_path, run_id):
            yield


@contextmanager
def run_lock(
    warehouse_path: str | Path, corpus_id: str, rubric_hash: str, judge_hash: str, run_id: str
) -> Iterator[None]:
    """Hold the work's lock for the block; RunInProgress names another process's run that holds
    it. A thread of this process whose work another of its threads runs waits for it instead
    (`Warehouse.score` from two threads): then it finds the cells landed, and judges none twice."""
    path = lock_path(warehouse_path, corpus_id, rubric_hash, judge_hash)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _threads_lock:
        ours = _threads.setdefault(str(path), _ThreadHold())
    if ours.owner == threading.get_ident():  # the same thread again (nested): refused by the flock below
        with _work_flocked(path, (corpus_id, rubric_hash, judge_hash), warehouse_path, run_id):
            yield
        return
    with ours.lock:  # flock cannot tell two threads of one process apart: this lock does
        ours.owner = threading.get_ident()
        try:
            with _work_flocked(path, (corpus_id, rubric_hash, judge_hash), warehouse_path, run_id):
                yield
        finally:
            ours.owner = None


@contextmanager
def _flocked(path: Path, corpus_id: str, warehouse_path: str | Path, run_id: str) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise RunInProgress(
            f"run {holder.get('run_id', '?')} (pid {holder.get('pid', '?')}) is already scoring corpus {corpus_id!r} "
            f"with this rubric version and judge on {warehouse_path}; wait for it to finish (running both would judge "
            "the same cells twice)"
        ) from None
    try:
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"run_id": run_id, "pid": os.getpid()}).encode())
        yield
    finally:
        os.close(fd)  # closing releases the lock


def holder(warehouse_path: str | Path, corpus_id: str, rubric_hash: str, judge_hash: str) -> str | None:
    """The run id of the live process that holds the work's lock (this process's own hold
    counts), or None. A run row of the same work with another id is dead: the same command run
    again after a crash holds the lock itself, and must not take its dead predecessor for live."""
    work = (warehouse_path, corpus_id, rubric_hash, judge_hash)
    for path in (lock_path(*work), file_lock_path(*work)):
        held = _held_by(path) if path is not None and path.exists() else None
        if held is not None:  # the file's lock: a run through a hard link of this warehouse is live
            return held
    return None


def _held_by(path: Path) -> str | None:
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return None
    except BlockingIOError:
        return str(_holder(fd).get("run_id", ""))
    finally:
        os.close(fd)


def is_held(warehouse_path: str | Path, corpus_id: str, rubric_hash: str, judge_hash: str) -> bool:
    """Whether a live process holds the work's lock (this process's own hold counts as held)."""
    return holder(warehouse_path, corpus_id, rubric_hash, judge_hash) is not None


def _holder(fd: int) -> dict:
    try:
        return json.loads(os.pread(fd, 4096, 0) or b"{}")
    except ValueError:
        return {}
