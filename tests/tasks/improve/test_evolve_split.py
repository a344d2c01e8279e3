"""`improve evolve`'s split and key (N6): three disjoint parts by text, reproducible from the seed,
and an evolution named by every setting that changes its answers."""

import duckdb
import pytest

from rubricflow.tasks.improve.evolve import EvolveError, evolution_id, split
from rubricflow.warehouse import db


@pytest.fixture
def labelled(tmp_path):
    path = tmp_path / "w.duckdb"
    with db.writer(path) as con:
        con.executemany(
            "INSERT INTO labels (corpus_id, text_id, criterion_id, rater, score, source) "
            "VALUES ('c', ?, 'overall', 'human', ?, 'x')",
            [[f"t{i:02d}", i % 5] for i in range(50)],
        )
    con = duckdb.connect(str(path), read_only=True)
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
