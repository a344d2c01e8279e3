"""The run's reserve as a journal of parts a full disk refused (warehouse/journal.py, RunFolder)."""

import errno

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rubricflow.warehouse import journal
from rubricflow.warehouse.run_folder import RunFolder


def _part(keys: list[str]) -> tuple[pa.Table, pa.Table]:
    return pa.table({"cell_key": keys, "criterion_id": ["c"] * len(keys)}), pa.table({"cell_key": keys})


def test_parts_written_in_place_come_back_in_order_and_the_file_never_grows(tmp_path):
    folder = RunFolder(tmp_path / "runs", "r1")
    folder.keep_room()
    size = folder.reserve.stat().st_size
    assert not folder.room_spent()
    journal.append(folder.reserve, "shard-00000.p0001", *_part(["a", "b"]))
    journal.append(folder.reserve, "shard-00000.p0001", *_part(["c"]))  # a retried part keeps its name
    assert folder.room_spent() and folder.reserve.stat().st_size == size
    back = list(journal.records(folder.reserve))
    assert [(name, c["cell_key"].to_pylist()) for name, _, c in back] == [
        ("shard-00000.p0001", ["a", "b"]),
        ("shard-00000.p0001", ["c"]),
    ]


def test_a_part_larger_than_the_room_left_is_refused_as_a_full_disk(tmp_path):
    reserve = tmp_path / "reserve"
    reserve.write_bytes(b"\0" * 4096)
    with pytest.raises(OSError) as caught:
        journal.append(reserve, "big", *_part([f"k{i}" * 50 for i in range(200)]))
    assert caught.value.errno == errno.ENOSPC and not journal.holds_records(reserve)


def test_the_next_run_lands_every_kept_part_and_drops_the_reserve(tmp_path):
    runs = tmp_path / "runs"
    folder = RunFolder(runs, "r1")
    folder.keep_room()
    journal.append(folder.reserve, "shard-00000.p0001", *_part(["a", "b"]))
    journal.append(folder.reserve, "shard-00000.p0001", *_part(["c"]))
    landed = RunFolder.unloaded(runs, live=set())
    assert len(landed) == 2 and not folder.reserve.exists()  # two parts of one name: both kept
    assert sorted(k for p in landed for k in pq.read_table(p)["cell_key"].to_pylist()) == ["a", "b", "c"]
    live = RunFolder(runs, "r2")
    live.keep_room()
    journal.append(live.reserve, "p", *_part(["d"]))
    assert RunFolder.unloaded(runs, live={"r2"}) == landed  # a live run's reserve is its own
    RunFolder.prune(runs, live=set())
    assert live.reserve.exists()  # not landed yet: never pruned
