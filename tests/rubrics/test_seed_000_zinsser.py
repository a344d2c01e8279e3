"""Seed 000's ZinsserJudge v3 in the library (weights, genres, G_NFL, patterns as the seed writes them,
scored by the rubric's own formula), the v1 spec's `class="Rejected"` for a disqualified text, and the
`inverted` primitive that asks for a rubric whose higher score is cleaner."""

from __future__ import annotations

import json
import re

import pytest

from rubricflow.rubrics.formats import load_rubric
from rubricflow.rubrics.importers.xml_spec import label_the_disqualified
from rubricflow.rubrics.library import resolve
from rubricflow.rubrics.properties import properties, seed_profile
from rubricflow.rubrics.render import call_units, render_system_prompt
from rubricflow.rubrics.scoring import verdict
from rubricflow.tasks.improve.primitives import PRIMITIVES

from ..conftest import SHARED, SHARED_RUBRICS

SEED = (SHARED.parent / "seeds" / "000_c0ea53250dcb8cd9.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def zinsser():
    return resolve("zinsser-judge")


def test_the_library_zinsser_judge_has_the_seeds_v3_weights_and_genres(zinsser):
    for cid, weight in re.findall(r'AdjustWeight\("(\w+)", (\d+)\)', SEED):  # C3 10, C4 11, C12 11
        assert zinsser.criterion(cid).weight == int(weight), cid
    added = re.findall(r'AddCriterion\(Criterion\(id="(\w+)", name="([^"]+)", weight=(\d+)(?:, genre="([^"]+)")?', SEED)
    assert [a[0] for a in added] == ["A_VOX", "A_CONF", "A_DEC", "G_NFL", "G_EXP"]
    for cid, name, weight, genre in added:
        c = zinsser.criterion(cid)
        assert (c.title, c.weight, c.genre) == (name, int(weight), tuple(filter(None, genre.split(","))))
    assert zinsser.criterion("G_EXP").genre == ("explainer", "science_tech", "academic")
    assert zinsser.criterion("G_NFL").genre == ("nonfiction_literature",)


def test_the_library_zinsser_judge_has_the_seeds_patterns_as_written(zinsser):
    library = {p.id: p for p in zinsser.patterns}
    written = re.findall(r'AddPattern\("(\w+)", (r?)"([^"]*)"\)', SEED)
    assert len(written) == 12
    for pid, raw, text in written:
        if pid == "buzzwords":  # v3 folds it into journalese: the seed's count, v2 x6 + v3 x5, is 11
            assert "impactful" in library["journalese"].regex and pid not in library
            continue
        p = library[pid]
        source = p.regex if raw else "|".join(p.words) or re.sub(r"^(\\b)?\(", "", p.regex)
        if "..." in text:  # the seed elides the rest: what it shows starts the pattern
            assert source.startswith(text.split("...")[0]), pid
        else:
            assert source == text, pid
    assert library["adverb_ly"].regex == r"\b\w+ly\b" and library["which_wo_comma"].regex == r"\bwhich\b(?!\s*,)"
    assert (library["exclamation"].regex, library["semicolon"].regex) == ("!", ";")


def test_the_library_zinsser_judge_scores_by_its_own_formula(zinsser):
    """Worked example: "Sum weighted core (C1-C12) + active genre modules + attitude lenses; normalize to
    100". Core C1-C12 at 5 (weights 14+10+10+11+8+9+6+7+6+7+4+11 = 103), A_VOX/A_CONF/A_DEC at 0 (2 each),
    no genre: 103 / (103 + 6) = 94.5 -> "Publish-ready" (the three groups averaged gave 0.5, "Needs
    major revision")."""
    assert "Normalize to 100" in zinsser.scoring.formula and "attitude lenses (A_*)" in zinsser.scoring.formula
    core = {f"C{n}": 5 for n in range(1, 13)}
    assert sum(zinsser.criterion(c).weight for c in core) == 103
    v = verdict(zinsser, core | {"A_VOX": 0, "A_CONF": 0, "A_DEC": 0})
    assert (round(v.score * 100, 1), v.label, v.passed) == (94.5, "Publish-ready", True)
    # science_tech: G_SCI (6) at 3 and G_EXP (6) at 0 join the sum: (103 + 6 + 6) / (103 + 12 + 6) = 95.0
    values = core | {"A_VOX": 2, "A_CONF": 2, "A_DEC": 2, "G_SCI": 3, "G_EXP": 0}
    assert round(verdict(zinsser, values, genre="science_tech").score * 100, 1) == 95.0
    # any genre, any values: the flat weighted mean of the active criteria, as the formula states
    for genre in (None, "travel", "science_tech", "nonfiction_literature", "email"):
        active = zinsser.active_criteria(genre)
        values = {c.id: (i * 7) % (c.scale.high + 1) for i, c in enumerate(zinsser.criteria)}
        units = {c.id: values[c.id] / c.scale.high for c in active}
        flat = sum(c.weight * units[c.id] for c in active) / sum(c.weight for c in active)
        assert verdict(zinsser, values, genre=genre).score == pytest.approx(flat, abs=1e-8), genre


def test_a_disqualified_zinsser_v1_is_rejected_as_its_formula_says():
    """v1: `If any DQ: set score=0 and class="Rejected"` -> score 0, label "Rejected" (was "disqualified")."""
    v1 = load_rubric(SHARED_RUBRICS / "secemp9/on_writing_well_v1.xml")
    assert v1.scoring.disqualified_label == "Rejected"
    top = {c.id: c.scale.high for c in v1.criteria}
    v = verdict(v1, top, judge_disqualifiers={"DQ2"})
    assert (v.score, v.label, v.passed, v.disqualified) == (0.0, "Rejected", False, ("DQ2",))
    for formula, label in (
        ('If any DQ => score=0, class="Rejected".', "Rejected"),  # on_writing_well_v3.xml
        ('If any DQ fired ⇒ score=0, risk=15, band="FAIL".', "FAIL"),  # anti_slop_rubric.xml
        ('If any DQ: set score=0.0 and class="Rejected".', "Rejected"),
    ):
        scoring = {"formula": formula}
        label_the_disqualified(scoring)
        assert scoring["disqualified_label"] == label
    assert load_rubric(SHARED_RUBRICS / "secemp9/anti_slop_rubric.xml").scoring.disqualified_label == "FAIL"


def test_the_inverted_primitive_asks_for_higher_is_cleaner():
    """Seed: "Scoring should be INVERTED: higher score = cleaner." A detection rubric built as the
    primitive says scores a text with no hits at the top (1.0, "Minimal"), and P_inverted holds."""
    said = PRIMITIVES["inverted"]
    assert "higher score = cleaner" in said and "risk = 1 - score" in said and "invert: true" not in said
    anti = resolve("anti-llmy")  # every criterion's top level is "No hits"
    built = anti.scoring.model_copy(update={"invert": False, "formula": "risk = 1 - score"})
    r = anti.model_copy(update={"scoring": built})
    clean = {f"C{i}": 3 for i in range(1, 6)}
    v = verdict(r, clean)
    assert (v.score, v.label) == (1.0, "Minimal") and verdict(r, {k: 0 for k in clean}).score == 0.0
    assert properties(r)["P_inverted"] is True and seed_profile(r) == "detection"
    # `invert` is for criteria that count hits (top = most): no hits then also scores 1.0
    risky = r.model_copy(update={"scoring": built.model_copy(update={"invert": True})})
    assert verdict(risky, {k: 0 for k in clean}).score == 1.0 and properties(risky)["P_inverted"] is True


def test_the_offline_detection_draft_follows_the_primitive():
    """The offline drafter shapes a detection draft as the primitive says: every rule followed (each
    binary criterion at 1, no hits) is the cleanest score, 1.0, "low risk" (it was 0.0 when inverted)."""
    from rubricflow.rubrics.documents import rubric_from_data
    from rubricflow.tasks.standins.offline_judge import draft_rubric

    source = "# House style\n\n- Every number cites its source in brackets.\n- Sentences stay under thirty words.\n"
    asked = f"Use metadata.id 'house'\nRubric kind: detection.\n<<<BEGIN SOURCE x>>>\n{source}\n<<<END SOURCE x>>>"
    r = rubric_from_data(draft_rubric(asked), "detection")
    assert not r.scoring.invert and seed_profile(r) == "detection" and properties(r)["P_inverted"] is True
    v = verdict(r, {c.id: 1 for c in r.criteria})
    assert (v.score, v.label, v.passed) == (1.0, "low risk", None)


def test_the_library_zinsser_judge_has_the_seeds_dq5(zinsser):
    """Seed 000: `AddDisqualifier(Disqualifier("DQ5", "Schema ritual violated"))` (v1 -> v2), worded as
    books2rubrics/on_writing_well_v3.xml words it (before: a DQ5 of our own, "Not nonfiction prose to
    judge", which rejected lists and code and never a broken ritual)."""
    assert 'AddDisqualifier(Disqualifier("DQ5", "Schema ritual violated")),' in SEED
    dq5 = next(d for d in zinsser.disqualifiers if d.id == "DQ5")
    assert (dq5.kind, dq5.description) == (
        "judge",
        "Schema ritual violated (non-JSON, wrong key order, rationale ≠ 35 words).",
    )


def test_the_library_zinsser_judge_keeps_v3s_output_schema(zinsser):
    """Seed 000's controllable states name v3's "<evidence_rule> v3.xml:283" and "<pattern_library> +
    <diagnostic_rule>", its observable ones the "diagnostics object {"hedges": 8, "adverbs_ly": 4, ...}",
    and v2 adds "add_diagnostics . add_dq5 . add_edits_constraint". The library's v3 keeps them as the
    XML importer does (notes), with the diagnostics object in the template and in the key order."""
    assert "Evidence requirements <evidence_rule> v3.xml:283" in SEED
    assert "Diagnostic counting <pattern_library> + <diagnostic_rule> v3.xml:304-316, v3.xml:284" in SEED
    assert 'Diagnostic counts diagnostics object {"hedges": 8, "adverbs_ly": 4, ...}' in SEED
    assert "evolve_v2 = add_pattern_library . add_diagnostics . add_dq5 . add_edits_constraint" in SEED
    notes = dict(n.split(": ", 1) for n in zinsser.output.notes)
    assert {"edits_requirements", "evidence_rule", "diagnostic_rule"} <= set(notes)
    assert notes["edits_requirements"].startswith("Exactly 3 BEFORE→AFTER pairs")
    order = notes["key_order"].split(",")
    assert order[order.index("actions") + 1 : order.index("violations")] == ["diagnostics"]
    template = json.loads(zinsser.output.template)
    assert list(template) == order and {"hedges", "adverbs_ly"} <= set(template["diagnostics"])


def test_a_key_order_requirement_is_a_ritual_the_judge_is_asked_for(zinsser):
    """Seed 000: the ritual primitive is "a fixed prefix (e.g., 'BECAUSE:'), word count, or key order
    requirement", and "Key order constraint Reduces output variability <key_order>". An imported
    `<key_order>` / `<fixed_key_order>` sets surface.enforce_key_order, as do the library's ZinsserJudge and
    AntiLLMY: P_ritual counts it and the prompt asks for the order (before: a note only, P_ritual 1 for v1)."""
    assert "a fixed prefix (e.g., 'BECAUSE:'), word count, or key order requirement" in SEED
    assert "Key order constraint Reduces output variability <key_order>score,class,... (v3.xml:280)" in SEED
    v1 = load_rubric(SHARED_RUBRICS / "secemp9/on_writing_well_v1.xml")
    anti = load_rubric(SHARED_RUBRICS / "secemp9/anti_slop_rubric.xml")
    for rubric in (v1, anti, zinsser, resolve("anti-llmy")):
        assert rubric.surface.enforce_key_order, rubric.metadata.id
        assert any(n.startswith(("key_order:", "fixed_key_order:")) for n in rubric.output.notes)
    assert properties(v1)["P_ritual"] == 2  # BECAUSE: + 35 words is one constraint; the key order another
    prompt = render_system_prompt(v1, call_units(v1, "holistic")[0])
    assert "Write the keys in exactly this order:" in prompt
