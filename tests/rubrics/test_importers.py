import hashlib
import json

import pytest

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.formats import RubricImportError, load_rubric, load_rubrics
from rubricflow.rubrics.importers.paperbench import canonical_sha256
from rubricflow.rubrics.model import BinaryScale, NominalScale, OrdinalScale
from rubricflow.rubrics.scoring import aggregate, verdict

from ..conftest import SHARED, SHARED_RUBRICS, TEST_DATA


def test_anti_slop_xml_keeps_regexes_patterns_and_constraints():
    r = load_rubric(SHARED_RUBRICS / "secemp9/anti_slop_rubric.xml")
    assert r.metadata.id == "anti-llmy" and r.metadata.version == "1.0.0"
    assert [c.id for c in r.criteria] == ["C1", "C2", "C3", "C4", "C5"]
    assert r.criteria[0].title == "Neutrality & Tone" and r.criteria[0].weight == 3
    assert isinstance(r.criteria[0].scale, OrdinalScale) and r.criteria[0].scale.domain() == [0, 1, 2, 3]
    assert len(r.patterns) == 27 and all(p.flags == "i" for p in r.patterns)
    # raw `<` inside a regex survives the lenient parse byte for byte
    assert r.pattern("fake_ref_reuse").regex == "<ref name=.*?/>.*?<ref name=.*?>"
    assert r.pattern("named_ref_in_refs").regex.startswith("(&lt;|<)references(>|&gt;)")
    assert r.pattern("emoji").regex.endswith(r"\x{1F300}-\x{1FAFF}]")
    assert {d.id: (d.kind, d.patterns) for d in r.disqualifiers}["DQ2"] == (
        "pattern", ("oaicite", "turn_tokens", "utm_openai", "attr_json"))
    because = next(c for c in r.output.constraints if c.field == "rationale")
    assert (because.prefix, because.min_words, because.max_words, because.suffix) == ("BECAUSE:", 35, 35, ".")
    fix = next(c for c in r.output.constraints if c.field == "advice")
    assert (fix.prefix, fix.max_chars, fix.min_items, fix.separator) == ("FIX:", 220, 5, ";")
    assert len(r.advice) == 8 and r.advice[0].when == ("puffery_words", "editorialize")
    assert len(r.validation) == 3
    bundle = compile_or_raise(r)
    assert bundle.profile == "detection" and all(ok for _, ok in bundle.lattice)


def test_zinsser_xml_genres_labels_and_notes():
    r = load_rubric(SHARED_RUBRICS / "secemp9/on_writing_well_v1.xml")
    assert len(r.criteria) == 19 and r.criterion("C1").scale.domain() == [0, 1, 2, 3, 4, 5]
    assert r.criterion("G_SCI").genre == ("science_tech",) and r.criterion("G_SCI").scale.domain() == [0, 1, 2, 3]
    assert len(r.active_criteria()) == 12 and len(r.active_criteria("travel")) == 13
    assert "When <context> provided" in r.criterion("C10").notes
    assert r.criterion("C5").mechanical_rules[1].startswith("Passive proxy")
    assert [(lab.label, lab.min) for lab in r.scoring.labels][:2] == [("Publish-ready", 0.9), ("Strong draft (light copyedit)", 0.75)]
    assert [d.kind for d in r.disqualifiers] == ["judge"] * 4
    assert [i.name for i in r.inputs] == ["candidate_text", "context", "genre", "goal"]


def test_waza_markdown_goldens_and_body():
    r = load_rubric(SHARED_RUBRICS / "waza/groundedness.md")
    assert r.metadata.id == "groundedness" and isinstance(r.criteria[0].scale, BinaryScale)
    assert [(g.name, g.expected) for g in r.goldens] == [
        ("grounded-answer-passes", "pass"), ("unsupported-claim-fails", "fail"), ("partial-answer-still-grounded", "pass")]
    assert r.goldens[0].context.startswith("NASA article") and "## What to check" in r.instructions[0]


def test_not_a_rubric_is_refused_with_reason():
    with pytest.raises(RubricImportError, match="completeness_rubric.md: not a rubric: .*no name, scale or criteria"):
        load_rubrics(SHARED_RUBRICS / "secemp9/completeness_rubric.md")


def test_openai_evals_choices_and_scores():
    closedqa = load_rubric(SHARED_RUBRICS / "openai_evals/closedqa.yaml")
    scale = closedqa.criteria[0].scale
    assert isinstance(scale, NominalScale) and scale.unit("Y") == 1.0 and scale.unit("N") == 0.0
    assert "{completion}" in closedqa.instructions[1]
    fact = load_rubric(SHARED_RUBRICS / "openai_evals/fact.yaml")
    assert fact.criteria[0].scale.domain() == ["A", "B", "C", "D", "E"] and fact.criteria[0].scale.unit("D") is None


def test_prometheus_each_line_is_a_rubric():
    rubrics = load_rubrics(SHARED_RUBRICS / "prometheus/score_rubrics_sample.jsonl")
    assert len(rubrics) == 40 and len({r.metadata.id for r in rubrics}) == 40
    first = rubrics[0]
    assert first.metadata.id == "planning-travel-plan-0" and first.metadata.tags == ("planning", "travel_plan")
    assert first.criteria[0].scale.domain() == [1, 2, 3, 4, 5]
    assert first.criteria[0].scale.anchors[4].description.startswith("The response presents a well-thought-out")


def test_healthbench_signed_points_score_like_simple_evals():
    path = SHARED_RUBRICS / "healthbench/2025-05-07-06-14-12_oss_eval_example_1.json"
    raw = json.loads(path.read_text())
    r = load_rubric(path)
    points = [item["points"] for item in raw["rubrics"]]
    assert [c.points for c in r.criteria] == points and any(p < 0 for p in points)
    assert r.criteria[0].tags == tuple(raw["rubrics"][0]["tags"])
    met = {c.id: i % 2 for i, c in enumerate(r.criteria)}  # every other item met
    expected = sum(p for i, p in enumerate(points) if i % 2) / sum(p for p in points if p > 0)
    expected = min(1.0, max(0.0, expected))
    assert verdict(r, met).score == pytest.approx(expected)


def test_paperbench_tree_matches_hand_graded_scores_at_every_node():
    # the graded file is a later revision of rubric.json (a few weights and leaves differ), so it is
    # imported as its own rubric: its human grades become a golden with per-leaf expected scores
    path = SHARED_RUBRICS / "paperbench/semantic-self-consistency.expected_result.json"
    graded = json.loads(path.read_text())
    r = load_rubric(path)
    leaves = {}

    def collect(node):
        if node["sub_tasks"]:
            for child in node["sub_tasks"]:
                collect(child)
        else:
            leaves[node["id"]] = node["score"]
    collect(graded)
    units = {cid: float(score) for cid, score in leaves.items()}

    def check(node):
        if node["sub_tasks"]:
            as_root = r.model_copy(update={"scoring": r.scoring.model_copy(update={"root": node["id"]})})
            assert aggregate(as_root, units) == pytest.approx(node["score"]), node["id"]
            for child in node["sub_tasks"]:
                check(child)
    check(graded)
    assert len(r.groups) > 5 and dict(r.goldens[0].expected_scores) == {k: int(v) for k, v in leaves.items()}
    assert verdict(r, r.goldens[0].expected_scores).score == pytest.approx(graded["score"])


def test_paperbench_envelope_sha_is_verified(tmp_path):
    tree = json.loads((SHARED_RUBRICS / "paperbench/nested_hex_flags.json").read_text())
    envelope = {"paper_sha256": hashlib.sha256(b"paper").hexdigest(), "rubric_sha256": canonical_sha256(tree),
                "generator": "rubric-gen 0.3", "audit": {"human_reviewed": True}, "rubric": tree}
    good = tmp_path / "good.json"
    good.write_text(json.dumps(envelope))
    r = load_rubric(good)
    assert r.metadata.provenance["generator"] == "rubric-gen 0.3" and r.metadata.provenance["audit.human_reviewed"] is True
    envelope["rubric"]["sub_tasks"][0]["weight"] = 5
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(envelope))
    with pytest.raises(RubricImportError, match="rubric_sha256: .* does not match"):
        load_rubric(bad)


def test_forge_yaml_anchors_thresholds_and_negative_criteria():
    r = load_rubric(TEST_DATA / "forge_code_review.yaml")
    assert r.metadata.id == "code-review-quality" and r.metadata.version == "2.1.0"
    actionable = r.criterion("actionable")
    assert actionable.importance == "essential" and actionable.weight == 2.0 and actionable.pass_threshold == 0.5
    assert [(e.score, e.text[:4]) for e in actionable.examples] == [(1, "This"), (5, "Use ")]
    assert r.criterion("kind").scale.domain() == [1, 2, 3, 4, 5]
    assert r.disqualifiers[0].kind == "pattern" and len(r.disqualifiers[0].patterns) == 2
    assert r.scoring.pass_threshold == 0.625 and r.scoring.essential_minimum == 0.5
    compile_or_raise(r)
    v = verdict(r, {"actionable": 5, "kind": 1})
    assert v.score == pytest.approx((2 * 1.0 + 1 * 0.0) / 3) and v.passed is True
    assert verdict(r, {"actionable": 2, "kind": 5}).passed is False  # essential below its minimum
    assert verdict(r, {"actionable": 5, "kind": 5}, matched_patterns={"leaks-secret_p2"}).disqualified == ("leaks-secret",)


def test_shared_readme_is_present():
    assert (SHARED / "README.md").is_file()
