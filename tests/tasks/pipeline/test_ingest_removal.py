"""An ingest that would mark more than half a corpus removed (a source path that read the wrong file
or folder) is refused before anything is written, unless asked; a normal night's churn loads."""

import json

import pytest

from rubricflow.errors import InputError
from rubricflow.tasks.loaders.ingest import ingest_corpus
from rubricflow.tasks.pipeline.ingest import load
from tests.conftest import rows


def _ingest(tmp_path, ids: list[str], allow_removal: bool = False) -> None:
    source = tmp_path / f"{len(ids)}.jsonl"
    source.write_text("".join(json.dumps({"id": i, "text": f"Text {i}."}) + "\n" for i in ids))
    report = ingest_corpus(source, tmp_path / "corpora" / "c")
    load.fn(str(tmp_path / "w.duckdb"), "c", report, allow_removal)  # the flow's task, without Prefect


def _live(tmp_path) -> list[str]:
    return [r[0] for r in rows(tmp_path / "w.duckdb", "SELECT text_id FROM texts WHERE removed_at IS NULL ORDER BY 1")]


def test_an_ingest_removing_most_of_a_corpus_is_refused_unless_asked(tmp_path):
    _ingest(tmp_path, ["a", "b", "c", "d"])
    _ingest(tmp_path, ["a", "b", "x"])  # 2 of 4 removed: half, a night's churn
    with pytest.raises(InputError, match=r"3\.jsonl: this ingest would mark 3 of corpus c's 3 texts removed .*"
                                         r"Nothing was loaded; pass --allow-removal"):  # fmt: skip
        _ingest(tmp_path, ["y", "z", "w"])
    assert _live(tmp_path) == ["a", "b", "x"]
    _ingest(tmp_path, ["y", "z", "w"], allow_removal=True)
    assert _live(tmp_path) == ["w", "y", "z"]


def test_a_limited_read_removes_nothing_and_an_ingest_says_what_it_removed(tmp_path):
    """An outside probe: `ingest --limit 20` of a 30-text corpus printed "20 texts loaded" and marked
    the other 10 removed (a trial read of the first rows is not the source); a re-ingest of a
    25-line head said nothing of the 5 texts it marked removed."""
    from tests.conftest import run_cli

    source = tmp_path / "c.jsonl"
    source.write_text("".join(json.dumps({"id": f"t{i:02}", "text": f"Text {i}."}) + "\n" for i in range(30)))
    assert run_cli(tmp_path, "ingest", "c.jsonl", "-c", "c").returncode == 0
    limited = run_cli(tmp_path, "ingest", "c.jsonl", "-c", "c", "--limit", "20")
    assert limited.returncode == 0 and "20 texts loaded" in limited.stdout and "removed" not in limited.stdout
    assert len(_live(tmp_path)) == 30
    source.write_text("".join(source.read_text().splitlines(keepends=True)[:25]))
    head = run_cli(tmp_path, "ingest", "c.jsonl", "-c", "c")
    assert head.returncode == 0 and "5 texts the source no longer holds marked removed" in " ".join(head.stdout.split())
    assert len(_live(tmp_path)) == 25
