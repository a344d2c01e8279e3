"""Seed 000's coproduct (R1 + R2, "conditional dispatch"), executed by `score --route` on a mixed
corpus: the seed's own selector (`genre or "general"`, read from its `CoproductRubric` example)
picks each text's rubric, context is only on the RAG texts, and every text is checked against, and
judged by, its own rubric alone (real DuckDB, the offline judge over HTTP, Prefect flow runs)."""

from __future__ import annotations

import re

import rubricflow as rf
from rubricflow.flows.routing import score_routed
from tests.conftest import SHARED, ThreadServer, rows

SEED = (SHARED.parent / "seeds" / "000_c0ea53250dcb8cd9.txt").read_text(encoding="utf-8")
TEXTS = [  # context only on the science (RAG) texts, as a mixed corpus has it
    {"id": "s1", "text": "The bridge opened in 1932.", "context": "The bridge opened in 1932.", "genre": "sci"},
    {"id": "s2", "text": "Tickets cost 3 euros.", "context": "Tickets cost 3 euros.", "genre": "sci"},
    {"id": "g1", "text": "Nestled in the heart of town, the market plays a vital role.", "genre": "general"},
    {"id": "g2", "text": "The council met on Tuesday.", "genre": None},
]
RUBRIC_OF = {"sci": "groundedness", "general": "llm-slop"}  # the seed's rubrics={"sci": ..., "general": ...}


def seed_selector():
    """The seed's `selector=lambda text, genre=None, **kw: genre or "general"`, as written."""
    example = SEED[SEED.index("writing_judge = CoproductRubric(") : SEED.index("Multiplication (product)")]
    source = re.search(r"selector=(lambda .*?),\n", example).group(1)
    return eval(source)  # noqa: S307 (the seed's own example text)


def test_a_mixed_corpus_routes_by_the_seeds_selector_and_each_text_is_judged_by_its_own_rubric(tmp_path):
    assert "Eval(R1 + R2, T) = Eval(R1, T) if predicate(T)\n                   Eval(R2, T) otherwise" in SEED
    select = seed_selector()
    expected = {t["id"]: RUBRIC_OF[select(t["text"], genre=t["genre"])] for t in TEXTS}
    assert expected == {"s1": "groundedness", "s2": "groundedness", "g1": "llm-slop", "g2": "llm-slop"}
    warehouse = rf.Warehouse(tmp_path / "w.duckdb")
    warehouse.ingest(TEXTS, corpus="mixed")
    server = ThreadServer()
    try:  # R1 if genre is "sci", R2 otherwise: the plain rubric is the route's default
        runs = score_routed(
            warehouse.path, "mixed", ["sci=groundedness", "llm-slop"], "genre", {"base_url": server.base_url}
        )
    finally:
        server.stop()
    assert sorted(r["rubric_id"] for r in runs) == ["groundedness", "llm-slop"]
    judged = rows(
        warehouse.path,
        "SELECT DISTINCT c.text_id, r.rubric_id FROM completions c JOIN rubrics r USING (rubric_hash) ORDER BY 1",
    )
    assert dict(judged) == expected and len(judged) == len(TEXTS)  # each text judged once, by its own rubric
    scored = rows(
        warehouse.path,
        "SELECT text_id, rubric_id FROM text_outcomes WHERE route_status = 'routed' AND score IS NOT NULL ORDER BY 1",
    )
    assert dict(scored) == expected


def test_a_selector_no_text_has_a_value_for_is_refused_before_any_call(tmp_path):
    """An outside probe: `--route metadata.chanel` (the texts' key is `channel`) sent every text to
    the default rubric, exit 0: the choices matched nothing, unsaid."""
    import pytest

    from rubricflow.errors import InputError
    from rubricflow.flows.routing import route_corpus

    warehouse = rf.Warehouse(tmp_path / "w.duckdb")
    warehouse.ingest([{**t, "channel": "chat"} for t in TEXTS], corpus="mixed")
    with pytest.raises(InputError, match=r"--route metadata\.chanel: no text of corpus 'mixed' has a value there"):
        route_corpus(warehouse.path, "mixed", ["chat=llm-slop", "writing-quality"], "metadata.chanel")
    routed = route_corpus(warehouse.path, "mixed", ["chat=llm-slop", "writing-quality"], "metadata.channel")
    assert sorted(routed["llm-slop"]) == sorted(t["id"] for t in TEXTS) and routed["writing-quality"] == []
