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
is bought again by the next run. So a run starts by reserving RESERVE_BYTES on its disk; a part
refused for want of space is written into the reserve itself, over blocks it already holds
(`warehouse/journal.py`), and the run is told to stop buying (`room_spent`): the answers still in
flight go there too, and the next run lands and loads them. The reserve was once given up to land
parts in its room, which whatever else wrote to the disk could fill first: those answers were lost.
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

from . import journal
from .locks import runs_root

COMMITTED = ".completions.parquet"  # the suffix of a landed part's commit marker
JUDGMENTS = ".judgments.parquet"
RESERVE_BYTES = 8 * 2**20  # far more than the parts of the calls one run has in flight (64 x a few kB)


class KeptInReserve(OSError):
    """A part the full disk refused, written into the run's reserve: the run must stop buying."""


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
        """The disk filled and a part went into the reserve: the run must buy no more answers."""
        return journal.holds_records(self.reserve)

    def land(self, judgments: pa.Table, completions: pa.Table, part: str) -> Path:
        """Land one part: judgments first, then completions (the commit marker), each by rename.
        On a full disk the part goes into the reserve (see the module's docstring) and
        `KeptInReserve` says the run must stop."""
        try:
            return self._land(judgments, completions, part)
        except OSError as exc:
            if exc.errno != errno.ENOSPC or not self.reserve.exists():
                raise
        journal.append(self.reserve, part, judgments, completions)
        raise KeptInReserve(
            errno.ENOSPC,
            "No space left on device (the run stopped: what it bought is kept in its reserve)",
            str(self.landing.absolute()),
        )

    def unjournal(self) -> None:
        """Land the parts a full disk left in the reserve (a run that is over), then drop it: a
        part landed twice (a crash between the two) loads the same cells once."""
        if not journal.holds_records(self.reserve):
            return
        for i, (part, judgments, completions) in enumerate(journal.records(self.reserve)):
            self._land(judgments, completions, f"{part}.r{i:04d}")  # a retried part's name comes twice
        self.reserve.unlink()

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
        """Committed parts of runs that are not live (crash recovery), the parts their reserves
        kept landed first; a live run loads its own."""
        over = [folder for folder in cls.all(runs) if folder.run_id not in live]
        for folder in over:
            folder.unjournal()
        return [part for folder in over for part in folder.landed()]

    @classmethod
    def prune(cls, runs: Path, live: set[str]) -> None:
        """Remove the empty folders finished and dead runs leave behind (every run left its plan/
        and landing/ folders); a folder still holding a file (an unloaded part) stays."""
        for folder in cls.all(runs):
            if folder.run_id in live:
                continue
            if journal.holds_records(folder.reserve):
                continue  # parts the disk refused, not landed yet (still full): the next run's
            for kept in (folder.reserve, folder.path / "reserve.spent"):  # .spent: runs of before
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
