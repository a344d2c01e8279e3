"""Hugging Face datasets as corpora: folders written by the real `datasets` package (save_to_disk,
a DatasetDict, the Hub's Parquet shards) read with pyarrow alone, one split at a time."""

import json
import re
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from rubricflow.errors import InputError
from rubricflow.tasks.loaders.ingest import CorpusError, ingest_corpus
from tests.conftest import rows, run_cli

TEXTS = [f"reply number {i}, with a comma" for i in range(7)]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """One folder of each shape, written once by `datasets` itself (imported here, not at collection:
    each test worker collects every module)."""
    datasets = pytest.importorskip("datasets")
    root = tmp_path_factory.mktemp("hf")
    columns = {"text": TEXTS, "prompt": [f"question {i}" for i in range(7)], "tags": [["a", str(i)] for i in range(7)]}
    train = datasets.Dataset.from_dict(columns, split=datasets.Split.TRAIN)
    test = datasets.Dataset.from_dict({"text": ["held out"], "prompt": ["q"], "tags": [["t"]]})
    train.save_to_disk(str(root / "single"), num_shards=3)
    datasets.DatasetDict({"train": train, "test": test}).save_to_disk(str(root / "dict"))
    datasets.DatasetDict({"test": test, "validation": test}).save_to_disk(str(root / "no-train"))
    empty = datasets.Dataset.from_dict({"text": []})
    datasets.DatasetDict({"train": empty}).save_to_disk(str(root / "empty"))
    hub = root / "hub" / "data"
    hub.mkdir(parents=True)
    for index in range(2):  # the Hub's naming: data/<split>-<index>-of-<count>.parquet
        train.shard(2, index, contiguous=True).to_parquet(str(hub / f"train-{index:05d}-of-00002.parquet"))
    test.to_parquet(str(hub / "test-00000-of-00001.parquet"))
    (root / "hub" / "README.md").write_text("---\nlicense: mit\n---\n# a dataset card, not a text\n")
    for config in ("en", "fr"):  # a repository of two configs, each with its own train split
        (root / "configs" / config).mkdir(parents=True)
        test.to_parquet(str(root / "configs" / config / "train-00000-of-00001.parquet"))
    (root / "neither").mkdir()
    (root / "neither" / "notes.csv").write_text("a,b\n1,2\n")
    return root


def texts(report):
    return [row["text"] for row in pq.read_table(report.parquet).to_pylist()]


def test_a_save_to_disk_folder_reads_every_shard_in_order(folders, tmp_path):
    report = ingest_corpus(folders / "single", tmp_path / "out")
    assert len(list((folders / "single").glob("data-*.arrow"))) == 3
    assert texts(report) == TEXTS and report.rows_ok == 7 and report.split == "train"
    first = pq.read_table(report.parquet).to_pylist()[0]
    assert json.loads(first["metadata"]) == {"prompt": "question 0", "tags": ["a", "0"]}


def test_a_dataset_dict_reads_train_or_the_split_asked_for(folders, tmp_path):
    assert texts(ingest_corpus(folders / "dict", tmp_path / "a")) == TEXTS
    report = ingest_corpus(folders / "dict", tmp_path / "b", split="test", fields={"input": "prompt"})
    assert texts(report) == ["held out"] and report.split == "test"
    assert pq.read_table(report.parquet).to_pylist()[0]["input"] == "q"


def test_the_hub_parquet_layout_matches_what_datasets_itself_reads(folders, tmp_path):
    """The Hub's README.md is the dataset card, not a text; the splits are those `load_dataset` finds."""
    report = ingest_corpus(folders / "hub", tmp_path / "out", limit=5)
    assert texts(report) == TEXTS[:5]
    loaded = pytest.importorskip("datasets").load_dataset(str(folders / "hub"), cache_dir=str(tmp_path / "cache"))
    assert sorted(loaded) == ["test", "train"]
    assert texts(ingest_corpus(folders / "hub", tmp_path / "t", split="test")) == loaded["test"]["text"]
    assert texts(ingest_corpus(folders / "hub", tmp_path / "tr")) == loaded["train"]["text"]


@pytest.mark.parametrize(
    "folder, split, message",
    [
        ("dict", "nope", "dict: no split 'nope'; its splits are train, test"),
        ("no-train", None, "no-train: holds the splits test, validation: pick one with --split"),
        ("empty", None, "split 'train' is empty (no rows)"),
        ("neither", None, "neither: folder holds no .txt or .md files and is no Hugging Face dataset"),
        ("single", "test", "a single dataset of split 'train', not 'test'"),
        ("configs", None, "split 'train' has shards in several folders (en, fr), one per config"),
    ],
)
def test_a_split_that_cannot_be_read_is_one_line_naming_the_choices(folders, tmp_path, folder, split, message):
    with pytest.raises(InputError, match=re.escape(message)) as caught:
        ingest_corpus(folders / folder, tmp_path / "out", split=split)
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "out" / "texts.parquet").exists()


def test_an_old_save_with_an_indices_mapping_or_a_shard_outside_the_folder_is_refused(folders, tmp_path):
    """Old `datasets` wrote a selection as all rows plus an index file: reading the rows alone would
    load texts the dataset did not hold."""
    old = tmp_path / "old"
    old.mkdir()
    state = json.loads((folders / "dict" / "train" / "state.json").read_text())
    (old / "state.json").write_text(json.dumps(state | {"_indices_data_files": [{"filename": "indices.arrow"}]}))
    with pytest.raises(InputError, match="saved with an indices mapping"):
        ingest_corpus(old, tmp_path / "out")
    (old / "state.json").write_text(json.dumps(state | {"_data_files": [{"filename": "../../etc/hostname"}]}))
    with pytest.raises(InputError, match="'../../etc/hostname' is not a file name inside the dataset's folder"):
        ingest_corpus(old, tmp_path / "out")


def test_split_on_a_plain_file_is_refused_not_ignored(tmp_path):
    (tmp_path / "c.jsonl").write_text('{"text": "x"}\n')
    with pytest.raises(CorpusError, match="--split applies to a Hugging Face dataset folder"):
        ingest_corpus(tmp_path / "c.jsonl", tmp_path / "out", split="train")


def test_reading_needs_no_datasets_import(folders, tmp_path):
    """pyarrow alone: the loader never imports `datasets` (seconds of start-up, an optional package)."""
    code = (
        "import sys; from rubricflow.tasks.loaders.ingest import ingest_corpus; "
        f"r = ingest_corpus({str(folders / 'dict')!r}, {str(tmp_path / 'o')!r}, split='test'); "
        "assert 'datasets' not in sys.modules, 'datasets imported'; print(r.rows_ok)"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "1\n"


def test_rubricflow_ingest_loads_the_split_into_the_warehouse(folders, tmp_path):
    result = run_cli(tmp_path, "ingest", str(folders / "dict"), "-c", "hf", "--split", "test")
    assert result.returncode == 0, result.stderr
    assert "corpus hf (split test): 1 texts loaded" in result.stdout
    assert rows(tmp_path / "w.duckdb", "SELECT text FROM texts WHERE corpus_id = 'hf'") == [("held out",)]
    bad = run_cli(tmp_path, "ingest", str(folders / "no-train"), "-c", "hf2")
    assert bad.returncode == 2 and "pick one with --split" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
