"""`improve evolve`'s split and key (N6): three disjoint parts by text, reproducible from the seed,
and an evolution named by every setting that changes its answers; rubrify's train / validation split
(seed 001) for rubricflow.rubrify's evolve_rubric."""

import duckdb
import pytest

from rubricflow.tasks.improve.evolve import EvolveError, evolution_id, split, train_validation_split
from rubricflow.warehouse import db
from tests.conftest import SHARED


def labels_of(tmp_path, texts: int) -> duckdb.DuckDBPyConnection:
    """A warehouse whose corpus 'c' has that many texts labelled 'overall' by 'human'."""
    path = tmp_path / f"w{texts}.duckdb"
    with db.writer(path) as con:
        con.executemany(
            "INSERT INTO labels (corpus_id, text_id, criterion_id, rater, score, source) "
            "VALUES ('c', ?, 'overall', 'human', ?, 'x')",
            [[f"t{i:02d}", i % 5] for i in range(texts)],
        )
    return duckdb.connect(str(path), read_only=True)


@pytest.fixture
def labelled(tmp_path):
    con = labels_of(tmp_path, 50)
    yield con
    con.close()


def test_three_disjoint_parts_reproducible_from_the_seed(labelled):
    parts = split(labelled, "c", ["human"], "overall", 7, 0.2, 0.2)
    assert (len(parts.train), len(parts.validation), len(parts.test)) == (30, 10, 10)
    train, validation, test = map(set, (parts.train, parts.validation, parts.test))
    assert not (train & validation or train & test or validation & test) and len(train | validation | test) == 50
    assert split(labelled, "c", ["human"], "overall", 7, 0.2, 0.2) == parts
    assert split(labelled, "c", ["human"], "overall", 8, 0.2, 0.2).test != parts.test
    with pytest.raises(EvolveError, match="every part non-empty"):
        split(labelled, "c", ["human"], "overall", 7, 0.5, 0.5)


def test_another_reflection_model_or_split_is_another_evolution():
    base = ("c", "rubric", "judge", "human:overall", 0, 0.2, 0.2, "reflection-a")
    assert evolution_id(*base) == evolution_id(*base)
    assert evolution_id(*base[:-1], "reflection-b") != evolution_id(*base)
    assert evolution_id(*base[:5], 0.2, 0.3, base[-1]) != evolution_id(*base)


SEED = (SHARED.parent / "seeds" / "001_646671bcea772b80.txt").read_text(encoding="utf-8")


def test_rubrifys_split_is_train_and_validation_of_any_size(tmp_path):
    """Seed 001: "evaluated on a training minibatch, accepted if improved, then tracked on a validation set",
    `train_split=0.7`, advice for "fewer than ~10 examples": `1 - train_split` validates, nothing is held
    out for test, and a validation part left empty is the training texts (rubrify's fallback). Before: a
    third part for test, and fewer than 10 texts refused."""
    assert "evaluated on a training minibatch, accepted if improved, then tracked on a validation set" in SEED
    assert "train_split=0.7" in SEED and "with fewer than ~10 examples" in SEED
    sizes = {}
    for texts in (20, 8, 2, 1):
        con = labels_of(tmp_path, texts)
        parts = train_validation_split(con, "c", ["human"], "overall", 42, 1 - 0.7)
        assert parts == train_validation_split(con, "c", ["human"], "overall", 42, 1 - 0.7)  # seeded
        assert set(parts.train) | set(parts.validation) == {f"t{i:02d}" for i in range(texts)}
        sizes[texts] = (len(parts.train), len(parts.validation), len(parts.test))
        everything = train_validation_split(con, "c", ["human"], "overall", 42, 0.0)  # train_split=1.0
        assert everything.validation == everything.train and len(everything.train) == texts
        con.close()
    assert sizes == {20: (14, 6, 0), 8: (5, 3, 0), 2: (1, 1, 0), 1: (1, 1, 0)}  # 1 text: it trains and validates
    with (
        labels_of(tmp_path, 3) as con,
        pytest.raises(EvolveError, match="no text of corpus 'c' has a label by human on 'fluency'"),
    ):
        train_validation_split(con, "c", ["human"], "fluency", 42, 0.3)
