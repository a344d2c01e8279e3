"""A scoring run's folder: the one class that knows its layout (dlt's `PackageStorage` is the model).

    runs/<warehouse file>/<run id>/
        plan/shard-00000.parquet          cells still to judge, one file per shard
        landing/<part>.judgments.parquet  a landed part's judgments, written first
        landing/<part>.completions.parquet  its completions, written last: the part's commit marker
        budget.json                       the run's budget ledger, shared by its processes
        reserve                           room kept on the disk for the answers a full disk would lose

A job's state is where its file is, and a file only appears by an atomic rename: a plan file is
a shard not yet landed; a completions file is a part landed but not loaded (the loader removes both
files after its commit). A run's process killed at any moment leaves a folder the next run reads
back (`unloaded`) and clears (`prune`).

A full disk (#41): an answer is paid for the moment it arrives, and a part that cannot be written
is bought again by the next run. So a run starts by reserving RESERVE_BYTES on its disk; the first
write refused for want of space gives the reserve up and lands in its room, and the run is told to
stop buying (`room_spent`): the answers still in flight land there too, and the next run loads them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .locks import runs_root

COMMITTED = ".completions.parquet"  # the suffix of a landed part's commit marker
JUDGMENTS = ".judgments.parquet"
RESERVE_BYTES = 8 * 2**20  # far more than the parts of the calls one run has in flight (64 x a few kB)


@dataclass(frozen=True)
class RunFolder:
    """One run's folder (see the module's docstring); `runs` is the warehouse's runs folder."""

    runs: Path
    run_id: str

    @classmethod
    def of(cls, warehouse_path: str | Path, run_id: str) -> RunFolder:
        return cls(runs_root(warehouse_path), run_id)

    @property
    def path(self) -> Path:
        return self.runs / self.run_id

    @property
    def plan(self) -> Path:
        return self.path / "plan"

    @property
    def landing(self) -> Path:
        return self.path / "landing"

    @property
    def budget(self) -> Path:
        return self.path / "budget.json"

    def remove_if_empty(self) -> None:
        """The folder of a run that failed before it judged anything (nothing landed in it) goes."""
        with contextlib.suppress(OSError):
            self.path.rmdir()

    def drop_plan(self) -> None:
        """The plan of a run that will judge no more (closed by the next run): its shards are re-planned."""
        shutil.rmtree(self.plan, ignore_errors=True)

    @property
    def reserve(self) -> Path:
        return self.path / "reserve"

    def keep_room(self) -> None:
        """Reserve RESERVE_BYTES on the run's disk before any call (a disk without them fails the
        run in preparation, when nothing is bought yet)."""
        self.path.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.reserve, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.posix_fallocate(fd, 0, RESERVE_BYTES)
        except OSError:
            self.reserve.unlink(missing_ok=True)
            raise
        finally:
            os.close(fd)

    def room_spent(self) -> bool:
        """The disk filled and the reserve was given up: the run must buy no more answers."""
        return (self.path / "reserve.spent").exists()

    def land(self, judgments: pa.Table, completions: pa.Table, part: str) -> Path:
        """Land one part: judgments first, then completions (the commit marker), each by rename;
        on a full disk, in the reserve's room (see the module's docstring)."""
        try:
            return self._land(judgments, completions, part)
        except OSError as exc:
            if exc.errno != errno.ENOSPC or not self.reserve.exists():
                raise
            self.reserve.unlink()
            (self.path / "reserve.spent").touch()
        return self._land(judgments, completions, part)

    def _land(self, judgments: pa.Table, completions: pa.Table, part: str) -> Path:
        self.landing.mkdir(parents=True, exist_ok=True)
        _write_atomic(judgments, self.landing / f"{part}{JUDGMENTS}")
        target = self.landing / f"{part}{COMMITTED}"
        _write_atomic(completions, target)
        return target

    def landed(self) -> list[Path]:
        """The committed parts not loaded yet, in the order they landed (their names sort so)."""
        return sorted(self.path.rglob(f"*{COMMITTED}")) if self.path.is_dir() else []

    @staticmethod
    def judgments_of(committed: Path) -> Path:
        """The judgments file of a landed part, named by its commit marker."""
        return committed.with_name(committed.name.removesuffix(COMMITTED) + JUDGMENTS)

    @staticmethod
    def forget(committed: Path) -> None:
        """A loaded part's files removed (after the load's commit: a crash before only reloads it)."""
        committed.unlink()
        RunFolder.judgments_of(committed).unlink(missing_ok=True)

    @classmethod
    def all(cls, runs: Path) -> list[RunFolder]:
        """Every run folder under `runs` (the locks folder is not a run's)."""
        if not runs.is_dir():
            return []
        return [cls(runs, p.name) for p in sorted(runs.iterdir()) if p.is_dir() and p.name != "locks"]

    @classmethod
    def unloaded(cls, runs: Path, live: set[str]) -> list[Path]:
        """Committed parts of runs that are not live (crash recovery); a live run loads its own."""
        return [part for folder in cls.all(runs) if folder.run_id not in live for part in folder.landed()]

    @classmethod
    def prune(cls, runs: Path, live: set[str]) -> None:
        """Remove the empty folders finished and dead runs leave behind (every run left its plan/
        and landing/ folders); a folder still holding a file (an unloaded part) stays."""
        for folder in cls.all(runs):
            if folder.run_id in live:
                continue
            for kept in (folder.reserve, folder.path / "reserve.spent"):
                kept.unlink(missing_ok=True)
            for sub in sorted((p for p in folder.path.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
                with contextlib.suppress(OSError):
                    sub.rmdir()  # only if empty
            with contextlib.suppress(OSError):
                folder.path.rmdir()


def _write_atomic(table: pa.Table, target: Path) -> None:
    """All or nothing: a failed write (a full disk) leaves no partial file behind."""
    tmp = target.with_name(target.name + ".tmp")
    try:
        pq.write_table(table, tmp, compression="zstd")
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
