"""A text is judged as it is now: a changed text, input, context or genre is new work, the views
keep only the current version's judgments, and texts gone from the source are not scored
(findings 5 and 6 of the reliability pass, and its "removed texts" finding)."""

import json

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from tests.conftest import rows

SLOP = "Certainly! Nestled in the heart of town, this vibrant place plays a vital role. Moreover, I hope this helps."
PLAIN = "The council met on Tuesday and approved the road budget by seven votes to two."


def write(path, records) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def scores(warehouse, rubric):
    return rows(
        warehouse,
        "SELECT text_id, round(score, 9), label, passed, disqualifiers, coverage FROM text_scores "
        "WHERE rubric_id = ? ORDER BY text_id",
        [rubric],
    )


def score_fresh(tmp_path, name, records, rubric, server):
    warehouse = str(tmp_path / name / "w.duckdb")
    ingest_flow(write(tmp_path / f"{name}.jsonl", records), warehouse, "c")
    score_corpus("c", rubric, warehouse, {"base_url": server.base_url})
    return scores(warehouse, rubric)


def test_a_changed_text_is_scored_as_its_new_version_only(tmp_path, thread_judge_server):
    server = thread_judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    before = [{"id": "a", "text": SLOP}, {"id": "b", "text": PLAIN}]
    after = [{"id": "a", "text": PLAIN + " It rained."}, {"id": "b", "text": PLAIN}]
    ingest_flow(write(tmp_path / "v1.jsonl", before), warehouse, "c")
    score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url})
    ingest_flow(write(tmp_path / "v2.jsonl", after), warehouse, "c")
    run = score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url})
    assert run["judged_cells"] == 1  # only the changed text
    assert scores(warehouse, "llm-slop") == score_fresh(tmp_path, "fresh", after, "llm-slop", server)
    assert rows(warehouse, "SELECT count(DISTINCT text_sha256) FROM judgments WHERE text_id = 'a'") == [
        (2,)
    ]  # history kept


def test_a_changed_context_or_genre_is_new_work(tmp_path, thread_judge_server):
    server = thread_judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    grounded = [
        {"id": "g", "text": "The bridge opened in 1932.", "context": "The bridge opened in 1932 after four years."}
    ]
    moved = [{"id": "g", "text": "The bridge opened in 1932.", "context": "The tunnel was dug in 1950."}]
    ingest_flow(write(tmp_path / "v1.jsonl", grounded), warehouse, "c")
    score_corpus("c", "groundedness", warehouse, {"base_url": server.base_url})
    ingest_flow(write(tmp_path / "v2.jsonl", moved), warehouse, "c")
    run = score_corpus("c", "groundedness", warehouse, {"base_url": server.base_url})
    assert run["judged_cells"] == 1
    assert scores(warehouse, "groundedness") == score_fresh(tmp_path, "fresh-context", moved, "groundedness", server)
    # a genre change re-judges too, and coverage never passes 1
    genre = [
        {"id": "g", "text": "The bridge opened in 1932.", "context": "The tunnel was dug in 1950.", "genre": "news"}
    ]
    ingest_flow(write(tmp_path / "v3.jsonl", genre), warehouse, "c")
    assert score_corpus("c", "groundedness", warehouse, {"base_url": server.base_url})["judged_cells"] == 1
    assert rows(warehouse, "SELECT max(coverage) FROM text_scores") == [(1.0,)]
    assert rows(warehouse, "SELECT max(coverage) FROM run_summary") == [(1.0,)]


def test_texts_gone_from_the_source_are_marked_removed_and_not_scored(tmp_path, thread_judge_server):
    server = thread_judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    three = [{"id": i, "text": f"{PLAIN} Item {i}."} for i in ("a", "b", "c")]
    ingest_flow(write(tmp_path / "v1.jsonl", three), warehouse, "c")
    score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url})
    ingest_flow(write(tmp_path / "v2.jsonl", three[:2]), warehouse, "c")
    run = score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url})
    assert (run["planned_cells"], run["judged_cells"]) == (2, 0)
    assert [r[0] for r in scores(warehouse, "llm-slop")] == ["a", "b"]
    assert rows(warehouse, "SELECT text_id FROM texts WHERE removed_at IS NOT NULL") == [("c",)]
    assert rows(warehouse, "SELECT coverage FROM run_summary WHERE run_id = ?", [run["run_id"]]) == [(1.0,)]
    ingest_flow(write(tmp_path / "v3.jsonl", three), warehouse, "c")  # back in the source: back in the corpus
    assert score_corpus("c", "llm-slop", warehouse, {"base_url": server.base_url})["judged_cells"] == 0
    assert [r[0] for r in scores(warehouse, "llm-slop")] == ["a", "b", "c"]


def test_a_new_version_judges_only_its_changed_criteria_and_adopts_the_rest(tmp_path, thread_judge_server):
    from rubricflow.rubrics.algebra import evolve
    from rubricflow.rubrics.formats import dump_yaml
    from rubricflow.rubrics.library import Library

    server = thread_judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    records = [{"id": f"t{i}", "text": SLOP if i % 2 else PLAIN + f" Item {i}."} for i in range(6)]
    ingest_flow(write(tmp_path / "c.jsonl", records), warehouse, "c")
    judge = {"base_url": server.base_url, "strategy": "per_criterion"}
    first = score_corpus("c", "llm-slop", warehouse, judge)
    v1 = Library().bundle("llm-slop").rubric
    v2 = evolve(
        v1,
        [
            {
                "op": "rewrite_criterion",
                "id": "puffery",
                "changes": {"description": "Hype words, and opinions dressed up as facts."},
            }
        ],
    )
    (tmp_path / "v2.yaml").write_text(dump_yaml(v2))
    answered = server.stats()["answered"]
    second = score_corpus("c", str(tmp_path / "v2.yaml"), warehouse, judge)
    assert first["judged_cells"] == 18 and first["adopted_cells"] == 0  # 6 texts x 3 criteria
    assert server.stats()["answered"] - answered == second["calls"] == second["judged_cells"] == 6  # puffery only
    assert second["adopted_cells"] == second["skipped_cells"] == 12
    # The adopted judgments are the first version's, under the new version's hash; the sums stay honest.
    assert rows(
        warehouse,
        "SELECT count(*) FROM judgments a JOIN judgments b ON b.cell_key = a.adopted_from "
        "WHERE a.rubric_hash = ? AND (a.value, a.rationale, a.criterion_id) = (b.value, b.rationale, "
        "b.criterion_id) AND b.rubric_hash = ?",
        [second["rubric_hash"], first["rubric_hash"]],
    ) == [(12,)]
    assert rows(
        warehouse,
        "SELECT calls, adopted_cells, landed_cells, coverage FROM run_summary WHERE run_id = ?",
        [second["run_id"]],
    ) == [(6, 12, 6, 1.0)]
    assert rows(
        warehouse,
        "SELECT count(*), count(DISTINCT text_id) FROM text_scores WHERE rubric_hash = ?",
        [second["rubric_hash"]],
    ) == [(6, 6)]
    # Holistic calls (the default) see the whole rubric, so a changed criterion changes every call.
    holistic = {"base_url": server.base_url}
    score_corpus("c", "llm-slop", warehouse, holistic)
    again = score_corpus("c", str(tmp_path / "v2.yaml"), warehouse, holistic)
    assert again["adopted_cells"] == 0 and again["judged_cells"] == 6
