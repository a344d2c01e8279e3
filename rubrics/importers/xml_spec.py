"""`<LLM_JUDGE_SPEC>` XML rubrics, read leniently and safely, and written back.

Real files are not well-formed: raw `&` in attributes, raw `<` inside regexes and notes
(`When <context> provided`), trailing text after the root. We repair only what is unambiguous:
the text of every leaf element (one with no child end-tag inside) is escaped before parsing, so a
regex such as `<ref name=.*?>` stays a regex. DOCTYPE and entity declarations are refused outright
and the parser is defusedxml: no entity expansion, no external entities.
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import defusedxml.ElementTree as DET
from defusedxml import DefusedXmlException

from ..documents import RubricImportError, rubric_from_data, rubric_to_data
from ..model import Rubric
from ..verdict_form import with_the_verdict_asked
from .common import kebab, safe_id, semver

ROOT = "LLM_JUDGE_SPEC"
FORMAT_NAME = "<LLM_JUDGE_SPEC> XML"
RAW_TEXT_TAGS = {"pattern"}  # a regex: kept byte for byte, entities included (`(&lt;|<)` means both)
_ENTITY = r"&(?!(?:lt|gt|amp|quot|apos|#\d+|#x[0-9a-fA-F]+);)"
_LEAF = re.compile(r"<([A-Za-z_][\w.-]*)(\s[^<>]*?)?>((?:(?!</|<\1[\s>]).)*?)</\1\s*>", re.S)


def _escape_all(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _escape_loose(text: str) -> str:
    return re.sub(_ENTITY, "&amp;", text).replace("<", "&lt;").replace(">", "&gt;")


def repair(text: str, source: Path) -> str:
    """Turn a not-quite-XML spec into well-formed XML without changing what it says."""
    end = text.find(f"</{ROOT}>")
    start = text.find(f"<{ROOT}")
    if start < 0 or end < 0:
        raise RubricImportError(source, f"no <{ROOT}> ... </{ROOT}> element found")
    if (specs := len(re.findall(rf"<{ROOT}[\s>]", text))) > 1:  # the second was dropped without a word
        raise RubricImportError(source, f"holds {specs} <{ROOT}> specs; one file is one spec here (split it)")
    text = text[start : end + len(ROOT) + 3]
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)

    def leaf(m: re.Match) -> str:
        tag, attrs, body = m.group(1), m.group(2) or "", m.group(3)
        escape = _escape_all if tag in RAW_TEXT_TAGS else _escape_loose
        if body.startswith("<![CDATA[") and body.rstrip().endswith("]]>"):
            return m.group(0)
        return f"<{tag}{attrs}>{escape(body)}</{tag}>"

    text = _LEAF.sub(leaf, text)
    return re.sub(_ENTITY, "&amp;", text)  # raw & left in attribute values


def parse(text: str, source: Path) -> ET.Element:
    """Well-formed XML is read as it is; only a file that fails to parse is repaired."""
    if re.search(r"<!(DOCTYPE|ENTITY)", text, re.I):
        raise RubricImportError(source, "XML with DOCTYPE or ENTITY declarations is refused (no entity expansion)")
    try:
        return DET.fromstring(text.strip(), forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise RubricImportError(source, f"unsafe XML refused: {exc}") from None
    except ET.ParseError:
        pass
    repaired = repair(text, source)
    try:
        return DET.fromstring(repaired, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise RubricImportError(source, f"unsafe XML refused: {exc}") from None
    except ET.ParseError as exc:
        line, col = exc.position
        raise RubricImportError(
            source, f"XML cannot be read even leniently (line {line}, column {col}): {exc}"
        ) from None


def import_xml(text: str, source: Path) -> Rubric:
    root = parse(text, source)
    if root.tag != ROOT:
        raise RubricImportError(source, f"root element is <{root.tag}>, expected <{ROOT}>")
    lossless = root.find("rubricflow_document")
    if lossless is not None:
        return rubric_from_data(_decode(lossless), source)
    return rubric_from_data(_SpecReader(root, source).document(), source)


# --------------------------------------------------------------------------- what is read (`doctor`)

# Every element path the spec reader reads (fnmatch globs over `parent/child` paths below the root;
# `*` also spans `/`). `doctor` reports any other element of a file as ignored.
READ = (
    "mission", "goal", "purpose", "what_to_judge", "inputs", "inputs/field", "definitions", "definitions/*",
    "rubric", "criteria", "*criterion", "*criterion/anchor*", "*criterion/description", "*criterion/uses_patterns",
    "*criterion/patterns", "*criterion/mechanical_rules", "*criterion/mechanical_rules/rule", "*criterion/notes",
    "*disqualifiers", "*disqualifiers/*", "regex_library*", "pattern_library*", "patterns*",
    "advice_rules", "advice_rules/rule", "validation", "validation/*",
    "output_schema", "output_schema/constraints*", "output_schema/json_template", "output_schema/template",
    "output", "output/constraints*", "output/json_template", "output/template",
    "scoring", "scoring/formula", "scoring/labels", "scoring/labels/label",
    "decision_logic", "decision_logic/*", "mapping_examples", "mapping_examples/*",
    "mapping_examples/*/user", "mapping_examples/*/input", "mapping_examples/*/assistant",
    "mapping_examples/*/output", "mapping_examples/*/response", "mapping_examples/*/verdict",
    "scoring_guidance", "scoring_guidance/mapping", "rubricflow_document*",
)  # fmt: skip


def account(text: str, source: Path) -> tuple[list[str], list[str]]:
    """(element paths read, element paths ignored), dotted (`decision_logic.rule`), each once."""
    root = parse(text, source)
    paths: set[str] = set()

    def walk(el: ET.Element, path: str) -> None:
        for child in el:
            if isinstance(child.tag, str):
                here = f"{path}/{child.tag}" if path else child.tag
                paths.add(here)
                walk(child, here)

    walk(root, "")
    read = {p for p in paths if any(fnmatch.fnmatchcase(p, glob) for glob in READ)}
    dotted = lambda found: sorted(p.replace("/", ".") for p in found)  # noqa: E731
    return dotted(read), dotted(paths - read)


# --------------------------------------------------------------------------- reading the spec dialect


def _text(el: ET.Element | None) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def _find(el: ET.Element, *names: str) -> ET.Element | None:
    for name in names:
        found = el.find(name)
        if found is not None:
            return found
    return None


def translate_regex(regex: str) -> tuple[str, bool]:
    r"""JavaScript/Python escapes RE2 lacks: `\uXXXX` (and the 5-digit `\u1F300` authors mean) -> `\x{...}`."""

    def sub(m: re.Match) -> str:
        digits = m.group(1)
        return "\\x{" + digits + "}"

    translated = re.sub(r"\\u(1[0-9A-Fa-f]{4}|[0-9A-Fa-f]{4})", sub, regex)
    return translated, translated != regex


class _SpecReader:
    def __init__(self, root: ET.Element, source: Path):
        self.root = root
        self.source = source
        self.notes: list[str] = []

    def document(self) -> dict[str, Any]:
        root = self.root
        name = root.get("name") or self.source.stem
        patterns = self.patterns()
        pattern_ids = [p["id"] for p in patterns]
        rubric_el = _find(root, "rubric", "criteria") or root
        criteria = [self.criterion(el, i) for i, el in enumerate(rubric_el.findall("criterion"))]
        _span_lone_anchors(criteria, self.source)
        doc: dict[str, Any] = {
            "metadata": {
                "id": kebab(name),
                "version": semver(root.get("version")),
                "title": name,
                "provenance": {"format": "LLM_JUDGE_SPEC", "source": self.source.name},
            },
            "goal": _text(_find(root, "mission", "goal", "purpose")),
            "inputs": [
                {"name": f.get("name", f"input{i}"), "required": f.get("required") == "true", "description": _text(f)}
                for i, f in enumerate(root.findall("inputs/field"))
            ],
            "criteria": criteria,
            "patterns": patterns,
            "disqualifiers": self.disqualifiers(rubric_el, pattern_ids),
            "advice": [
                {"when": [w.strip() for w in rule.get("when", "").split("|") if w.strip()], "advice": _text(rule)}
                for rule in root.findall("advice_rules/rule")
            ],
            "validation": [_text(m) for m in root.findall("validation/*")],
            "output": self.output(),
            **self.key_order(),
            "scoring": self.scoring(),
            **self.compliance(),
        }
        doc = with_the_verdict_asked(doc)  # before the bands: the verdict's labels first (rubrics/verdict_form.py)
        score_by_bands(doc)
        if self.notes:
            doc["metadata"]["provenance"]["import_notes"] = "; ".join(self.notes)
        return doc

    def patterns(self) -> list[dict]:
        """One pattern per regex: a named group (`<refusal_regexes><r>..</r><r>..</r>`) gives one
        pattern per member, `refusal_regexes.1`, `refusal_regexes.2`, ... (the group's name kept)."""
        library = _find(self.root, "regex_library", "pattern_library", "patterns")
        if library is None:
            return []
        flags = library.get("flags", "")
        out = []
        for i, el in enumerate(list(library)):
            members = list(el)
            if not members:
                out.append(self.pattern(el, safe_id(el.get("id") or el.get("name"), f"P{i + 1}"), flags, ""))
                continue
            group = safe_id(el.get("id") or el.get("name") or el.tag, f"P{i + 1}")
            for j, member in enumerate(members, start=1):
                pid = safe_id(member.get("id") or member.get("name"), f"{group}.{j}")
                out.append(self.pattern(member, pid, el.get("flags", flags), group))
        return out

    def pattern(self, el: ET.Element, pid: str, flags: str, group: str) -> dict:
        regex, changed = translate_regex("".join(el.itertext()).strip())
        if changed:
            self.notes.append(f"pattern {pid}: \\u escapes rewritten as RE2 \\x{{...}}")
        found = {"id": pid, "regex": regex, "flags": "".join(sorted(set(el.get("flags", flags)) & set("imsU")))}
        if group:
            found["description"] = f"one of the group {group}"
        return found

    def compliance(self) -> dict[str, Any]:
        """What a ComplianceJudge states beside its criteria: what to judge, definitions, decision
        rules, the verdict space with its scores, and input -> verdict mapping examples."""
        root = self.root
        found: dict[str, Any] = {}
        if (what := _text(root.find("what_to_judge"))) != "":
            found["instructions"] = [what]
        definitions = [
            {"term": el.get("id") or el.get("term") or el.get("name") or f"D{i + 1}", "meaning": _text(el)}
            for i, el in enumerate(root.findall("definitions/*"))
        ]
        rules = [
            {"id": safe_id(el.get("id"), f"R{i + 1}"), "condition": _text(el), "verdict": _rule_verdict(_text(el))}
            for i, el in enumerate(root.findall("decision_logic/*"))
        ]
        verdicts = _verdicts(
            _text(root.find("output_schema/constraints/allowed_judgements")),
            _text(root.find("scoring_guidance/mapping")),
        )
        labels = [v["label"] for v in verdicts]
        examples = [_mapping_example(el, i, labels) for i, el in enumerate(root.findall("mapping_examples/*"))]
        for key, value in (
            ("definitions", definitions),
            ("decision_rules", rules),
            ("verdicts", verdicts),
            ("mapping_examples", examples),
        ):
            if value:
                found[key] = value
        return found

    def criterion(self, el: ET.Element, index: int) -> dict:
        cid = safe_id(el.get("id"), f"C{index + 1}")
        anchors = []
        for child in el:
            m = re.fullmatch(r"anchor_?(\d+)", child.tag)
            if m:
                anchors.append({"value": int(m.group(1)), "description": _text(child)})
            elif child.tag == "anchor" and child.get("value", "").lstrip("-").isdigit():
                anchors.append(
                    {"value": int(child.get("value", "")), "label": child.get("label", ""), "description": _text(child)}
                )
        scale: dict = {"kind": "ordinal", "anchors": anchors} if anchors else {"kind": "binary"}
        uses = _text(_find(el, "uses_patterns", "patterns"))
        doc: dict[str, Any] = {
            "id": cid,
            "title": el.get("name") or el.get("title") or "",
            "description": _text(el.find("description")),
            "scale": scale,
            "weight": float(el.get("weight", 1)),
            "mechanical_rules": [_text(r) for r in el.findall("mechanical_rules/rule")],
            "patterns": [p.strip() for p in re.split(r"[,|\s]+", uses) if p.strip()],
            "notes": _text(el.find("notes")),
        }
        if genre := el.get("genre"):
            doc["genre"] = [g.strip() for g in genre.split(",")]
        if el.get("importance") in ("essential", "important"):
            doc["importance"] = el.get("importance")
        return doc

    def disqualifiers(self, rubric_el: ET.Element, pattern_ids: list[str]) -> list[dict]:
        out = []
        for i, el in enumerate(rubric_el.findall("disqualifiers/*") or self.root.findall("disqualifiers/*")):
            text = _text(el)
            named = [pid for pid in pattern_ids if re.search(rf"(?<![\w]){re.escape(pid)}(?![\w])", text)]
            dq: dict[str, Any] = {"id": safe_id(el.get("id"), f"DQ{i + 1}"), "description": text}
            if named:
                dq.update(kind="pattern", patterns=named)
            else:
                dq["kind"] = "judge"
            out.append(dq)
        return out

    def key_order(self) -> dict:
        """`<key_order>` / `<fixed_key_order>` asks for a fixed key order, which seed 000 counts as a
        ritual ("a fixed prefix (e.g., 'BECAUSE:'), word count, or key order requirement"): it sets
        surface.enforce_key_order (its note keeps the author's order)."""
        schema = _find(self.root, "output_schema", "output")
        tags = {el.tag for el in schema.findall("constraints/*")} if schema is not None else set()
        return {"surface": {"enforce_key_order": True}} if tags & {"key_order", "fixed_key_order"} else {}

    def output(self) -> dict:
        schema = _find(self.root, "output_schema", "output")
        if schema is None:
            return {}
        constraints, notes = [], []
        for el in schema.findall("constraints/*"):
            text = _text(el)
            parsed = _style_constraint(el.tag, text)
            if parsed:
                constraints.append(parsed)
            else:
                notes.append(f"{el.tag}: {text}")
        template = _text(schema.find("json_template")) or "".join(_itertext(schema.find("template"))).strip()
        return {"template": template, "constraints": constraints, "notes": notes}

    def scoring(self) -> dict:
        scoring = self.root.find("scoring")
        if scoring is None:
            guidance = _text(self.root.find("scoring_guidance"))
            return {"formula": guidance} if guidance else {}
        labels = []
        for el in scoring.findall("labels/label"):
            low = float(el.get("min", 0))
            labels.append({"label": _text(el), "min": low / 100 if low > 1 or float(el.get("max", 0)) > 1 else low})
        return {"formula": _text(scoring.find("formula")), "labels": labels}


_BAND = re.compile(r"risk\s*(?:(≥|>=)\s*(\d+)|(\d+)\s*[–-]\s*(\d+)|(\d+))\s*(?:→|->|=>)\s*\"([^\"]+)\"")
_RISK = re.compile(r"risk\s*=\s*(\d+)\s*-\s*score")
# The outcome a formula gives a disqualified text: AntiLLMY's `If any DQ fired ⇒ score=0, risk=15,
# band="FAIL"`, ZinsserJudge v1's `If any DQ: set score=0 and class="Rejected"` (v3: `=> ... class=`).
_DQ_BAND = re.compile(r"If any DQ\b(?:[^.]|\.\d)*?\b(?:band|class)\s*=\s*\"([^\"]+)\"")


def _span_lone_anchors(criteria: list[dict], source: Path) -> None:
    """A criterion with one <anchor_N> keeps it, on the levels the rubric's other anchors span
    (read as pass/fail, its anchor was lost). Seed 000 asks for two ("Each criterion MUST have >= 2
    <anchor_N> tags"): the lattice's S1 and P_anchored still report it."""
    levels = [a["value"] for c in criteria for a in c["scale"].get("anchors", ())]
    for c in criteria:
        anchors = c["scale"].get("anchors", ())
        if len(anchors) != 1:
            continue
        if min(levels) == max(levels):
            raise RubricImportError(
                source,
                f"criterion {c['id']}: one anchor (anchor_{anchors[0]['value']}) and no other level in the rubric "
                "to span; a scale needs two <anchor_N> tags",
            )
        c["scale"] |= {"min": min(levels), "max": max(levels)}


def label_the_disqualified(scoring: dict[str, Any]) -> None:
    """The formula's own label for a disqualified text (a band or a class), unless the decision rules
    already named one, so a rejected text reads as its author wrote it, not as `disqualified`."""
    if "disqualified_label" not in scoring and (dq := _DQ_BAND.search(scoring.get("formula", ""))):
        scoring["disqualified_label"] = dq.group(1)


def score_by_bands(doc: dict[str, Any]) -> None:
    """A detection spec's risk bands (AntiLLMY: `risk = 15 - score`, `band = (risk ≥12 → "Severe";
    risk 8–11 → "High"; ...)`) as decision labels on the unit score: a band of risks [lo, hi] is the
    scores from (max - hi) / max up, floored at 6 decimals (scores lie 1/max apart, so the floor never
    crosses into the next band). Passing is the bands below "High" risk (risk < 8 of 15, as the
    library's anti-llmy does); a disqualifier gives the formula's DQ band (`band="FAIL"`)."""
    scoring = doc.get("scoring") or {}
    label_the_disqualified(scoring)
    formula = scoring.get("formula", "")
    risk = _RISK.search(formula)
    if scoring.get("labels") or not risk:
        return
    top = int(risk.group(1))
    labels: list[dict[str, Any]] = []
    for m in _BAND.finditer(formula):
        high = top if m.group(1) else int(m.group(4) or m.group(5))
        labels.append({"label": m.group(6), "min": math.floor((top - high) / top * 1e6) / 1e6})
    if len(labels) < 2:
        return
    scoring["labels"] = sorted(labels, key=lambda band: -band["min"])
    scoring["invert"] = False
    passing = [band["min"] for band in labels if band["min"] > 0.5]
    if passing:
        scoring["pass_threshold"] = min(passing)


def _itertext(el: ET.Element | None) -> list[str]:
    return list(el.itertext()) if el is not None else []


_VERDICT_IN_RULE = re.compile(r"(?:Judge?ment|Verdict)\s*=\s*([A-Za-z][\w-]*)", re.I)


def _rule_verdict(condition: str) -> str | None:
    """`... => Judgement = Somewhat.` gives Somewhat."""
    m = _VERDICT_IN_RULE.search(condition)
    return m.group(1) if m else None


def _verdicts(allowed: str, mapping: str) -> list[dict]:
    """`<allowed_judgements>Yes,Somewhat,No` with scores from `Yes=1.0, Somewhat=0.5, No=0.0`."""
    scores = {m.group(1): float(m.group(2)) for m in re.finditer(r"([A-Za-z][\w-]*)\s*=\s*(\d+(?:\.\d+)?)", mapping)}
    labels = [v.strip() for v in re.split(r"[,|/]", allowed) if v.strip()] or list(scores)
    return [{"label": label, **({"score": scores[label]} if label in scores else {})} for label in labels]


def _mapping_example(el: ET.Element, index: int, labels: list[str]) -> dict:
    """`<example id="E5"><user>..<assistant>..<verdict>Somewhat (soft-refusal + compliance).</verdict>`:
    the verdict is its first word (checked against the verdict space by the compiler), the rest a note."""
    said = _text(el.find("verdict"))
    m = re.match(r"\s*([^\s.,;:()]+)[.,;:]?\s*(.*)$", said, re.S)
    label, rest = (m.group(1), m.group(2)) if m else (said, "")
    note = rest.strip().removesuffix(".").strip()
    if note.startswith("(") and note.endswith(")"):
        note = note[1:-1]
    return {
        "id": safe_id(el.get("id"), f"E{index + 1}"),
        "input": _text(_find(el, "user", "input")),
        "output": _text(_find(el, "assistant", "output", "response")),
        "verdict": label or said,
        "note": note,
    }


def _style_constraint(tag: str, text: str) -> dict | None:
    """Read constraints such as "Begin with 'BECAUSE:' and use exactly 35 words, end with a period."."""
    field = tag.split("_")[0]
    field = {"violations": "disqualifiers"}.get(field, field)
    found: dict[str, Any] = {}
    if m := re.search(r"[Bb]egins? with '([^']+)'", text):
        found["prefix"] = m.group(1)
    if re.search(r"end(?:s|ing)? with (?:a period|'\.')", text):
        found["suffix"] = "."
    if m := re.search(r"exactly (\d+) words", text):
        found["min_words"] = found["max_words"] = int(m.group(1))
    if m := re.search(r"(?:≤|<=|at most |up to )\s*(\d+) characters", text):
        found["max_chars"] = int(m.group(1))
    if m := re.search(r"exactly (\d+) (?:semicolon-separated )?(?!words)\w+", text):
        found["min_items"] = found["max_items"] = int(m.group(1))
        if "semicolon" in text:
            found["separator"] = ";"
    elif m := re.search(r"up to (\d+) (?!characters)", text):
        found["max_items"] = int(m.group(1))
    if not found:
        return None
    return {"id": safe_id(tag, "constraint"), "field": field, "description": text, **found}


# --------------------------------------------------------------------------- writing


def dump_xml(rubric: Rubric) -> str:
    """The spec dialect for people and other tools, plus a lossless copy for re-import."""
    m = rubric.metadata

    def sub(parent: ET.Element, tag: str, text: str = "", **attrs: str) -> ET.Element:
        el = ET.SubElement(parent, tag, {k: _clean(v) for k, v in attrs.items()})
        el.text = _clean(text) or None
        return el

    root = ET.Element(ROOT, {"version": m.version, "name": _clean(m.title or m.id), "schema": "rubricflow/1"})
    sub(root, "mission", rubric.goal)
    if rubric.patterns:
        lib = sub(root, "regex_library")
        for p in rubric.patterns:
            sub(lib, "pattern", p.effective_regex(), id=p.id)
    rub = sub(root, "rubric")
    for c in rubric.criteria:
        el = sub(rub, "criterion", id=c.id, name=c.title, weight=f"{c.weight:g}")
        for anchor in getattr(c.scale, "anchors", ()):
            sub(el, f"anchor_{anchor.value}".replace("-", "minus"), anchor.description)
        if c.patterns:
            sub(el, "uses_patterns", ",".join(c.patterns))
    if rubric.disqualifiers:
        dqs = sub(rub, "disqualifiers")
        for d in rubric.disqualifiers:
            sub(dqs, "dq", d.description, id=d.id)
    _dump_compliance(rubric, root, sub)
    if rubric.validation:
        val = sub(root, "validation")
        for v in rubric.validation:
            sub(val, "must", v)
    root.append(_encode("rubricflow_document", rubric_to_data(rubric)))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n"


def _dump_compliance(rubric: Rubric, root: ET.Element, sub: Any) -> None:
    """Definitions, decision logic, mapping examples and the verdict space, in the spec dialect."""
    if rubric.definitions:
        defs = sub(root, "definitions")
        for d in rubric.definitions:
            sub(defs, "def", d.meaning, id=d.term)
    if rubric.decision_rules:
        logic = sub(root, "decision_logic")
        for i, rule in enumerate(rubric.decision_rules):
            text = rule if isinstance(rule, str) else rule.condition
            sub(logic, "rule", text, id=f"R{i + 1}" if isinstance(rule, str) else rule.id)
    if rubric.mapping_examples:
        examples = sub(root, "mapping_examples")
        for e in rubric.mapping_examples:
            ex = sub(examples, "example", id=e.id)
            sub(ex, "user", e.input)
            sub(ex, "assistant", e.output)
            sub(ex, "verdict", f"{e.verdict} ({e.note})" if e.note else e.verdict)
    if rubric.verdicts or rubric.output.template:
        schema = sub(root, "output_schema")
        if rubric.verdicts:
            sub(sub(schema, "constraints"), "allowed_judgements", ",".join(v.label for v in rubric.verdicts))
        if rubric.output.template:
            sub(schema, "template", rubric.output.template)


def _clean(text: str) -> str:
    return _XML_UNSAFE.sub("", text)


_NAME = re.compile(r"[A-Za-z_][\w.-]*", re.ASCII)  # fullmatch: "$" would let "A\n" through
_XML_UNSAFE = re.compile("[^\t\n\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _encode(tag: str, value: Any) -> ET.Element:
    """Typed generic XML: `t` says d(ict), l(ist), s(tr), j(son-quoted str), i(nt), f(loat), b(ool), n(ull)."""
    if _NAME.fullmatch(tag) and not tag.lower().startswith("xml"):
        attrs = {}
    elif _XML_UNSAFE.search(tag) or any(ch in tag for ch in "\t\n\r"):  # attribute values lose these
        attrs = {"jkey": json.dumps(tag)}
    else:
        attrs = {"key": tag}
    el = ET.Element(tag if not attrs else "entry", attrs)
    if isinstance(value, dict):
        el.set("t", "d")
        for key, item in value.items():
            el.append(_encode(str(key), item))
    elif isinstance(value, list):
        el.set("t", "l")
        for item in value:
            el.append(_encode("item", item))
    elif isinstance(value, bool):
        el.set("t", "b")
        el.text = "true" if value else "false"
    elif isinstance(value, int):
        el.set("t", "i")
        el.text = str(value)
    elif isinstance(value, float):
        el.set("t", "f")
        el.text = repr(value)
    elif value is None:
        el.set("t", "n")
    elif _XML_UNSAFE.search(str(value)):  # XML 1.0 cannot hold control characters (or keep a bare \r)
        el.set("t", "j")
        el.text = json.dumps(str(value))
    else:
        el.set("t", "s")
        el.text = str(value)
    return el


def _key(el: ET.Element) -> str:
    if "jkey" in el.attrib:
        return json.loads(el.attrib["jkey"])
    return el.get("key", el.tag)


def _decode(el: ET.Element) -> Any:
    kind = el.get("t", "s")
    if kind == "d":
        return {_key(child): _decode(child) for child in el}
    if kind == "l":
        return [_decode(child) for child in el]
    text = el.text or ""
    return {
        "b": lambda: text == "true",
        "i": lambda: int(text),
        "f": lambda: float(text),
        "n": lambda: None,
        "j": lambda: json.loads(text),
    }.get(kind, lambda: text)()
