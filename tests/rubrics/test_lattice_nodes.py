"""The seed's property lattice (seed 000 section 4.3) with its derived nodes: Stable, Aligned,
Economic, WellFormed, each read off the 16 predicates and the nodes below it."""

from __future__ import annotations

import re

from rubricflow.rubrics.formats import load_rubric
from rubricflow.rubrics.library import BUILTIN, Library, resolve
from rubricflow.rubrics.model import OutputConstraint
from rubricflow.rubrics.properties import LATTICE_NODES, lattice_nodes
from tests.conftest import SHARED, TEST_DATA

SEED = (SHARED.parent / "seeds" / "000_c0ea53250dcb8cd9.txt").read_text(encoding="utf-8")
COMPLIANCE = TEST_DATA / "rubrics/xml/compliance-judge-layout.xml"


def test_the_lattice_is_the_seeds_hasse_diagram():
    """Every `X implies Y` line of the seed's list is an edge of the lattice here."""
    block = SEED[SEED.index("4.3 The Property Lattice") : SEED.index("4.4 Validation Rules")]
    implied = re.findall(r"• (\w+) implies (\w+)(?: AND (\w+))?(?: AND (\w+))?", block)
    assert len(implied) >= 6
    for node, *below in implied:
        for b in filter(None, below):
            if b in LATTICE_NODES:  # "Criteria with count constraint" names Small by its condition
                assert b in LATTICE_NODES[node][1], (node, b)
    assert LATTICE_NODES["WellFormed"][1] == ("Stable", "Aligned", "Economic")


def test_a_node_never_holds_without_the_nodes_below_it():
    rubrics = [e.rubric for e in Library([BUILTIN]).entries()] + [load_rubric(COMPLIANCE)]
    for rubric in rubrics:
        held = lattice_nodes(rubric)
        for node, (_, below) in LATTICE_NODES.items():
            assert not held[node] or all(held[b] for b in below), (rubric.metadata.id, node)
    assert lattice_nodes(resolve("writing-quality"))["WellFormed"]


def test_a_ritual_mirrored_makes_the_compliance_judge_stable():
    judge = load_rubric(COMPLIANCE)
    assert lattice_nodes(judge)["Anchored"] and not lattice_nodes(judge)["Stable"]
    ritual = OutputConstraint(id="because", field="rationale", prefix="BECAUSE:")
    steadied = judge.model_copy(
        update={
            "output": judge.output.model_copy(update={"constraints": (*judge.output.constraints, ritual)}),
            "validation": (*judge.validation, "Each rationale begins with 'BECAUSE:'."),
        }
    )
    assert lattice_nodes(steadied)["Ritual"] and lattice_nodes(steadied)["Stable"]


def test_well_formed_needs_every_sufficient_condition_s1_to_s6():
    """Seed 000: `WellFormed(R) := R in Ob(Rub) AND S1(R) AND S2(R) AND S3(R) AND S4(R) AND S5(R) AND S6(R)`.
    Anchored, aligned, economic and a mirrored ritual, but nothing mechanical (S3) and no disqualifier
    (S4): not WellFormed (before: it was). With both it is, and the compiler's S1-S6 agree."""
    from rubricflow.rubrics.compiler import compile_or_raise
    from rubricflow.rubrics.model import Rubric

    assert "WellFormed(R) := R in Ob(Rub) AND S1(R) AND S2(R) AND S3(R) AND S4(R) AND S5(R) AND S6(R)" in SEED
    anchored = {
        "kind": "ordinal",
        "anchors": [{"value": v, "description": d} for v, d in enumerate(("poor", "fair", "good"))],
    }
    data = {
        "metadata": {"id": "wf"},
        "goal": "Judge the clarity of technical prose for a general reader.",
        "criteria": [{"id": f"C{i}", "scale": anchored} for i in (1, 2, 3)],
        "output": {"constraints": [{"id": "because", "field": "rationale", "prefix": "BECAUSE:"}]},
        "validation": ["Each rationale begins with 'BECAUSE:'."],
    }
    lacking = Rubric.model_validate(data)
    lattice = dict(compile_or_raise(lacking).lattice)
    assert (lattice["S3"], lattice["S4"]) == (False, False) and lattice["S1"] and lattice["S2"] and lattice["S6"]
    assert lattice_nodes(lacking)["Stable"] and lattice_nodes(lacking)["Economic"]
    assert not lattice_nodes(lacking)["WellFormed"]
    data["patterns"] = [{"id": "hedge", "regex": r"\bsort of\b"}]
    data["criteria"][0]["patterns"] = ["hedge"]
    data["disqualifiers"] = [{"id": "DQ1", "description": "Not prose."}]
    whole = Rubric.model_validate(data)
    assert all(ok for _, ok in compile_or_raise(whole).lattice) and lattice_nodes(whole)["WellFormed"]
