"""Seed 001's surface policy, set in the rubric's `surface:` section: the rubric as an
<LLM_JUDGE_SPEC> XML document, enforce_key_order, criterion_focus, default decision labels and a
confidence per criterion; the XML codecs and the zero-valued answer template."""

import defusedxml.ElementTree as DET
import pytest
import yaml

from rubricflow.errors import InputError
from rubricflow.rubrics.compiler import compile_or_raise, content_hash, rubric_document
from rubricflow.rubrics.formats import dump_yaml, loads_rubrics
from rubricflow.rubrics.library import Library
from rubricflow.rubrics.model import MappingExample, Pattern
from rubricflow.rubrics.render import (
    CallUnit,
    answer_template,
    output_schema,
    render,
    render_criterion_xml,
    render_group_xml,
    render_rubric_xml,
    with_surface,
)
from rubricflow.rubrics.scoring import verdict
from rubricflow.rubrics.xml_surface import output_template
from rubricflow.tasks.judging.verify import verify_answer

from ..conftest import SHARED

SEED_001 = (SHARED.parent / "seeds" / "001_646671bcea772b80.txt").read_text(encoding="utf-8")
SLOP = Library().bundle("llm-slop").rubric
IDS = [c.id for c in SLOP.criteria]


def surfaced(**fields) -> object:
    """llm-slop with a surface section, as a rubric author writes it in YAML."""
    data = yaml.safe_load(dump_yaml(SLOP))
    data["surface"] = fields
    return loads_rubrics(yaml.safe_dump(data), "surfaced.yaml")[0]


def test_the_default_surface_keeps_every_rubric_prompt_and_hash():
    assert "surface" not in rubric_document(SLOP) and "surface" not in dump_yaml(SLOP)
    same = surfaced(input_codec="markdown", criterion_focus="focused")
    assert content_hash(same) == content_hash(SLOP)
    xml = surfaced(input_codec="xml")
    assert content_hash(xml) != content_hash(SLOP) and rubric_document(xml)["surface"]["input_codec"] == "xml"
    assert compile_or_raise(xml).rubric.surface.input_codec == "xml"


def test_input_codec_xml_puts_the_rubric_in_the_prompt_as_an_llm_judge_spec_document():
    plain = render(SLOP, "per_criterion").unit(IDS[0])
    unit = render(surfaced(input_codec="xml"), "per_criterion").unit(IDS[0])
    assert "## Criteria" in plain.system and "<LLM_JUDGE_SPEC" not in plain.system
    start, end = unit.system.index("<LLM_JUDGE_SPEC"), unit.system.index("</LLM_JUDGE_SPEC>")
    doc = DET.fromstring(unit.system[start : end + len("</LLM_JUDGE_SPEC>")])
    assert [c.get("id") for c in doc.iter("criterion")] == [IDS[0]]  # focused: the unit's criterion only
    assert doc.find("mission").text == SLOP.goal and doc.find("regex_library") is not None
    assert "Score exactly these criteria" in unit.system and "<<<BEGIN NAME TAG>>>" in unit.system
    assert unit.fingerprint != plain.fingerprint


def test_criterion_focus_full_shows_every_criterion_while_scoring_only_the_units_own():
    for codec, marker in (("markdown", "\n### {}"), ("xml", 'criterion id="{}"')):
        focused = render(surfaced(input_codec=codec), "per_criterion").unit(IDS[0])
        full = render(surfaced(input_codec=codec, criterion_focus="full"), "per_criterion").unit(IDS[0])
        assert [marker.format(cid) in focused.system for cid in IDS] == [True] + [False] * (len(IDS) - 1)
        assert all(marker.format(cid) in full.system for cid in IDS), codec
        assert list(full.schema["properties"]["criteria"]["properties"]) == [IDS[0]]


def test_enforce_key_order_asks_for_the_schema_order_and_warns_when_an_answer_leaves_it():
    rubric = surfaced(enforce_key_order=True)
    unit = CallUnit(IDS[0], (IDS[0],))
    system = render(rubric, "per_criterion").unit(IDS[0]).system
    assert f"exactly this order: criteria, criteria.{IDS[0]}, criteria.{IDS[0]}.value" in system
    entry = {"value": 3, "rationale": "BECAUSE: fine.", "evidence": []}
    ordered = {"criteria": {IDS[0]: entry}, "disqualifiers": []}
    reversed_ = {"disqualifiers": [], "criteria": {IDS[0]: dict(reversed(list(entry.items())))}}
    assert verify_answer(rubric, unit, ordered, "a text")[2] == []
    warnings = verify_answer(rubric, unit, reversed_, "a text")[2]
    assert len(warnings) == 2 and "answer: keys" in warnings[0] and f"answer.criteria.{IDS[0]}" in warnings[1]
    assert verify_answer(SLOP, unit, reversed_, "a text")[2] == []  # not asked: no warning


def test_default_decision_labels_apply_only_where_the_rubric_gives_none_and_asks():
    bare = SLOP.model_copy(update={"scoring": SLOP.scoring.model_copy(update={"labels": ()})})
    assert bare.decision_labels() == ()
    asked = with_surface(bare, ["default_labels=true"])
    assert [(lab.label, lab.min) for lab in asked.decision_labels()][:2] == [
        ("Publish-ready", 0.9),
        ("Strong draft", 0.75),
    ]
    assert with_surface(SLOP, ["default_labels=true"]).decision_labels() == SLOP.scoring.labels  # the rubric's own win
    assert "score >= 0.9: Publish-ready" in render(asked, "holistic").unit("_all").system
    values = {c.id: max(c.scale.domain()) for c in SLOP.criteria}
    assert verdict(asked, values).label in {"Publish-ready", "Fundamentally unclear"}
    assert verdict(bare, values).label is None


def test_confidence_per_criterion_is_in_the_answer_schema_and_read_back():
    rubric = surfaced(confidence=True)
    unit = CallUnit(IDS[0], (IDS[0],))
    schema = output_schema(rubric, unit)["properties"]["criteria"]["properties"][IDS[0]]
    assert schema["properties"]["confidence"] == {"type": "number", "minimum": 0, "maximum": 1}
    assert (
        "confidence" in schema["required"]
        and "confidence" not in output_schema(SLOP, unit)["properties"]["criteria"]["properties"][IDS[0]]["properties"]
    )
    entry = {"value": 3, "rationale": "BECAUSE: fine.", "evidence": [], "confidence": 0.8}
    [result], _, _ = verify_answer(rubric, unit, {"criteria": {IDS[0]: entry}, "disqualifiers": []}, "a text")
    assert result.confidence == 0.8 and result.warnings == []
    entry["confidence"] = 7
    [result], _, _ = verify_answer(rubric, unit, {"criteria": {IDS[0]: entry}, "disqualifiers": []}, "a text")
    assert result.confidence is None and result.warnings == ["confidence missing or outside 0-1: 7"]


def test_the_xml_codecs_render_a_rubric_a_criterion_a_group_and_a_zero_valued_template():
    whole = DET.fromstring(render_rubric_xml(SLOP))
    assert whole.tag == "LLM_JUDGE_SPEC" and [c.get("id") for c in whole.iter("criterion")] == IDS
    one = DET.fromstring(render_criterion_xml(SLOP, IDS[1]))
    assert [c.get("id") for c in one.iter("criterion")] == [IDS[1]]
    group = DET.fromstring(render_group_xml(SLOP, tuple(IDS[:2])))
    assert [c.get("id") for c in group.iter("criterion")] == IDS[:2]
    template = answer_template(SLOP, CallUnit("_all", tuple(IDS)))
    assert template == {
        "criteria": {cid: {"value": 0, "rationale": "", "evidence": []} for cid in IDS},
        "disqualifiers": [],
    }
    assert group.find("output_schema/template").text.startswith('{"criteria": {"' + IDS[0])
    assert output_template(
        {
            "type": "object",
            "properties": {
                "n": {"type": "number"},
                "ok": {"type": "boolean"},
                "v": {"type": "string", "enum": ["b", "a"]},
            },
        }
    ) == {"n": 0, "ok": False, "v": "b"}
    text = SLOP.model_copy(update={"goal": 'Tags <b> & "quotes" stay text'})
    assert DET.fromstring(render_rubric_xml(text)).find("mission").text == 'Tags <b> & "quotes" stay text'


def test_a_bad_surface_setting_is_one_line_naming_it():
    with pytest.raises(InputError, match="criterion_focus"):
        with_surface(SLOP, ["criterion_focus=wide"])
    with pytest.raises(InputError, match="expected KEY=VALUE"):
        with_surface(SLOP, ["colour=red"])


def test_the_whole_rubrics_document_carries_the_pattern_library_and_the_examples_explanations():
    """Seed 001: "The XML document includes: ... calibration examples, ... pattern library, ...". A
    rubric-level pattern no criterion names (rubrify declares every pattern so) and a calibration
    example's explanation (MappingExample.note) were left out of the document."""
    assert "The XML document includes: mission, role, rubric" in SEED_001
    assert "definitions, calibration examples, advice rules" in SEED_001 and "pattern library" in SEED_001
    hedge = Pattern(id="P_hedge", regex=r"\bperhaps\b", flags="i")
    example = MappingExample(id="E1", output="a reply that hedges", verdict="No", note="EXPLANATION_TEXT hedging")
    rubric = SLOP.model_copy(update={"patterns": (*SLOP.patterns, hedge), "mapping_examples": (example,)})
    whole = DET.fromstring(render_rubric_xml(rubric))
    library = {p.get("id"): p.text for p in whole.iter("pattern")}
    assert list(library) == [p.id for p in rubric.patterns] and library["P_hedge"] == r"(?i)\bperhaps\b"
    shown = whole.find("calibration_examples/example")
    assert (shown.get("verdict"), shown.find("explanation").text) == ("No", "EXPLANATION_TEXT hedging")
    focused = DET.fromstring(render_criterion_xml(rubric, IDS[0]))  # a focused document: the patterns it uses
    assert "P_hedge" not in {p.get("id") for p in focused.iter("pattern")}
    full = render(with_surface(rubric, ["input_codec=xml", "criterion_focus=full"]), "per_criterion").unit(IDS[0])
    assert "EXPLANATION_TEXT hedging" in full.system and r"(?i)\bperhaps\b" in full.system
