"""`score --route` on a mixed corpus: each text is checked against the inputs of the rubric it is
routed to, and only that one, before any route is judged (no flow: the routing step itself)."""

from __future__ import annotations

import pytest

from rubricflow.errors import InputError
from rubricflow.flows.routing import route_corpus
from rubricflow.warehouse import db

from ..conftest import rows

TEXTS = [  # (id, genre, context): context only on the RAG texts
    ("r1", "rag", "The bridge opened in 1932."),
    ("r2", "rag", "Tickets cost 3 euros."),
    ("e1", "essay", None),
    ("e2", "essay", None),
]


def warehouse_of(path, texts):
    with db.writer(path) as con:
        con.execute("INSERT INTO corpora VALUES ('c', 'mixed', '-', $n, 0, current_timestamp, NULL)", {"n": len(texts)})
        for text_id, genre, context in texts:
            con.execute(
                "INSERT INTO texts (corpus_id, text_id, sha256, text, context, genre) VALUES ('c', ?, ?, ?, ?, ?)",
                [text_id, text_id, f"Text {text_id}.", context, genre],
            )
    return path


def test_a_mixed_corpus_routes_with_context_only_where_its_rubric_needs_it(tmp_path):
    warehouse = warehouse_of(tmp_path / "w.duckdb", TEXTS)
    routed = route_corpus(warehouse, "c", ["rag=groundedness", "essay=llm-slop"], "genre")
    assert routed == {"groundedness": ["r1", "r2"], "llm-slop": ["e1", "e2"]}
    assert rows(warehouse, "SELECT count(*) FROM text_routes") == [(4,)]
    # the scoring run of one route checks its own texts (run.texts), not the corpus's others
    from rubricflow.rubrics.compiler import compile_for_scoring
    from rubricflow.rubrics.library import resolve
    from rubricflow.tasks.pipeline.score import check_required_inputs

    grounded = compile_for_scoring(resolve("groundedness"))
    with db.reader(warehouse) as con:
        check_required_inputs(con, "c", grounded, routed["groundedness"])
        with pytest.raises(InputError, match="without one: 'e1', 'e2'"):
            check_required_inputs(con, "c", grounded)


def test_a_routed_text_without_its_rubrics_input_is_refused_naming_route_and_text_before_any_route(tmp_path):
    warehouse = warehouse_of(tmp_path / "w.duckdb", [*TEXTS, ("r3", "rag", None)])
    with pytest.raises(InputError, match=r"--route: the texts routed to groundedness: .*context.*'r3'") as refused:
        route_corpus(warehouse, "c", ["essay=llm-slop", "rag=groundedness"], "genre")
    assert "'e1'" not in str(refused.value)  # the essays need no context
    assert rows(warehouse, "SELECT count(*) FROM text_routes") == [(0,)]  # nothing recorded, nothing judged
