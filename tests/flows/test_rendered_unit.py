"""What the judge sees is rendered once (rubrics/render.Rendering) and its fingerprint is in the cell
key: a wording change re-judges exactly the call units whose rendering changed, a version bump that
changes nothing rendered adopts every landed cell, and the views never mix old and new wordings."""

import json

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.rubrics import render
from tests.conftest import rows

SLOP = "Certainly! Nestled in the heart of town, this vibrant place plays a vital role. Moreover, I hope this helps."
PLAIN = "The council met on Tuesday and approved the road budget by seven votes to two."


def test_a_wording_change_rejudges_exactly_its_units_and_a_bare_version_bump_adopts_all(
    tmp_path, thread_judge_server, monkeypatch
):
    from rubricflow.rubrics.formats import dump_yaml
    from rubricflow.rubrics.library import Library

    server = thread_judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    source = tmp_path / "c.jsonl"
    source.write_text("".join(json.dumps({"id": f"t{i}", "text": SLOP if i % 2 else PLAIN}) + "\n" for i in range(4)))
    ingest_flow(str(source), warehouse, "c")
    judge = {"base_url": server.base_url, "strategy": "per_criterion"}
    first = score_corpus("c", "llm-slop", warehouse, judge)
    assert first["judged_cells"] == 12  # 4 texts x 3 criteria

    # A version bump alone: the rubric hash changes, nothing rendered does, so every cell is adopted.
    v1 = Library().bundle("llm-slop").rubric
    bumped = v1.model_copy(update={"metadata": v1.metadata.model_copy(update={"version": "9.9.9"})})
    (tmp_path / "bumped.yaml").write_text(dump_yaml(bumped))
    answered = server.stats()["answered"]
    same = score_corpus("c", str(tmp_path / "bumped.yaml"), warehouse, judge)
    assert same["rubric_hash"] != first["rubric_hash"]
    assert same["adopted_cells"] == 12 and same["judged_cells"] == 0 and server.stats()["answered"] == answered

    # The renderer words one criterion differently (a new rubricflow, the same rubric file): only its
    # units are asked again; without the fingerprint in the key, nothing would be.
    plain_criterion = render._render_criterion

    def reworded(rubric, criterion):
        lines = plain_criterion(rubric, criterion)
        return lines + ["- Read the whole text before scoring."] if criterion.id == "puffery" else lines

    monkeypatch.setattr(render, "_render_criterion", reworded)
    again = score_corpus("c", "llm-slop", warehouse, judge)
    assert again["judged_cells"] == again["calls"] == 4 and server.stats()["answered"] - answered == 4
    assert again["skipped_cells"] == 8
    # Both wordings' cells are kept; the views see the new one only (one judgment per text and criterion).
    assert rows(
        warehouse,
        "SELECT count(DISTINCT unit_hash) FROM completions WHERE unit_id = 'puffery' AND rubric_hash = ?",
        [first["rubric_hash"]],
    ) == [(2,)]
    assert rows(
        warehouse,
        "SELECT max(judgments), max(coverage) FROM criterion_scores JOIN text_scores USING (rubric_hash, text_id) "
        "WHERE rubric_hash = ?",
        [first["rubric_hash"]],
    ) == [(1, 1.0)]
    assert rows(
        warehouse,
        "SELECT count(*) FROM current_judgments WHERE rubric_hash = ? AND criterion_id = 'puffery'",
        [first["rubric_hash"]],
    ) == [(4,)]
    assert score_corpus("c", "llm-slop", warehouse, judge)["judged_cells"] == 0  # and it stays landed


def test_a_rubric_with_an_xml_surface_and_confidence_is_judged_through_the_flow(tmp_path, thread_judge_server):
    """The surface policy reaches the judge: the offline judge is sent the <LLM_JUDGE_SPEC> system
    text and a schema with a confidence per criterion, which lands in judgments.confidence."""
    import yaml

    from rubricflow.rubrics.formats import dump_yaml
    from rubricflow.rubrics.library import Library

    data = yaml.safe_load(dump_yaml(Library().bundle("llm-slop").rubric))
    data["surface"] = {"input_codec": "xml", "confidence": True, "criterion_focus": "full"}
    (tmp_path / "xml.yaml").write_text(yaml.safe_dump(data))
    server = thread_judge_server()
    warehouse = str(tmp_path / "w.duckdb")
    source = tmp_path / "c.jsonl"
    source.write_text("".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate((SLOP, PLAIN))))
    ingest_flow(str(source), warehouse, "c")
    run = score_corpus("c", str(tmp_path / "xml.yaml"), warehouse, {"base_url": server.base_url})
    assert run["judged_cells"] == 2
    confidences = rows(warehouse, "SELECT confidence FROM judgments WHERE run_id = ?", [run["run_id"]])
    assert len(confidences) == 6 and all(c is not None and 0.5 <= c <= 1 for (c,) in confidences)
    [(raw,)] = rows(warehouse, "SELECT any_value(raw_response) FROM completions WHERE run_id = ?", [run["run_id"]])
    assert '"confidence"' in raw
