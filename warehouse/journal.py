"""The reserve as a journal: a run's room kept on a full disk, written in place.

A run reserves RESERVE_BYTES on its disk before any call (`RunFolder.keep_room`, fallocate: the
blocks are the file's). Once a part cannot land for want of space, it goes into that file instead,
over the zeros already allocated, so no new block is asked of the disk: what another process on the
same disk fills in the meantime cannot take it. The next run turns each record back into a landed
part and loads it, so an answer paid for is never bought again.

A record: MAGIC, then three length-prefixed fields (the part's name, its judgments and its
completions, each an Arrow IPC stream); the records end at the first place MAGIC is not.
"""

from __future__ import annotations

import errno
import fcntl
import os
import struct
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

from rubricflow.warehouse.rows import from_bytes, to_bytes

MAGIC = b"RFJ1"
_LENGTH = struct.Struct(">Q")


def holds_records(journal: Path) -> bool:
    try:
        with open(journal, "rb") as fh:
            return fh.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def append(journal: Path, part: str, judgments: pa.Table, completions: pa.Table) -> None:
    """Write one part after the last record, in place and synced; ENOSPC when it does not fit."""
    record = MAGIC + b"".join(_field(f) for f in (part.encode(), to_bytes(judgments), to_bytes(completions)))
    fd = os.open(journal, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # the run's processes (local Dask workers) share it
        size = os.fstat(fd).st_size
        end = sum(len(r) for r in _raw_records(fd, size))
        if end + len(record) + len(MAGIC) > size:  # room left for the zeros that end the records
            raise OSError(errno.ENOSPC, "No space left on device (the run's reserve is full too)", str(journal))
        os.pwrite(fd, record, end)
        os.fsync(fd)
    finally:
        os.close(fd)


def records(journal: Path) -> Iterator[tuple[str, pa.Table, pa.Table]]:
    """Each part the journal holds: (name, judgments, completions)."""
    fd = os.open(journal, os.O_RDONLY)
    try:
        for raw in _raw_records(fd, os.fstat(fd).st_size):
            name, judgments, completions = _fields(raw[len(MAGIC) :])
            yield name.decode(), from_bytes(judgments), from_bytes(completions)
    finally:
        os.close(fd)


def _raw_records(fd: int, size: int) -> Iterator[bytes]:
    at = 0
    while at + len(MAGIC) <= size and os.pread(fd, len(MAGIC), at) == MAGIC:
        length = len(MAGIC)
        for _ in range(3):
            (n,) = _LENGTH.unpack(os.pread(fd, _LENGTH.size, at + length))
            length += _LENGTH.size + n
        yield os.pread(fd, length, at)
        at += length


def _field(data: bytes) -> bytes:
    return _LENGTH.pack(len(data)) + data


def _fields(data: bytes) -> list[bytes]:
    out, at = [], 0
    for _ in range(3):
        (n,) = _LENGTH.unpack_from(data, at)
        out.append(data[at + _LENGTH.size : at + _LENGTH.size + n])
        at += _LENGTH.size + n
    return out
