"""The Python API refuses unusable input before any flow starts (no Prefect, no file written):
an empty source, corpus, rubric or warehouse, and a DataFrame column mixing kinds."""

import datetime as dt

import pandas as pd
import pytest

import rubricflow as rf

TEXT = "The council met on Tuesday and approved the road budget by seven votes to two."


def test_an_empty_source_corpus_rubric_or_warehouse_is_refused_before_any_work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # "" was this folder: it was ingested whole
    (tmp_path / "notes.txt").write_text(TEXT)
    with pytest.raises(rf.InputError, match="parameter path is empty"):
        rf.Warehouse("")
    wh = rf.Warehouse(tmp_path / "w.duckdb")
    with pytest.raises(rf.InputError, match="parameter source is empty"):
        wh.ingest("", corpus="c")
    with pytest.raises(rf.InputError, match="parameter corpus is empty"):
        wh.ingest(tmp_path / "notes.txt", corpus=" ")
    with pytest.raises(rf.InputError, match="parameter rubric is empty"):
        wh.score("c", "", rf.Judge())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize(
    ("column", "values", "kind"),
    [
        ("text", [TEXT, 3], "int"),
        ("id", ["a", 2], "int"),
        ("input", ["q", dt.date(2026, 1, 1)], "date"),
        ("text", [TEXT, b"bytes"], "bytes"),
    ],  # fmt: skip
)
def test_a_dataframe_column_of_non_strings_names_the_column_and_row(tmp_path, column, values, kind):
    frame = pd.DataFrame({"id": ["a", "b"], "text": [TEXT, TEXT], "input": ["q", "q"]} | {column: values})
    with pytest.raises(rf.InputError, match=rf"row 2 \(id [^)]+\): column '{column}' holds a {kind} where earlier"):
        rf.Warehouse(tmp_path / "w.duckdb").ingest(frame, corpus="c")
    assert list(tmp_path.iterdir()) == []
