"""Hugging Face datasets as corpora, read with pyarrow alone (importing `datasets` costs seconds and
it is an optional package): a `save_to_disk` folder (Arrow IPC stream shards `data-*.arrow` beside
`state.json`; a DatasetDict holds `dataset_dict.json` and one such folder per split) or a folder of
the Hub's Parquet shards (`data/train-00000-of-00002.parquet`). One split is read: `--split`, else
"train", else the only one."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rubricflow.errors import InputError
from rubricflow.tasks.loaders.transcripts import unmerged

BATCH_ROWS = 20_000
HUB_SHARD = re.compile(r"(?P<split>.+?)-\d{5}-of-\d{5}(-[0-9a-f]+)?")  # train-00000-of-00002[-<hash>]


class DatasetFolderError(InputError):
    """A Hugging Face dataset folder whose split cannot be chosen or read."""


@dataclass(frozen=True)
class DatasetSplit:
    """The shard files of the one split to read, in order."""

    folder: Path
    split: str
    kind: str  # "arrow" (save_to_disk) or "parquet" (Hub shards)
    shards: tuple[Path, ...]


def find_dataset(folder: Path, split: str | None = None) -> DatasetSplit | None:
    """The split to read when `folder` is a Hugging Face dataset, else None (a folder of texts)."""
    if (folder / "dataset_dict.json").is_file():
        splits = _json(folder / "dataset_dict.json").get("splits") or []
        chosen = plain_name(folder / "dataset_dict.json", pick_split(folder, [str(s) for s in splits], split))
        return DatasetSplit(folder, chosen, "arrow", _arrow_shards(folder / chosen, chosen))
    if (folder / "state.json").is_file():
        state = _json(folder / "state.json")
        own = state.get("_split") or split or "train"
        if split and split != own:
            raise DatasetFolderError(f"{folder}: a single dataset of split {own!r}, not {split!r}: drop --split")
        return DatasetSplit(folder, own, "arrow", _arrow_shards(folder, own))
    parquet = _parquet_splits(folder)
    if parquet:
        chosen = pick_split(folder, sorted(parquet), split)
        return DatasetSplit(folder, chosen, "parquet", one_config(folder, chosen, parquet[chosen]))
    return None


def pick_split(folder: Path, splits: list[str], wanted: str | None) -> str:
    """`wanted`, else "train", else the only split; an unknown or ambiguous choice names the splits."""
    if not splits:
        raise DatasetFolderError(f"{folder}: a Hugging Face dataset with no splits")
    if wanted is not None and wanted not in splits:
        raise DatasetFolderError(f"{folder}: no split {wanted!r}; its splits are {', '.join(splits)}")
    if wanted is None and "train" not in splits and len(splits) > 1:
        raise DatasetFolderError(f"{folder}: holds the splits {', '.join(splits)}: pick one with --split")
    return wanted or ("train" if "train" in splits else splits[0])


def _json(path: Path) -> dict:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetFolderError(f"{path}: not a readable JSON file: {exc}") from None
    if not isinstance(value, dict):
        raise DatasetFolderError(f"{path}: a JSON object is required, found {type(value).__name__}")
    return value


def _arrow_shards(folder: Path, split: str) -> tuple[Path, ...]:
    """The shards `state.json` lists (save_to_disk writes none for an empty split), each present."""
    if not (folder / "state.json").is_file():
        raise DatasetFolderError(f"{folder}: split {split!r} has no state.json (not a save_to_disk folder)")
    state = _json(folder / "state.json")
    if state.get("_indices_data_files"):  # datasets before 2.x saved a selection as an index over the rows
        raise DatasetFolderError(
            f"{folder}: saved with an indices mapping (an old datasets version); re-save it with a current one"
        )
    listed = state.get("_data_files") or []
    names = [str(entry.get("filename", "")) for entry in listed if isinstance(entry, dict)]
    shards = tuple(folder / plain_name(folder / "state.json", name) for name in names)
    if not shards:
        raise DatasetFolderError(f"{folder}: split {split!r} is empty (no rows)")
    missing = [s.name for s in shards if not s.is_file()]
    if missing:
        raise DatasetFolderError(f"{folder}: split {split!r} lacks the shard(s) state.json lists: {', '.join(missing)}")
    return shards


def plain_name(listing: Path, name: str) -> str:
    """A split or shard name a listing gives: a name inside its folder, never a path out of it."""
    if not name or Path(name).name != name or name in (".", ".."):
        raise DatasetFolderError(f"{listing}: {name!r} is not a file name inside the dataset's folder")
    return name


def _parquet_splits(folder: Path) -> dict[str, list[Path]]:
    """The Hub layout's Parquet shards by split: `<split>-00000-of-00002.parquet`, `<split>.parquet`
    or `<split>/0000.parquet`, anywhere under the folder (links not followed). A folder that also
    holds .txt files is a folder of texts, as before."""
    splits: dict[str, list[Path]] = {}
    for root, _dirs, names in os.walk(folder, followlinks=False):
        for name in names:
            path = Path(root) / name
            if path.suffix.lower() == ".txt":
                return {}
            if path.suffix.lower() == ".parquet" and not path.is_symlink():
                splits.setdefault(_split_of(path, folder), []).append(path)
    return splits


def one_config(folder: Path, split: str, shards: list[Path]) -> tuple[Path, ...]:
    """A split's shards, all from one folder: a repository of several configs (`a/train-*.parquet`,
    `b/train-*.parquet`) is refused naming them rather than read as one corpus."""
    places = sorted({str(s.parent.relative_to(folder)) for s in shards})
    if len(places) > 1:
        raise DatasetFolderError(
            f"{folder}: split {split!r} has shards in several folders ({', '.join(places)}), one per "
            "config: ingest one config's folder"
        )
    return tuple(sorted(shards))


def _split_of(path: Path, folder: Path) -> str:
    shard = HUB_SHARD.fullmatch(path.stem)
    if shard:
        return shard["split"]
    if path.stem.isdigit() and path.parent != folder:  # the Hub's converted layout: train/0000.parquet
        return path.parent.name
    return path.stem


def dataset_records(dataset: DatasetSplit) -> Iterator[tuple[int, Any, str | None]]:
    """(row number, record, None) for every row of the split, numbered 1.. across its shards; a
    shard that cannot be read is refused by name."""
    number = 0
    for shard in dataset.shards:
        try:
            for batch in _batches(shard, dataset.kind):
                for record in batch.to_pylist():
                    number += 1
                    yield number, unmerged(record), None
        except (pa.ArrowException, OSError) as exc:
            kind = "Arrow stream" if dataset.kind == "arrow" else "Parquet"
            raise DatasetFolderError(f"{shard}: not a readable {kind} shard (after row {number}): {exc}") from None


def _batches(shard: Path, kind: str) -> Iterator[pa.RecordBatch]:
    if kind == "parquet":
        yield from pq.ParquetFile(shard).iter_batches(batch_size=BATCH_ROWS)
        return
    with pa.memory_map(str(shard)) as source:
        yield from pa.ipc.open_stream(source)
