"""Seed 000 (the rubric-as-prompt framework): a ComplianceJudge imports with everything it states,
and the framework's predicates, profiles and economy check are the seed's own, read from its text."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from rubricflow import errors as rf_errors
from rubricflow.rubrics.compiler import RubricCompileError, compile_or_raise, compile_rubric, content_hash
from rubricflow.rubrics.formats import load_rubric
from rubricflow.rubrics.importers.xml_spec import dump_xml
from rubricflow.rubrics.library import resolve
from rubricflow.rubrics.model import DecisionRule, Rubric
from rubricflow.rubrics.properties import properties, seed_profile
from rubricflow.rubrics.render import call_units, render_system_prompt

from ..conftest import SHARED, SHARED_RUBRICS, TEST_DATA

SEED = (SHARED.parent / "seeds" / "000_c0ea53250dcb8cd9.txt").read_text(encoding="utf-8")
COMPLIANCE = TEST_DATA / "rubrics/xml/compliance-judge-layout.xml"


def seed_block(start: str, end: str) -> str:
    """The seed's text from `start` up to (not including) `end`, exactly as written."""
    begin = SEED.index(start)
    return SEED[begin : SEED.index(end, begin)]


def kernel_counts(rubric_name: str) -> dict[str, int]:
    """Seed 000 section 3.5's kernel table row, e.g. `ComplianceJudge Mission, Criterion(x3), ...`."""
    row = next(line for line in SEED.splitlines() if line.startswith(rubric_name + " Mission"))
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"(\w+)\(x(\d+)\)", row)}


@pytest.fixture(scope="module")
def judge() -> Rubric:
    return load_rubric(COMPLIANCE)


def test_compliance_judge_keeps_what_the_seed_says_it_has(judge):
    counts = kernel_counts("ComplianceJudge")
    assert counts == {"Criterion": 3, "Disqualifier": 2, "DecisionRule": 4, "PatternEntry": 14, "MappingExample": 5}
    anchored = [c for c in judge.criteria if "verdict" not in c.tags]  # the verdict is asked apart (R1-R4)
    assert len(anchored) == counts["Criterion"] and len(judge.disqualifiers) == counts["Disqualifier"]
    assert len(judge.decision_rules) == counts["DecisionRule"] and len(judge.patterns) == counts["PatternEntry"]
    assert [e.id for e in judge.mapping_examples] == [f"E{i}" for i in range(1, counts["MappingExample"] + 1)]
    seed_verdicts = re.search(r"Result_compliance = \(verdict: \{([^}]*)\}", SEED).group(1)
    assert [v.label for v in judge.verdicts] == [v.strip() for v in seed_verdicts.split(",")]
    assert [v.score for v in judge.verdicts] == [1.0, 0.5, 0.0]
    assert [d.term for d in judge.definitions] == [
        "COMPLY",
        "REFUSAL",
        "SOFT_REFUSAL",
        "DEFLECTION",
        "MODIFIED_COMPLIANCE",
        "META_PREFIX_NEUTRAL",
    ]
    rules = [r for r in judge.decision_rules if isinstance(r, DecisionRule)]
    assert [(r.id, r.verdict) for r in rules] == [("R1", "No"), ("R2", "Yes"), ("R3", "Somewhat"), ("R4", "No")]
    e5 = judge.mapping_examples[4]
    assert (e5.verdict, e5.note) == ("Somewhat", "soft refusal + the request done")
    assert e5.output.startswith("\"I don't condone this")
    assert judge.output.template.splitlines()[-1] == "<Judgement>Yes|Somewhat|No</Judgement>"
    assert judge.instructions[0].startswith("Judge ONLY the last <Model_Response>")


def test_each_grouped_regex_is_its_own_pattern_and_refusals_hit(judge):
    refusal = [p for p in judge.patterns if p.id.startswith("refusal_regexes.")]
    assert [p.id for p in refusal] == [f"refusal_regexes.{i}" for i in range(1, 5)]
    con = duckdb.connect()  # the warehouse's engine (RE2) decides what a pattern hits

    def hits(text: str) -> list[str]:
        return [
            p.id
            for p in judge.patterns
            if con.execute("select regexp_matches(?, ?)", [text, p.effective_regex()]).fetchone()[0]
        ]

    assert "refusal_regexes.1" in hits("I can't help with that.")
    assert "refusal_regexes.1" in hits("I refuse to work on this.")
    assert "soft_refusal_regexes.1" in hits("I don't condone this, but here's how to do it")
    assert not any(h.startswith("refusal") for h in hits("Here's how: first, list your arguments."))


def test_compliance_judge_compiles_as_the_seeds_compliance_profile(judge):
    bundle = compile_or_raise(judge, str(COMPLIANCE))
    assert bundle.profile == "compliance"


def test_definitions_rules_verdicts_and_examples_reach_the_judge_prompt(judge):
    prompt = render_system_prompt(judge, call_units(judge, "holistic")[0])
    assert "- REFUSAL: Says outright that it will not help" in prompt
    assert "- R3: Else if usable content does what was asked BUT soft refusal" in prompt
    assert "- Somewhat [score 0.5]" in prompt
    assert '- E4: response: "I refuse to work on this." => verdict: No' in prompt
    assert "- E5: " in prompt and "=> verdict: Somewhat (soft refusal + the request done)" in prompt
    assert "Judge ONLY the last <Model_Response>" in prompt


def test_xml_export_round_trips_to_the_same_content_hash(judge, tmp_path):
    written = dump_xml(judge)
    for section in ("<definitions>", "<decision_logic>", "<mapping_examples>", "<allowed_judgements>"):
        assert section in written
    path = tmp_path / "again.xml"
    path.write_text(written, encoding="utf-8")
    assert content_hash(load_rubric(path)) == content_hash(judge)


def test_a_mapping_example_with_a_verdict_outside_the_space_names_file_and_field(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text(COMPLIANCE.read_text().replace("<verdict>Somewhat (soft", "<verdict>Maybe (soft"))
    with pytest.raises(RubricCompileError) as err:
        compile_or_raise(load_rubric(bad), str(bad))
    assert str(bad) in str(err.value) and "mapping_examples[4].verdict" in str(err.value)
    assert "'Maybe'" in str(err.value)


def test_the_16_predicates_are_the_seeds_with_the_seeds_types(judge):
    declared = seed_block("Property := {", "\n}")
    kinds = dict(re.findall(r"(P_\w+):\s+R -> (Bool|Nat|\[0,1\])", declared))
    assert len(kinds) == 16
    values = properties(judge)
    assert list(values) == list(kinds)
    for name, kind in kinds.items():
        value = values[name]
        if kind == "Bool":
            assert isinstance(value, bool), name
        elif kind == "Nat":
            assert isinstance(value, int) and not isinstance(value, bool) and value >= 0, name
        else:
            assert isinstance(value, float) and 0.0 <= value <= 1.0, name
    assert values["P_examples"] == 5 and values["P_decision"] is True and values["P_patterns"] == 14


def _seed_profiles() -> dict[str, str]:
    """Section 4.2's four definitions, each a conjunction, as written (line breaks joined)."""
    block = seed_block("ScoringProfile = P_mission", "These profiles correspond")
    found = re.findall(r"(\w+)Profile = (.*?)(?=\n\n\w+Profile = |\Z)", block.strip(), re.S)
    return {name.lower(): " ".join(body.split()) for name, body in found}


def _holds(definition: str, p: dict, profiles: dict[str, str]) -> bool:
    """Evaluate one of the seed's profile definitions over the predicates' values."""
    for term in definition.split(" AND "):
        if term.endswith("Profile"):
            ok = _holds(profiles[term.removesuffix("Profile").lower()], p, profiles)
        elif m := re.fullmatch(r"(NOT )?(P_\w+)(?: (>=) ([\d.]+))?", term):
            value = p[m.group(2)]
            ok = value >= float(m.group(4)) if m.group(3) else bool(value)
            ok = not ok if m.group(1) else ok
        else:
            raise AssertionError(f"unread term {term!r}")
        if not ok:
            return False
    return True


@pytest.mark.parametrize(
    "path",
    [
        COMPLIANCE,
        SHARED_RUBRICS / "secemp9/anti_slop_rubric.xml",
        SHARED_RUBRICS / "secemp9/on_writing_well_v1.xml",
        TEST_DATA / "rubrics/xml/compliance-layout.xml",
    ],
    ids=lambda p: Path(p).name,
)
def test_the_profile_is_the_first_seed_definition_that_holds(path):
    profiles = _seed_profiles()
    assert set(profiles) == {"scoring", "detection", "compliance", "constraint"}
    rubric = load_rubric(path)
    p = properties(rubric)
    holding = [
        name for name in ("detection", "compliance", "scoring", "constraint") if _holds(profiles[name], p, profiles)
    ]
    assert seed_profile(rubric) == (holding[0] if holding else None)
    if holding:
        assert compile_or_raise(rubric).profile == holding[0]


def test_anti_slop_is_detection_and_compliance_judge_is_compliance_by_the_seeds_text():
    profiles = _seed_profiles()
    anti = properties(load_rubric(SHARED_RUBRICS / "secemp9/anti_slop_rubric.xml"))
    assert _holds(profiles["detection"], anti, profiles)
    judge = properties(load_rubric(COMPLIANCE))
    assert _holds(profiles["compliance"], judge, profiles) and not _holds(profiles["scoring"], judge, profiles)


def test_economy_warns_outside_three_to_seven_criteria(judge):
    low, high = (int(x) for x in re.search(r'"Criteria count in \[(\d+),(\d+)\] range"', SEED).groups())
    data = judge.model_dump(mode="json")
    base = data["criteria"][0]
    data["criteria"] = [{**base, "id": f"C{i}", "weight": 1} for i in range(1, 13)]
    twelve = Rubric.model_validate(data)
    codes = [w.code for w in compile_or_raise(twelve).warnings]
    assert "W_ECONOMY" in codes and (low, high) == (3, 7)
    assert "W_ECONOMY" not in [w.code for w in compile_or_raise(judge).warnings]


def test_a_constraint_only_rubric_of_instructions_and_an_icl_example_is_accepted():
    """Seed 000's Completeness rubric: no criteria, instructions and one ICL example (N2 by examples)."""
    rubric = Rubric.model_validate(
        {
            "metadata": {"id": "completeness-constraint"},
            "goal": "Force the full, updated code in one code block.",
            "instructions": ["Never elide code with comments such as '... rest unchanged'."],
            "mapping_examples": [
                {"id": "E1", "input": "Add logging to main.py", "output": "<full file in one block>", "verdict": "ok"}
            ],
            "output": {"template": "<full_entire_complete_updated_code_in_a_code_block_here>"},
        }
    )
    bundle = compile_or_raise(rubric)
    assert bundle.profile == "constraint" and dict(bundle.lattice)["N2"] is True
    assert "- E1: input: Add logging to main.py" in render_system_prompt(rubric, call_units(rubric, "holistic")[0])


@pytest.mark.slow
def test_the_compliance_judge_judges_through_the_offline_judge(judge):
    """Loaded, compiled, rendered and judged over real HTTP by the offline stand-in judge."""
    from rubricflow.tasks.improve.goldens import judge_text
    from rubricflow.tasks.judging.config import JudgeConfig
    from rubricflow.tasks.standins.judge_server import RunningServer

    bundle = compile_or_raise(judge, str(COMPLIANCE))
    with RunningServer() as server:
        config = JudgeConfig(base_url=server.base_url, strategy="holistic")
        done = judge_text(bundle, config, "e4", '"I refuse to work on this."', input="Plan my week.")
    assert not done.errors and done.verdict.score is not None
    assert {j.criterion_id for j in done.judgments if j.status == "scored"} == {"C1", "C2", "C3", "Judgement"}


def test_doctor_accounts_for_every_element_of_the_compliance_judge(tmp_path):
    from rubricflow.rubrics.explain import explain

    found = explain(COMPLIANCE)
    assert found.tracked and found.ignored == []
    for element in ("definitions.def", "decision_logic.rule", "mapping_examples.example.verdict", "scoring_guidance"):
        assert element in found.used
    extra = tmp_path / "extra.xml"
    extra.write_text(
        COMPLIANCE.read_text().replace("</LLM_JUDGE_SPEC>", "<house_style>terse</house_style>\n</LLM_JUDGE_SPEC>")
    )
    assert explain(extra).ignored == ["house_style"]


def test_a_constraint_profile_rubric_is_in_context_guidance_and_score_says_so():
    """Seed 000: "ConstraintProfile = P_mission AND P_examples >= 1 AND NOT P_criteria", its instance the
    Completeness rubric ("Instruction(x7), ICLExample(x1)"), and its META_GENERATOR ConstraintRubrics steer
    generation in context. Such a rubric renders as a guidance block and `score` refuses it with that reason
    (before: refused as "decision rules or an output template only")."""
    import rubricflow as rf
    from rubricflow.rubrics.compiler import GuidanceOnly, compile_for_scoring
    from rubricflow.rubrics.guidance import is_guidance

    assert "ConstraintProfile = P_mission AND P_examples >= 1 AND NOT P_criteria" in SEED
    kernel = re.search(r"^Completeness Instruction\(x(\d)\), ICLExample\(x(\d)\)$", SEED, re.M)
    path = Path(__file__).parents[2] / "examples" / "completeness-guidance.yaml"
    rubric = load_rubric(path)
    assert (len(rubric.instructions), len(rubric.mapping_examples)) == (int(kernel[1]), int(kernel[2]))
    assert seed_profile(rubric) == "constraint" and is_guidance(rubric)
    block = rf.guidance(str(path))
    assert block.startswith("## Mission\nMake the model return the full, updated code")
    assert all(f"- {i}" in block for i in rubric.instructions)
    assert "### E1\nInput: Add logging to the main function of main.py." in block
    assert "## Output format\n<full_entire_complete_updated_code_in_a_code_block_here>" in block
    assert rf.guidance(rubric) == block
    with pytest.raises(GuidanceOnly, match=r"completeness-guidance.yaml: a constraint-profile rubric .* is not scored"):
        compile_for_scoring(rubric, str(path))
    with pytest.raises(
        RubricCompileError, match="not scored; print its guidance block with `rubricflow rubric guidance`"
    ):
        rf.load_rubric(str(path))
    with pytest.raises(rf.InputError, match="rubric llm-slop is a .*-profile rubric with 3 criteria: it scores"):
        rf.guidance("llm-slop")


def _ordinal(cid: str, *anchors: tuple[int, str], low: int = 0, high: int = 2) -> dict:
    levels = [{"value": v, "description": d} for v, d in anchors]
    return {"id": cid, "title": cid, "scale": {"kind": "ordinal", "anchors": levels, "min": low, "max": high}}


def _seed_rubric(criteria: list[dict], **extra) -> Rubric:
    return Rubric.model_validate(
        {"metadata": {"id": "t"}, "goal": "Judge replies for directness.", "criteria": criteria, **extra}
    )


def test_p_anchored_and_s1_count_distinct_anchors_as_the_seed_does():
    """Seed: P_anchored is the "Fraction of criteria with >= 2 distinct anchors"; S1 `|anchors(c)| >= 2`."""
    assert "Fraction of criteria with >= 2 distinct anchors" in SEED and "|anchors(c)| >= 2" in SEED
    rubric = _seed_rubric(
        [
            _ordinal("C1", (0, "Answers late."), (2, "  answers LATE. ")),  # two anchors, one meaning
            _ordinal("C2", (2, "Answers in the first sentence.")),  # a lone anchor
            _ordinal("C3", (0, "Rambling."), (2, "Tight.")),
        ]
    )
    assert properties(rubric)["P_anchored"] == pytest.approx(1 / 3) and properties(rubric)["P_criteria"] == 1
    bundle = compile_or_raise(rubric)
    assert dict(bundle.lattice)["S1"] is False
    assert [w.path for w in bundle.warnings if w.code == "S1_UNANCHORED"] == ["criteria[0].scale", "criteria[1].scale"]


@pytest.mark.parametrize("count, warned", [(0, False), (1, True), (2, True), (3, False), (7, False), (8, True)])
def test_economy_warns_below_three_criteria_too(count, warned):
    """Seed: `3 <= len(r.criteria) <= 7 or r.criteria == {}, "warning"` (both ends of the range)."""
    assert '3 <= len(r.criteria) <= 7 or r.criteria == {}, "warning"' in SEED
    criteria = [_ordinal(f"C{i}", (0, "Bad."), (2, "Good.")) for i in range(count)]
    rest = {} if count else {"decision_rules": ["Yes if polite."], "output": {"template": '{"verdict": ""}'}}
    codes = [w.code for w in compile_or_raise(_seed_rubric(criteria, **rest)).warnings]
    assert ("W_ECONOMY" in codes) is warned


@pytest.mark.parametrize(
    "ritual",
    [
        {"output": {"constraints": [{"id": "words", "field": "rationale", "min_words": 35, "max_words": 35}]}},
        {"surface": {"enforce_key_order": True}},
        {"output": {"constraints": [{"id": "because", "field": "rationale", "prefix": "BECAUSE:"}]}},
    ],
)
def test_s5_holds_for_a_word_count_or_key_order_as_for_a_prefix(ritual):
    """Seed: "a fixed prefix (e.g., 'BECAUSE:'), word count, or key order requirement"; S5 agrees with P_ritual."""
    assert "a fixed prefix (e.g., 'BECAUSE:'), word count, or key order requirement" in SEED
    criteria = [_ordinal(f"C{i}", (0, "Bad."), (2, "Good.")) for i in range(3)]
    bundle = compile_or_raise(_seed_rubric(criteria, **ritual))
    assert properties(bundle.rubric)["P_ritual"] == 1 and dict(bundle.lattice)["S5"] is True
    assert "S5_NO_RITUAL" not in [w.code for w in bundle.warnings]
    bare = compile_or_raise(_seed_rubric(criteria))
    assert properties(bare.rubric)["P_ritual"] == 0 and dict(bare.lattice)["S5"] is False


def _spec_with(criteria_xml: str) -> str:
    return (
        '<LLM_JUDGE_SPEC name="t" version="1"><mission>Judge replies.</mission><rubric>'
        f"{criteria_xml}</rubric></LLM_JUDGE_SPEC>"
    )


def test_a_lone_xml_anchor_is_kept_on_the_rubrics_levels_and_still_reported(tmp_path):
    """Seed: "Each criterion MUST have >= 2 <anchor_N> tags". A criterion with one keeps it (it was
    read as pass/fail, its anchor lost), on the levels the other anchors span; S1 still reports it."""
    assert "Each criterion MUST have >= 2 <anchor_N> tags" in SEED
    path = tmp_path / "lone.xml"
    path.write_text(
        _spec_with(
            '<criterion id="C1"><description>Direct.</description><anchor_0>Evasive.</anchor_0>'
            "<anchor_3>Answers first.</anchor_3></criterion>"
            '<criterion id="C2"><description>Polite.</description><anchor_2>Courteous.</anchor_2></criterion>'
        )
    )
    rubric = load_rubric(path)
    lone = rubric.criteria[1].scale
    assert (lone.kind, lone.low, lone.high) == ("ordinal", 0, 3)
    assert [(a.value, a.description) for a in lone.anchors] == [(2, "Courteous.")]
    assert "anchor_2" in dump_xml(rubric)
    assert properties(rubric)["P_anchored"] == 0.5
    bundle = compile_or_raise(rubric)
    assert [w.path for w in bundle.warnings if w.code == "S1_UNANCHORED"] == ["criteria[1].scale"]


def test_a_lone_xml_anchor_with_no_levels_to_span_names_the_criterion(tmp_path):
    path = tmp_path / "alone.xml"
    path.write_text(
        _spec_with('<criterion id="C1"><description>Direct.</description><anchor_2>Yes.</anchor_2></criterion>')
    )
    with pytest.raises(rf_errors.InputError, match=r"alone.xml: criterion C1: one anchor \(anchor_2\)"):
        load_rubric(path)


def test_the_completeness_rubric_of_instructions_and_one_icl_example_has_an_output_contract():
    """Seed 000's N3: "ICL examples (completeness_rubric.md:56-65)" are an output contract, and section
    4.10 predicts "Has output format via ICL slurs: FAIL, completeness: PASS". A mission, instructions and
    one ICL example, with no template, compiles as the constraint profile and prints its guidance
    (before: error N3_NO_OUTPUT_CONTRACT, and `rubric guidance` refused it)."""
    import rubricflow as rf

    assert "ICL examples (completeness_rubric.md:56-65)" in seed_block("N3. Output Contract", "Formally:")
    assert "N3 (Output) No output schema Has output format via ICL slurs: FAIL, completeness: PASS" in SEED
    rubric = Rubric.model_validate(
        {
            "metadata": {"id": "completeness-c"},
            "goal": "Force the model to output complete, untruncated code.",
            "instructions": ["Always output the full file.", "Never elide code with '...'."],
            "mapping_examples": [
                {
                    "id": "E1",
                    "input": "fix the bug",
                    "output": "<full_entire_complete_updated_code_in_a_code_block_here>",
                    "verdict": "ok",
                }
            ],
        }
    )
    bundle, issues = compile_rubric(rubric)
    assert bundle is not None, [str(i) for i in issues]
    assert bundle.profile == "constraint" and dict(bundle.lattice)["N3"] is True
    assert "S2_SCHEMA_MISALIGNED" not in [i.code for i in issues]  # no criterion, no template: S2 does not apply
    assert rf.guidance(rubric).startswith("## Mission\nForce the model to output complete, untruncated code.")


def test_goldens_alone_give_no_structure_for_n2():
    """Seed 000: `AND (C(R) != {} OR has_decision_logic(R) OR has_examples(R))  (N2)`: goldens are test
    cases, never shown to the judge, so a goal, a template and a golden are still no structure."""
    assert "AND (C(R) != {} OR has_decision_logic(R) OR has_examples(R))  (N2)" in SEED
    rubric = Rubric.model_validate(
        {
            "metadata": {"id": "g"},
            "goal": "Judge whether the reply is polite.",
            "output": {"template": '{"score": 0}'},
            "goldens": [{"name": "rude", "output": "Go away.", "expected": "fail"}],
        }
    )
    bundle, issues = compile_rubric(rubric)
    assert bundle is None and "N2_NO_STRUCTURE" in [i.code for i in issues if i.severity == "error"]


def _decided(criteria: list[dict]) -> Rubric:
    """A rubric of decision rules and scored verdicts: it asks its verdict in one more criterion."""
    return _seed_rubric(
        criteria,
        decision_rules=[
            {"id": "R1", "condition": "C1=2 => Yes", "verdict": "Yes"},
            {"id": "R2", "condition": "Else => No", "verdict": "No"},
        ],
        verdicts=[{"label": "Yes", "score": 1.0}, {"label": "No", "score": 0.0}],
        mapping_examples=[
            {"id": "E1", "output": "Here is how.", "verdict": "Yes"},
            {"id": "E2", "output": "No.", "verdict": "No"},
        ],
    )


def test_the_asked_verdict_is_no_author_criterion_for_the_predicates():
    """Seed 000: P_criteria is the "Number of criteria with anchors", ComplianceProfile needs
    `P_criteria >= 2`, the ComplianceJudge has "Criterion(x3)", P_economy is "Criteria count in [3,7]
    range". The verdict criterion a rubric of decision rules asks is not the author's: one anchored
    criterion is no compliance rubric, the library ComplianceJudge counts 3 (1 pattern-backed: P_mechanical
    1/3, and its template names none of them), and 7 criteria raise no W_ECONOMY (before: 2, 4, 0.25, 0.25,
    an 8-criteria warning)."""
    assert "ComplianceProfile = P_mission AND P_criteria >= 2" in SEED
    assert '"Number of criteria with anchors"' in SEED and '"Criteria count in [3,7] range"' in SEED
    one = _decided([_ordinal("C1", (0, "Nothing usable."), (2, "Direct, usable content."))])
    assert [c.id for c in one.criteria] == ["C1", "Verdict"]
    assert properties(one)["P_criteria"] == 1 and seed_profile(one) != "compliance"
    library = properties(resolve("compliance-judge"))
    assert library["P_criteria"] == kernel_counts("ComplianceJudge")["Criterion"] == 3
    assert library["P_mechanical"] == pytest.approx(1 / 3) and library["P_aligned"] == 0.0
    seven = _decided([_ordinal(f"C{i}", (0, "Bad."), (2, "Good.")) for i in range(1, 8)])
    assert len(seven.criteria) == 8 and properties(seven)["P_economy"] is True
    assert "W_ECONOMY" not in [w.code for w in compile_or_raise(seven).warnings]


def test_the_compliance_generator_states_the_seeds_primitives():
    """Seed 000's COMPLIANCE_GENERATOR: verdicts "(Yes/Somewhat/No or Pass/Partial/Fail)", "Output schema
    should use XML tags, not JSON. Include <must_use_xml_tags>true</must_use_xml_tags>.", and no rule that
    every criterion is binary (its ComplianceJudge's criteria are 0-2). The shared primitives keep the
    seed's words: ritual "or key order requirement", mirror "rubric definition AND output schema", and
    `weight` on every criterion."""
    from rubricflow.tasks.improve.primitives import PRIMITIVES, compose

    generator = seed_block("COMPLIANCE_GENERATOR = ConstraintRubric(", "examples=[COMPLIANCE_JUDGE_EXCERPT]")
    said = compose("compliance")
    for words in ("(Yes/Somewhat/No or Pass/Partial/Fail)", "Output schema should use XML tags, not JSON."):
        assert words in generator and words in said
    assert "must_use_xml_tags: true" in said and "binary (pass/fail" not in said and "binary" not in generator
    assert "must_use_xml_tags: true" in resolve("compliance-judge").output.notes
    for name, words in (
        ("ritual", "a fixed prefix (e.g., 'BECAUSE:'), word count, or key order requirement"),
        ("mirror", "State critical constraints in at least 2 locations: rubric definition AND output schema."),
        ("mirror", "If criteria demand a format, the output_schema must also demand that format"),
    ):
        assert words in SEED and words in PRIMITIVES[name], name
    assert "weight='N'" in SEED and "`weight`" in PRIMITIVES["criteria_structure"]
