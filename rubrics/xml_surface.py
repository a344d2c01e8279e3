"""Seed 001's XML codec: criteria of a rubric as an `<LLM_JUDGE_SPEC>` document for the judge's
prompt (the rubric's `surface.input_codec: xml`), and a zero-valued answer template from an answer
schema; rubrics/render.render_rubric_xml / render_criterion_xml / render_group_xml call it with the
answer schema of the criteria shown. Built with ElementTree, which does the escaping; it only constructs
and serialises, never parses (reading XML rubrics is rubrics/importers/xml_spec's job)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

from .model import Criterion, NominalScale, OrdinalScale, Rubric

ROOT = "LLM_JUDGE_SPEC"
_XML_UNSAFE = re.compile("[^\t\n\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")  # XML 1.0 cannot hold these


def spec_xml(rubric: Rubric, criteria: tuple[str, ...], schema: dict) -> str:
    """These criteria, the framing, the disqualifiers and patterns they touch (every pattern in the
    whole rubric's document), and the zero-valued template of the answer `schema`, as one indented document."""
    root = spec(rubric, criteria, schema)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode")


def output_template(schema: dict) -> Any:
    """A zero-valued instance of a JSON Schema: objects with every property, empty arrays and
    strings, 0 for numbers, false for booleans, the first value of an enum."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0]
    if kind == "object":
        return {name: output_template(sub) for name, sub in schema.get("properties", {}).items()}
    return {"array": [], "string": "", "number": 0, "integer": 0, "boolean": False}.get(kind)  # type: ignore[arg-type]


def spec(rubric: Rubric, criteria: tuple[str, ...], schema: dict) -> ET.Element:
    m = rubric.metadata
    root = ET.Element(ROOT, {"name": _clean(m.title or m.id), "id": m.id})
    _add(root, "mission", rubric.goal or m.description)
    r = rubric.role  # seed 001's RoleSpec: authority and domain as attributes
    role = _add(root, "role", r.persona, authority=r.authority or "", domain=r.domain or "")
    for o in rubric.role.obligations:
        _add(role, "must", o)
    for rule in rubric.role.constraints:
        _add(role, "must_not", rule)
    _framing(root, rubric)
    shown = [rubric.criterion(cid) for cid in criteria]
    body = _add(root, "rubric")
    for c in shown:
        _criterion(body, c)
    _rules(root, rubric, shown)
    out = _add(root, "output_schema")
    _add(out, "template", json.dumps(output_template(schema), ensure_ascii=False))
    return root


def _framing(root: ET.Element, rubric: Rubric) -> None:
    for tag, item, entries in (
        (
            "inputs",
            "input",
            [(f.description, {"name": f.name, "required": str(f.required).lower()}) for f in rubric.inputs],
        ),
        ("definitions", "def", [(d.meaning, {"term": d.term}) for d in rubric.definitions]),
        ("instructions", "step", [(i, {}) for i in rubric.instructions]),
        (
            "decision_logic",
            "rule",
            [
                (r if isinstance(r, str) else r.condition, {} if isinstance(r, str) else {"id": r.id})
                for r in rubric.decision_rules
            ],
        ),
        ("verdicts", "verdict", [(v.description, {"label": v.label}) for v in rubric.verdicts]),
    ):
        if entries:
            section = _add(root, tag)
            for text, attrs in entries:
                _add(section, item, text, **attrs)
    _calibration(root, rubric)


def _calibration(root: ET.Element, rubric: Rubric) -> None:
    """Seed 001's calibration examples: the response (summarized), its verdict, and why (the
    example's note, rubrify's `explanation`), which teaches the judge more than the verdict alone."""
    if not rubric.mapping_examples:
        return
    section = _add(root, "calibration_examples")
    for e in rubric.mapping_examples:
        example = _add(section, "example", f"{e.input} => {e.output}".strip(" =>"), id=e.id, verdict=e.verdict)
        if e.note:
            _add(example, "explanation", e.note)


def _criterion(parent: ET.Element, c: Criterion) -> None:
    el = _add(parent, "criterion", c.description, id=c.id, name=c.title, weight=f"{c.weight:g}", scale=c.scale.kind)
    scale = c.scale
    if isinstance(scale, OrdinalScale):
        for a in sorted(scale.anchors, key=lambda a: a.value):
            _add(el, "anchor", a.description, value=str(a.value), label=a.label or "")
    elif isinstance(scale, NominalScale):
        for cat in scale.categories:
            _add(el, "category", cat.description, value=str(cat.value))
    else:
        _add(el, "scale", scale.describe())
    for rule in c.mechanical_rules:
        _add(el, "mechanical_rule", rule)
    ev = c.evidence
    if ev.required or ev.min_items or ev.max_items is not None:
        bounds = {"min_items": str(ev.min_items)} | (
            {"max_items": str(ev.max_items)} if ev.max_items is not None else {}
        )
        _add(el, "evidence", "", required=str(ev.required).lower(), exact_quote=str(ev.exact_quote).lower(), **bounds)
    for ex in c.examples:
        _add(el, "example", ex.text, score=str(ex.score))


def _rules(root: ET.Element, rubric: Rubric, shown: list[Criterion]) -> None:
    """Disqualifiers and patterns that concern the shown criteria, advice, scoring, validation."""
    ids = {c.id for c in shown}
    dqs = [d for d in rubric.disqualifiers if d.kind != "criterion" or d.criterion in ids]
    if dqs:
        section = _add(root, "disqualifiers")
        for d in dqs:
            _add(section, "dq", d.description, id=d.id, kind=d.kind)
    patterns = _library(rubric, shown, dqs)
    if patterns:
        library = _add(root, "regex_library")
        for pid in patterns:
            _add(library, "pattern", rubric.pattern(pid).effective_regex(), id=pid)
    if rubric.advice:
        section = _add(root, "advice")
        for a in rubric.advice:
            _add(section, "rule", a.advice, when=",".join(a.when))
    scoring = _add(root, "scoring", rubric.scoring.formula, method=rubric.scoring.method)
    for label in rubric.decision_labels():
        _add(scoring, "label", label.label, min=f"{label.min:g}")
    if rubric.validation:
        section = _add(root, "validation")
        for v in rubric.validation:
            _add(section, "must", v)


def _library(rubric: Rubric, shown: list[Criterion], dqs: list) -> list[str]:
    """The pattern ids the document lists. The whole rubric's document (every criterion that applies
    to some text shown) carries seed 001's pattern library: every pattern, in the rubric's order,
    rubric-level ones included; a focused or group document those its criteria and disqualifiers use."""
    if {c.id for c in rubric.active_criteria()} <= {c.id for c in shown}:
        return [p.id for p in rubric.patterns]
    return sorted({p for c in shown for p in c.patterns} | {p for d in dqs for p in d.patterns})


def _add(parent: ET.Element, tag: str, text: str = "", **attrs: str) -> ET.Element:
    el = ET.SubElement(parent, tag, {k: _clean(v) for k, v in attrs.items() if v != ""})
    el.text = _clean(text) or None
    return el


def _clean(text: str) -> str:
    return _XML_UNSAFE.sub("", text)
