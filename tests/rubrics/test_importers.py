import hashlib
import json
import re
from pathlib import Path

import pytest

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.formats import RubricImportError, load_rubric, load_rubrics
from rubricflow.rubrics.importers.paperbench import canonical_sha256
from rubricflow.rubrics.model import BinaryScale, NominalScale, OrdinalScale
from rubricflow.rubrics.scoring import aggregate, verdict

from ..conftest import SHARED, SHARED_RUBRICS, TEST_DATA, user_rubric_files


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
        "pattern",
        ("oaicite", "turn_tokens", "utm_openai", "attr_json"),
    )
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
    assert [(lab.label, lab.min) for lab in r.scoring.labels][:2] == [
        ("Publish-ready", 0.9),
        ("Strong draft (light copyedit)", 0.75),
    ]
    assert [d.kind for d in r.disqualifiers] == ["judge"] * 4
    assert [i.name for i in r.inputs] == ["candidate_text", "context", "genre", "goal"]


def test_waza_markdown_goldens_and_body():
    r = load_rubric(SHARED_RUBRICS / "waza/groundedness.md")
    assert r.metadata.id == "groundedness" and isinstance(r.criteria[0].scale, BinaryScale)
    assert [(g.name, g.expected) for g in r.goldens] == [
        ("grounded-answer-passes", "pass"),
        ("unsupported-claim-fails", "fail"),
        ("partial-answer-still-grounded", "pass"),
    ]
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


def test_healthbench_as_released_one_example_a_line_imports_a_rubric_a_line(tmp_path):
    """Issue 26: HealthBench ships as JSONL (`2025-05-07-06-14-12_oss_eval.jsonl`, 5,000 examples a
    line; simple-evals reads it so); every `.jsonl` was read as Prometheus records and refused."""
    examples = sorted((SHARED_RUBRICS / "healthbench").glob("*.json"))
    released = tmp_path / "2025-05-07-06-14-12_oss_eval.jsonl"
    released.write_text("".join(json.dumps(json.loads(e.read_text())) + "\n" for e in examples))
    one_by_one = [load_rubric(e) for e in examples]
    assert [(r.metadata.id, r.criteria) for r in load_rubrics(released)] == [
        (r.metadata.id, r.criteria) for r in one_by_one
    ]
    released.write_text(released.read_text() + '{"prompt_id": "x", "rubrics": [{"criterion": "c"}]}\n')
    with pytest.raises(RubricImportError, match=r"line 6: field rubrics\[0\]: needs `criterion` and `points`"):
        load_rubrics(released)


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
    envelope = {
        "paper_sha256": hashlib.sha256(b"paper").hexdigest(),
        "rubric_sha256": canonical_sha256(tree),
        "generator": "rubric-gen 0.3",
        "audit": {"human_reviewed": True},
        "rubric": tree,
    }
    good = tmp_path / "good.json"
    good.write_text(json.dumps(envelope))
    r = load_rubric(good)
    assert (
        r.metadata.provenance["generator"] == "rubric-gen 0.3" and r.metadata.provenance["audit.human_reviewed"] is True
    )
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
    assert verdict(r, {"actionable": 5, "kind": 5}, matched_patterns={"leaks-secret_p2"}).disqualified == (
        "leaks-secret",
    )


def test_shared_readme_is_present():
    assert (SHARED / "README.md").is_file()


OURS = TEST_DATA / "rubrics"


def test_a_pattern_re2_cannot_run_is_kept_with_a_warning_not_refused():
    r = load_rubric(OURS / "xml/lookahead_spec.xml")
    bundle = compile_or_raise(r)
    flagged = {w.path for w in bundle.warnings if w.code == "W_REGEX_BACKTRACKING"}
    assert flagged == {"patterns[0].regex", "patterns[2].regex"}  # the look-ahead and the look-behind, not `perhaps`


def test_a_pattern_no_engine_reads_is_still_refused(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "metadata: {id: bad}\ngoal: g\npatterns: [{id: open, regex: '(unclosed'}]\n"
        "criteria: [{id: a, patterns: [open]}]\n"
    )
    with pytest.raises(Exception, match="E_REGEX|not a valid regex"):
        compile_or_raise(load_rubric(bad))


def test_evaluator_yaml_levels_weights_and_an_umbrella_over_sibling_files():
    coherence = load_rubric(OURS / "evaluator_yaml/coherence.yaml")
    assert [(c.id, c.weight, c.scale.domain()) for c in coherence.criteria] == [
        ("logical_flow", 0.6, [1, 2, 3, 4, 5]),
        ("consistency", 0.4, [1, 2, 3, 4, 5]),
    ]
    assert coherence.criteria[0].scale.anchors[1].description == "Some connections, frequent unexplained jumps."
    assert coherence.scoring.pass_threshold == 0.5  # threshold 3 on 1..5
    assert [i.name for i in coherence.inputs] == ["query", "response"] and coherence.metadata.version == "1.2.0"
    umbrella = load_rubric(OURS / "evaluator_yaml/rag_quality.yaml")
    assert [c.id for c in umbrella.criteria] == ["coherence.logical_flow", "coherence.consistency", "fluency.fluency"]
    assert {g.id: (g.weight, g.children) for g in umbrella.groups} == {
        "coherence": (0.6, ("coherence.logical_flow", "coherence.consistency")),
        "fluency": (0.4, ("fluency.fluency",)),
    }
    # the tree aggregates like any grouped rubric: 0.6 * mean(coherence) + 0.4 * fluency
    scores = {"coherence.logical_flow": 5, "coherence.consistency": 3, "fluency.fluency": 1}
    coherent = (0.6 * 1.0 + 0.4 * 0.5) / 1.0
    assert aggregate(umbrella, {k: umbrella.criterion(k).scale.unit(v) for k, v in scores.items()}) == pytest.approx(
        0.6 * coherent + 0.4 * 0.0
    )


def test_an_umbrella_whose_sibling_is_missing_or_includes_itself_names_the_file(tmp_path):
    (tmp_path / "top.yaml").write_text("name: top\nsub_rubrics: [{file: gone.yaml, weight: 1}]\n")
    with pytest.raises(
        RubricImportError, match=r"top.yaml: field sub_rubrics\[0\]: sub-rubric file gone.yaml not found"
    ):
        load_rubric(tmp_path / "top.yaml")
    (tmp_path / "loop.yaml").write_text("name: loop\nsub_rubrics: [loop.yaml]\n")
    with pytest.raises(RubricImportError, match="includes itself"):
        load_rubric(tmp_path / "loop.yaml")


def test_an_evals_registry_file_with_several_specs_imports_as_several_rubrics():
    rubrics = load_rubrics(OURS / "openai_evals/multi_spec.yaml")
    assert [r.metadata.id for r in rubrics] == ["relevance", "conciseness", "quality-1to5", "matches-ideal"]
    assert rubrics[2].criteria[0].scale.domain() == ["1", "2", "3", "4", "5"]
    assert [c.score for c in rubrics[3].criteria[0].scale.categories] == [1.0, 0.5, 0.0]
    with pytest.raises(RubricImportError, match="holds 4 rubrics"):
        load_rubric(OURS / "openai_evals/multi_spec.yaml")


def test_promptfoo_model_graded_assertions_become_criteria():
    config = load_rubric(OURS / "promptfoo/promptfooconfig.yaml")
    assert [(c.id, c.scale.kind) for c in config.criteria] == [
        ("politeness", "binary"),
        ("llm-rubric-2", "binary"),
        ("next-steps", "ordinal"),
    ]  # the repeat is one criterion
    assert "must NOT" in config.criteria[1].description and config.criteria[2].pass_threshold == 0.7
    asserts = load_rubric(OURS / "promptfoo/asserts.yaml")
    assert [c.weight for c in asserts.criteria] == [2.0, 1.0]  # the javascript assertion is promptfoo's own check


def test_flask_skill_sets_group_skills_by_ability():
    r = load_rubric(OURS / "flask/skillset.json")
    assert [c.id for c in r.criteria] == ["logical-correctness", "logical-efficiency", "factuality", "readability"]
    assert {g.title: g.children for g in r.groups}["Logical Thinking"] == ("logical-correctness", "logical-efficiency")
    assert r.criterion("factuality").scale.anchors[4].description == "Accurate and supported."
    mapping = load_rubric(OURS / "flask/skills.yaml")
    assert mapping.criterion("conciseness").scale.anchors[0].description == "Bloated; the point is buried."


def test_a_flask_evaluation_prompt_reads_each_skill_block(tmp_path):
    """Issue 26: FLASK's own grading prompt (`[Skill 1. Name]`, the question, `Score 1:` ..
    `Score 5:`, then `[Instruction]` slots) was read as Markdown without a rubric."""
    r = load_rubric(OURS / "flask/evaluation-prompt-layout.txt")
    assert [(c.id, c.title) for c in r.criteria] == [
        ("logical-robustness", "Logical Robustness"),
        ("conciseness", "Conciseness"),
    ]
    robust, concise = r.criteria
    assert robust.description.startswith("Does the answer reason in steps") and robust.scale.domain() == [1, 2, 3, 4, 5]
    assert concise.scale.anchors[4].description == "Every sentence earns its place."  # [Instruction] is not a level
    assert r.goal.startswith("Please review") and r.metadata.provenance["slots"] == "question, answer"
    broken = tmp_path / "flask.txt"
    broken.write_text("Rate it.\n\n[Skill 1. Harmlessness]\nIs it safe?\n\n[Instruction]\n{question}\n")
    with pytest.raises(RubricImportError, match="skill 'Harmlessness' has no `Score 1:`"):
        load_rubric(broken)


def test_g_eval_prompts_keep_scale_definition_steps_and_slots():
    coherence = load_rubric(OURS / "geval/coh_detailed.txt")
    c = coherence.criteria[0]
    assert (c.id, c.title, c.scale.domain()) == ("coherence", "Coherence", [1, 2, 3, 4, 5])
    assert c.description.startswith("the collective quality of all sentences")
    assert any("(1) Read the news article" in i for i in coherence.instructions)
    assert coherence.metadata.provenance["slots"] == "Document, Summary"
    fluency = load_rubric(OURS / "geval/flu_detailed.txt")
    assert fluency.criteria[0].scale.domain() == [1, 2, 3]
    assert fluency.criteria[0].scale.anchors[0].description.startswith("Poor.")


def test_a_g_eval_prompt_with_inline_levels_and_no_steps_imports():
    """Issue 26: G-Eval's own SummEval fluency prompt (levels under the criterion, no `Evaluation
    Steps:`) was refused as Markdown that is not a rubric."""
    fluency = load_rubric(OURS / "geval/summeval/flu_detailed.txt")
    c = fluency.criteria[0]
    assert (c.id, c.scale.domain()) == ("fluency", [1, 2, 3])
    assert [a.description.split(".")[0] for a in c.scale.anchors] == ["Poor", "Fair", "Good"]
    assert fluency.metadata.provenance["slots"] == "Summary"


def test_a_prometheus_score_rubric_block_inside_a_grading_prompt():
    r = load_rubric(OURS / "prometheus/grading_prompt.txt")
    assert r.criteria[0].description == "Does the response stay honest about the limits of what it knows?"
    assert r.criteria[0].scale.domain() == [1, 2, 3, 4, 5]
    assert r.criteria[0].scale.anchors[4].description.startswith("The response is consistently honest")


def test_the_hhh_pairs_carry_prometheus_blocks_this_importer_reads(tmp_path):
    """Real prompts: every chosen/rejected prompt of the HHH pairs embeds a `###Score Rubrics:` block."""
    pairs = json.loads((SHARED / "calibration/hhh_alignment/hhh_alignment_eval.json").read_text())
    for i, pair in enumerate(pairs[:40]):
        path = tmp_path / f"hhh-{i}.txt"
        path.write_text(pair["chosen_instruction"], encoding="utf-8")
        r = load_rubric(path)
        assert r.criteria[0].scale.domain() == [1, 2, 3, 4, 5] and r.criteria[0].description


def test_promptfoo_layouts_from_real_configs_and_the_documentation():
    tweets = load_rubric(OURS / "promptfoo/tweets-layout.yaml")
    assert [c.scale.kind for c in tweets.criteria] == ["binary"] * 3  # promptfoo's own checks left out
    documented = load_rubric(OURS / "promptfoo/documented-layouts.yaml")
    by_id = {c.id: c for c in documented.criteria}
    assert (
        by_id["professionalism"].pass_threshold == 0.8 and "- Verify that all" in by_id["professionalism"].description
    )
    assert by_id["clarity"].weight == 2.0 and any("verification email" in c.description for c in documented.criteria)


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ("threshold: '0.8'", "`threshold` must be a number, found '0.8'"),
        ("threshold: 4", "`threshold` 4 is outside 0 to 1"),
        ("weight: -1", "`weight` -1 is outside 0 or more"),
        ("weight: heavy", "`weight` must be a number, found 'heavy'"),
        ("value: file://missing.md", "`value` names file://missing.md, which cannot be read"),
    ],
)
def test_a_promptfoo_field_of_the_wrong_type_is_an_error_naming_it(tmp_path, field, message):
    """Issue 26: a threshold or weight of the wrong type was dropped silently (and 4 was clamped to 1)."""
    path = tmp_path / "promptfooconfig.yaml"
    value = "" if field.startswith("value") else "\n        value: Is polite"
    path.write_text(f"tests:\n  - assert:\n      - type: g-eval{value}\n        {field}\n")
    with pytest.raises(RubricImportError, match=re.escape(message)):
        load_rubric(path)


def test_a_promptfoo_rubric_given_as_a_file_is_read_beside_the_config(tmp_path):
    (tmp_path / "rubrics").mkdir()
    (tmp_path / "rubrics" / "clarity.md").write_text("The answer is clear and names the next step.\n")
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text("tests:\n  - assert:\n      - type: llm-rubric\n        value: file://rubrics/clarity.md\n")
    assert load_rubric(path).criteria[0].description == "The answer is clear and names the next step."


def test_a_promptfoo_custom_grading_prompt_is_read(tmp_path):
    """Issue 26: a config whose grading is a custom `rubricPrompt` (no llm-rubric value) was
    refused as "not a rubric"; with llm-rubric assertions the prompt was dropped."""
    alone = load_rubric(OURS / "promptfoo/rubric-prompt-layout.yaml")
    assert [c.id for c in alone.criteria] == ["rubric-prompt"] and alone.criteria[0].scale.kind == "binary"
    assert alone.instructions[0].startswith("system: You grade summaries") and "user: Summary:" in alone.instructions[0]
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(
        "defaultTest:\n  options:\n    rubricPrompt: Grade strictly. {{rubric}} {{output}}\n"
        "tests:\n  - assert:\n      - type: llm-rubric\n        value: Is polite\n"
    )
    both = load_rubric(path)
    assert [c.description for c in both.criteria] == ["Is polite"]
    assert both.instructions == ("Grade strictly. {{rubric}} {{output}}",)
    path.write_text("defaultTest:\n  options:\n    rubricPrompt: 3\n")
    with pytest.raises(RubricImportError, match="`rubricPrompt` must be text or a list of messages, found 3"):
        load_rubric(path)


def test_phoenix_classification_evaluator_configs_import():
    """Issue 26: evaluator YAML as Arize Phoenix keeps it (messages, choices, optimization_direction)
    was refused; a `minimize` evaluator's high-scoring label is the bad one."""
    brevity = load_rubric(OURS / "phoenix/brevity-layout.yaml")
    (c,) = brevity.criteria
    assert (c.scale.kind, [(k.value, k.score) for k in c.scale.categories]) == (
        "nominal",
        [("brief", 1.0), ("wordy", 0.0)],
    )
    assert not brevity.scoring.invert and brevity.instructions[0].startswith("user: You review answers for brevity.")
    assert c.description.startswith("Checks that a reply carries only")  # `details`
    invented = load_rubric(OURS / "phoenix/invented-facts-layout.yaml")
    assert invented.scoring.invert and invented.metadata.id == "invented-facts"
    tool = load_rubric(OURS / "phoenix/tool-choice-layout.yaml")
    assert tool.metadata.provenance["inputs"] == "available_tools, input, tool_selection"


@pytest.mark.parametrize(
    ("choices", "message"),
    [
        ("{good: high, bad: 0}", "field choices.good: the score must be a number, found 'high'"),
        ("{good: 1}", "field choices: at least two labels"),
    ],
)
def test_a_phoenix_config_with_a_bad_choice_is_refused_by_field(tmp_path, choices, message):
    path = tmp_path / "judge.yaml"
    path.write_text(f"name: judge\nmessages: [{{role: user, content: 'Good or bad?'}}]\nchoices: {choices}\n")
    with pytest.raises(RubricImportError, match=re.escape(message)):
        load_rubric(path)


def test_prometheus_eval_rubric_data_records_import(tmp_path):
    """Issue 26: prometheus-eval's `rubric_data` (what SCORE_RUBRIC_TEMPLATE is formatted with) was
    read by the FLASK importer as one record, and refused as a map of named records."""
    named = load_rubrics(OURS / "prometheus/rubric-data-layout.yaml")
    assert [r.metadata.id for r in named] == ["relevance", "correctness"]
    assert named[0].criteria[0].scale.domain() == [1, 2, 3, 4, 5] and named[0].goal == "Relevance"
    assert named[0].instructions[0].endswith("for the question: {{query}}")
    path = tmp_path / "one.json"
    path.write_text(
        json.dumps({"rubric_data": {"criteria": "Tone", "score1_description": "rude", "score2_description": "kind"}})
    )
    assert load_rubric(path).criteria[0].scale.domain() == [1, 2]
    path.write_text(
        json.dumps({"instruction": 3, "rubric_data": {"score1_description": "a", "score2_description": "b"}})
    )
    with pytest.raises(RubricImportError, match="field instruction: text is required, found 3"):
        load_rubric(path)


def test_prompty_evaluators_from_a_second_repository_import():
    """Two users' evaluators (Azure-Samples, MIT): star lines between blank lines, and the older
    capitalised `System:` / `User:` turns."""
    friendly = load_rubric(OURS / "prompty/contoso/friendliness.prompty")
    assert [a.description for a in friendly.criteria[0].scale.anchors][::4] == [
        "the answer is unfriendly or hostile", "the answer is very friendly"
    ]  # fmt: skip
    older = load_rubric(OURS / "prompty/contoso/relevance.prompty")
    assert older.criteria[0].scale.domain() == [1, 2, 3, 4, 5] and older.role.persona.startswith("You are an AI")
    assert older.metadata.provenance["inputs"] == "question, context, answer"


def test_prompt_flows_own_evaluators_with_their_scale_in_prose_import(tmp_path):
    """Issue 26: Prompt flow's evaluator examples (microsoft/promptflow, MIT) state the scale in a
    sentence, or ask for a 0/1 answer, and write turns as `# system:`; all four were refused."""
    folder = OURS / "prompty/promptflow"
    quality = load_rubric(folder / "eval_code_quality.prompty")
    assert [(c.id, c.scale.domain()) for c in quality.criteria] == [
        ("correctness", [1, 2, 3, 4, 5]),
        ("readability", [1, 2, 3, 4, 5]),
    ]
    assert quality.role.persona.startswith("You are an AI assistant.")  # `# system:` was a turn
    basic = load_rubric(folder / "eval-basic.prompty")
    assert [(c.title, c.scale.domain()) for c in basic.criteria] == [("basic evaluate", [1, 2, 3, 4, 5])]
    apology = load_rubric(folder / "apology.prompty")
    (said,) = apology.criteria
    assert (
        isinstance(said.scale, BinaryScale)
        and said.description == "Give a apology of 1 if apologized in the chat conversation."
    )
    assert load_rubric(folder / "eval-checklist.prompty").criteria[0].scale.domain() == [1, 2, 3, 4, 5]
    chat = tmp_path / "chat.prompty"  # a chat prompt, not an evaluator: still refused
    chat.write_text(
        "---\nname: chat\ninputs:\n  question:\n    type: string\n---\nsystem:\nBe helpful.\n\nuser:\n{{question}}\n"
    )
    with pytest.raises(RubricImportError, match="no rating scale in the template"):
        load_rubric(chat)


def test_llm_judge_spec_layouts_of_a_second_repository_import_and_a_look_alike_is_refused(tmp_path):
    """rubrify's fixtures (secemp9/rubrify): a Yes/Partly/No judge with disqualifiers inside
    <rubric>, genre modules (`genre="explainer,science_tech"`), and a file of shouted commands
    under a <rubric> root that is no rubric at all."""
    judge = load_rubric(OURS / "xml/compliance-layout.xml")
    assert [(c.id, c.scale.domain()) for c in judge.criteria] == [
        ("C1", [0, 1, 2]),
        ("C2", [0, 1, 2]),
        ("C3", [0, 1, 2]),
        ("Judgement", ["Yes", "Partly", "No"]),  # the verdict its decision logic gives, asked apart
    ]
    assert [d.id for d in judge.disqualifiers] == ["DQ1", "DQ2"]
    modules = load_rubric(OURS / "xml/genre-modules-layout.xml")
    assert {c.id: c.genre for c in modules.criteria} == {
        "C1": (),
        "G_EXP": ("explainer", "science_tech", "academic"),
        "G_BUS": ("business",),
    }
    orders = tmp_path / "orders.xml"
    orders.write_text('<?xml version="1.0"?>\n<rubric><directive><command>OBEY.</command></directive></rubric>\n')
    with pytest.raises(RubricImportError, match="root element is <rubric>, expected <LLM_JUDGE_SPEC>"):
        load_rubric(orders)


def test_a_promptfoo_test_case_file_imports():
    """Issue 26: a file of test cases (`tests: file://cases/*.yaml`: a list of tests, each with
    `vars` and `assert`) was refused as a list that is neither assertions nor a skill set."""
    cases = load_rubric(OURS / "promptfoo/test-cases-layout.yaml")
    assert [c.description for c in cases.criteria] == [
        "Greets the user in French",
        "Declines to share credentials and says why",
    ]  # the not-contains check is promptfoo's own


def test_a_judge_prompt_with_a_scoring_scale_imports_and_a_format_only_prompt_does_not(tmp_path):
    """Issue 26: Azure AI Foundry's prompt-based evaluators (the prompt text of a custom evaluator,
    kept in a file: "You are a X Evaluator", `### Scoring Scale (1–5):` with `5 → ...` levels)
    were refused as Markdown without frontmatter."""
    r = load_rubric(OURS / "judge_prompt/foundry-prompt-evaluator-layout.md")
    (c,) = r.criteria
    assert (c.id, c.title, c.scale.domain()) == ("faithfulness", "Faithfulness", [1, 2, 3, 4, 5])
    assert c.scale.anchors[4].description.startswith("Fully faithful.") and r.goal.startswith("You are a")
    assert r.metadata.provenance["slots"] == "query, response, ground_truth"  # names, as every importer gives them
    format_only = tmp_path / "format.md"  # a scale heading with no levels under it is no rubric
    format_only.write_text("Answer in JSON.\n\n### Scoring scale\nUse the usual one.\n")
    with pytest.raises(RubricImportError, match="not a rubric"):
        load_rubric(format_only)


def test_prompt_flows_jinja_evaluation_prompts_import():
    """Issue 26: Prompt flow's evaluation flows keep their grading prompts as `.jinja2` files (a
    Prompty body without frontmatter: `system:` / `user:` turns, star lines; G-Eval's layout; a
    score "from 1 to 5 for X, where 1 means poor"); all were refused (invalid YAML)."""
    folder = OURS / "promptflow_jinja"
    coherence = load_rubric(folder / "gpt_coherence_prompt.jinja2")
    assert coherence.criteria[0].scale.anchors[4].description == "the answer has perfect coherency"
    assert coherence.role.persona.startswith("You are an AI assistant.")
    assert load_rubric(folder / "relevance.jinja2").criteria[0].id == "relevance"  # G-Eval, as .jinja2
    felt = load_rubric(folder / "score-from-prose-layout.jinja2").criteria[0]
    assert (felt.id, [(a.value, a.description) for a in felt.scale.anchors]) == (
        "felt-helpfulness",
        [(1, "poor"), (3, "normal"), (5, "excellent")],
    )


def test_g_eval_layouts_of_its_users_import():
    """Issue 26: a criterion named on the `Evaluation Criteria:` line itself was refused; a prompt
    for another task keeps its own slot."""
    chat = load_rubric(OURS / "geval/chat-one-line-heading-layout.txt")
    c = chat.criteria[0]
    assert (c.id, c.scale.domain()) == ("politeness", [1, 2, 3]) and c.description.startswith("how courteous")
    assert "(3) Assign a score for politeness" in chat.instructions[0]
    cookbook = load_rubric(OURS / "geval/cookbook-continued-lines-layout.txt")  # lines continued with `\`
    c = cookbook.criteria[0]
    assert (c.id, c.scale.domain()) == ("relevance", [1, 2, 3, 4, 5]) and "\\" not in c.description
    assert cookbook.metadata.provenance["slots"] == "conversation, summary"  # {conversation}: a format slot
    poem = load_rubric(OURS / "geval/poem-inline-levels-layout.txt")
    assert [a.description.split(".")[0] for a in poem.criteria[0].scale.anchors] == ["Weak", "Uneven", "Strong"]
    assert poem.metadata.provenance["slots"] == "Poem"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (  # from_n: a choice per completion compared, counted from the prompt's numbered slots
            "rank:\n  prompt: 'Best for {input}? 1: {completion1} 2: {completion2} 3: {completion3}'\n"
            "  choice_strings: from_n_ABC\n",
            ["A", "B", "C"],
        ),
        (
            "rank:\n  prompt: 'Rate {completion}'\n  choice_strings: from_n\n",
            "'from_n' means one choice per completion",
        ),
        (
            "yn:\n  prompt: 'Is {completion} right?'\n  choice_strings: [Y, N]\n  choice_scores: from_strings\n",
            r"yn.choice_scores: from_strings needs choices that are numbers, found \['Y', 'N'\]",
        ),
        (
            "yn:\n  prompt: 'Is {completion} right?'\n  choice_strings: [Y, N]\n  choice_scores: {Y: high, N: 0}\n",
            "yn.choice_scores.Y: a number is required, found 'high'",
        ),
    ],
)
def test_evals_choice_forms_read_or_refused_by_field(tmp_path, spec, expected):
    """openai/evals' `from_n` choices (one per completion compared) were split into letters, and
    `from_strings` over non-numbers was a ValueError traceback."""
    path = tmp_path / "spec.yaml"
    path.write_text(spec)
    if isinstance(expected, list):
        assert [c.value for c in load_rubric(path).criteria[0].scale.categories] == expected
        return
    with pytest.raises(RubricImportError, match=expected):
        load_rubric(path)


def test_an_importer_surprised_by_a_field_says_so_by_file_and_importer():
    """The net under every importer: a form no check foresaw is an error naming the file and the
    importer, never a traceback."""
    from rubricflow.rubrics.importers import guarded

    with pytest.raises(RubricImportError, match=r"f.yaml: read as Surprised, but a field has a form .*ValueError"):
        guarded(("Surprised", lambda data, path: [int(data["n"])]), {"n": "many"}, Path("f.yaml"))


def _field_paths(data, prefix=()):
    """Every key and the first list items of a parsed file, as paths into it."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield (*prefix, key)
            yield from _field_paths(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data[:3]):
            yield (*prefix, i)
            yield from _field_paths(value, (*prefix, i))


FUZZED_BYTES = 64_000  # a larger real tree (bridging-data-gaps, 100 KB) repeats the shapes smaller ones hold


def test_a_field_of_the_wrong_type_in_any_collected_file_is_named_by_its_importer():
    """Issue 26: every YAML/JSON rubric file collected, each of its fields in turn replaced by a
    value of another type: the file imports, or its importer refuses it naming the field; never a
    traceback and never the net's catch-all (PaperBench weights, HealthBench points and tags and
    evaluator YAML's criteria list were a ValueError/TypeError before this test)."""
    import copy

    from rubricflow.rubrics.importers import importer_for, parse_data

    surprised = []
    for path in user_rubric_files():
        if path.suffix not in (".yaml", ".yml", ".json") or path.stat().st_size > FUZZED_BYTES:
            continue
        data = parse_data(path.read_text(encoding="utf-8"), path)
        for field in list(_field_paths(data))[:400]:
            for wrong in ("x", 3, None, [1], {"a": 1}, True):
                mutated = copy.deepcopy(data)
                holder = mutated
                for key in field[:-1]:
                    holder = holder[key]
                holder[field[-1]] = wrong
                try:
                    importer_for(mutated, path)[1](mutated, path)
                except RubricImportError:
                    pass
                except Exception as exc:  # noqa: BLE001 - what the test looks for
                    surprised.append((path.name, field, wrong, f"{type(exc).__name__}: {exc}"[:120]))
    assert not surprised, surprised[:10]


def test_openai_evals_own_modelgraded_files_import():
    """Issue 26: the format's own repository keeps one spec per file at the top level (named by the
    file); every such file was refused as "not a rubric in any known format"."""
    folder = OURS / "openai_evals/registry"
    humor = load_rubric(folder / "humor_likert.yaml")
    assert humor.metadata.id == "humor-likert" and [c.score for c in humor.criteria[0].scale.categories] == [
        0.0,
        0.25,
        0.5,
        0.75,
        1.0,
    ]
    closedqa = load_rubric(folder / "closedqa.yaml")
    assert [c.id for c in closedqa.criteria] == ["relevance", "conciseness", "correct"]
    assert closedqa.criteria[2].description == "correctness: Is the answer correct?"
    assert [c.value for c in load_rubric(folder / "battle.yaml").criteria[0].scale.categories] == ["Yes", "No"]
    assert [c.score for c in load_rubric(folder / "fact.yaml").criteria[0].scale.categories] == [None] * 5


@pytest.mark.parametrize(
    ("record", "levels", "question"),
    [
        (  # Ragas' RubricsScore map of levels, 0-based (as ragas' attack-extraction metric writes it)
            {f"score{n}_description": f"level {n}" for n in range(3)},
            [0, 1, 2],
            "How well the response fits the levels below",
        ),
        (  # the Preference / Feedback Collection's fields
            {"orig_criteria": "Is it empathetic?", **{f"orig_score{n}_description": f"level {n}" for n in range(1, 6)}},
            [1, 2, 3, 4, 5],
            "Is it empathetic?",
        ),
    ],
)
def test_prometheus_style_levels_as_users_bring_them(tmp_path, record, levels, question):
    """Issue 26: Ragas rubrics (no criteria, 0-based) and the Preference Collection's `orig_` fields
    were refused; the levels decide the scale."""
    path = tmp_path / "rubric.json"
    path.write_text(json.dumps(record))
    [criterion] = load_rubric(path).criteria
    assert [a.value for a in criterion.scale.anchors] == levels and criterion.description.startswith(question)


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"criteria": "q", "score1_description": "a", "score3_description": "c"}, "consecutive levels"),
        ({"criteria": "q", "score1_description": "a", "score2_description": 7}, "score2_description: text is required"),
        ({"criteria": ["q"], "score1_description": "a", "score2_description": "b"}, "field criteria: text is required"),
    ],
)
def test_a_prometheus_field_of_the_wrong_shape_is_named(tmp_path, record, message):
    path = tmp_path / "rubric.json"
    path.write_text(json.dumps(record))
    with pytest.raises(RubricImportError, match=message):
        load_rubric(path)


def test_a_prompty_evaluator_reads_its_levels_definition_and_inputs(tmp_path):
    """Azure AI Evaluation's evaluators are Prompty files: the levels come from `## [Trait: N] (Label)`
    headings (their definitions, not their examples) or from `One star:` lines; the judge settings
    in `model` are named as ignored; a template with no scale is refused by name."""
    from rubricflow.rubrics.importers import detect_and_import

    folder = TEST_DATA / "rubrics" / "prompty"
    [coherence] = detect_and_import((folder / "coherence.prompty").read_text(), folder / "coherence.prompty")
    levels = coherence.criteria[0].scale.anchors
    assert [(a.value, a.label) for a in levels][::4] == [(1, "Incoherent Response"), (5, "Highly Coherent Response")]
    assert "Wind sun green" not in " ".join(a.description for a in levels)  # examples stay in the prompt
    assert coherence.goal.startswith("Coherence refers to the logical")
    assert coherence.metadata.provenance["inputs"] == "query, response"
    assert "model" in coherence.metadata.provenance["ignored"]
    [similarity] = detect_and_import((folder / "similarity.prompty").read_text(), folder / "similarity.prompty")
    assert [a.value for a in similarity.criteria[0].scale.anchors] == [1, 2, 3, 4, 5]
    bare = tmp_path / "bare.prompty"
    bare.write_text("---\nname: Bare\ninputs:\n  query: {type: string}\n---\nuser:\nRate {{query}} from 1 to 5.\n")
    with pytest.raises(RubricImportError, match="bare.prompty.*no rating scale"):
        detect_and_import(bare.read_text(), bare)
    typed = tmp_path / "typed.prompty"
    typed.write_text("---\nname: [not, text]\ninputs: {}\n---\nuser:\nOne star: bad\nFive stars: good\n")
    with pytest.raises(RubricImportError, match="field name: expected text"):
        detect_and_import(typed.read_text(), typed)
