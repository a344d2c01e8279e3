import pytest

from rubricflow.rubrics import algebra
from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.formats import load_rubric
from rubricflow.rubrics.library import Library
from rubricflow.rubrics.model import Rubric

from ..conftest import SHARED, TEST_DATA
from .factories import rubric

SEED = (SHARED.parent / "seeds" / "000_c0ea53250dcb8cd9.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def lib():
    return Library()


def test_union_merges_and_refuses_conflicts(lib):
    slop, writing = lib.get("llm-slop").rubric, lib.get("writing-quality").rubric
    both = algebra.union(slop, writing, id="slop-and-writing")
    assert len(both.criteria) == len(slop.criteria) + len(writing.criteria)
    compile_or_raise(both)
    clash = writing.model_copy(update={"criteria": (slop.criteria[0].model_copy(update={"weight": 9}),)})
    with pytest.raises(algebra.AlgebraError, match="criterion id conflict: 'puffery'"):
        algebra.union(slop, clash)
    assert algebra.union(slop, slop, id="same").criteria == slop.criteria  # identical ids merge once


def test_product_and_coproduct(lib):
    a, b = lib.get("helpfulness").rubric, lib.get("groundedness").rubric
    assert [r.metadata.id for r in algebra.product(a, b).rubrics] == ["helpfulness", "groundedness"]
    with pytest.raises(algebra.AlgebraError):
        algebra.product(a, a)
    choose = algebra.coproduct({"rag": b}, default=a)
    assert choose.select({"genre": "rag"}) is b and choose.select({"genre": "chat"}) is a
    with pytest.raises(algebra.AlgebraError, match="no rubric for genre='x'"):
        algebra.coproduct({"rag": b}).select({"genre": "x"})


def test_project_prunes_groups_disqualifiers_and_goldens():
    r = rubric(
        criteria=[{"id": "a"}, {"id": "b"}, {"id": "c"}],
        groups=[{"id": "g", "children": ["a", "b"]}, {"id": "h", "children": ["c"]}],
        disqualifiers=[{"id": "d", "kind": "criterion", "criterion": "c"}],
        goldens=[{"name": "x", "output": "t", "expected_scores": {"a": 1, "c": 0}}],
    )
    p = algebra.project(r, ["a"])
    assert [c.id for c in p.criteria] == ["a"] and [(g.id, g.children) for g in p.groups] == [("g", ("a",))]
    assert p.disqualifiers == () and dict(p.goldens[0].expected_scores) == {"a": 1}
    compile_or_raise(p)
    with pytest.raises(algebra.AlgebraError):
        algebra.project(r, ["nope"])


def test_evolve_applies_mutations_and_bumps_semver():
    r = rubric()
    assert algebra.evolve(r, [{"op": "adjust_weight", "id": "a", "weight": 4}]).metadata.version == "1.0.1"
    added = algebra.evolve(
        r,
        [
            {"op": "add_pattern", "pattern": {"id": "p", "regex": "foo"}},
            {"op": "add_criterion", "criterion": {"id": "n", "patterns": ["p"]}},
            {"op": "add_disqualifier", "disqualifier": {"id": "dq", "kind": "pattern", "patterns": ["p"]}},
        ],
    )
    assert added.metadata.version == "1.1.0" and added.criterion("n").patterns == ("p",)
    compile_or_raise(added)
    removed = algebra.evolve(added, [{"op": "remove_criterion", "id": "a"}])
    assert removed.metadata.version == "2.0.0" and "a" not in {c.id for c in removed.criteria}
    assert r.metadata.version == "1.0.0"  # the input is untouched


def test_diff_lists_changes_and_marks_reworded_criteria():
    a = rubric()
    b = algebra.evolve(a, [{"op": "adjust_weight", "id": "b", "weight": 2}])
    b = b.model_copy(update={"criteria": (b.criteria[0].model_copy(update={"description": "reworded"}), b.criteria[1])})
    changes = {(c.kind, c.path) for c in algebra.diff(a, b)}
    assert changes == {
        ("changed", "criteria.a.description"),
        ("changed", "criteria.b.weight"),
        ("changed", "metadata.version"),
    }
    assert algebra.changed_criteria(a, b) == {"a", "b"}
    assert algebra.diff(a, a) == []


def test_union_keeps_both_operands_decision_logic_and_refuses_a_conflicting_id():
    """Seed 000's compose: `output_schema = merge(...)`, `scoring = compose_formulas(R1.scoring, R2.scoring)`."""
    assert "scoring = compose_formulas(R1.scoring, R2.scoring)" in SEED
    judge = load_rubric(TEST_DATA / "rubrics/xml/compliance-judge-layout.xml")
    tone = rubric(metadata={"id": "tone"}, criteria=[{"id": "T1", "title": "Polite", "scale": {"kind": "binary"}}])
    for both in (algebra.union(tone, judge), algebra.union(judge, tone)):
        assert set(both.decision_rules) == set(judge.decision_rules) and len(judge.decision_rules) == 4
        assert both.verdicts == judge.verdicts and both.mapping_examples == judge.mapping_examples
        assert both.scoring.disqualified_label == judge.scoring.disqualified_label == "No"
        compile_or_raise(both)
    example = judge.mapping_examples[0].model_copy(update={"verdict": "Yes", "note": "other"})
    clash = tone.model_copy(update={"mapping_examples": (example,), "verdicts": judge.verdicts})
    with pytest.raises(algebra.AlgebraError, match=f"mapping example id conflict: '{example.id}'"):
        algebra.union(judge, clash)
    inverted = tone.model_copy(update={"scoring": tone.scoring.model_copy(update={"invert": True})})
    with pytest.raises(algebra.AlgebraError, match=r"scoring.invert differs \(False vs True\)"):
        algebra.union(judge, inverted)


def test_project_names_its_result_as_the_seed_does():
    """Seed 000: `name=f"{self.name}[{','.join(sorted(criterion_ids))}]"`, `version=self.version`."""
    assert "name=f\"{self.name}[{','.join(sorted(criterion_ids))}]\"" in SEED and "version=self.version" in SEED
    r = rubric(criteria=[{"id": "a"}, {"id": "B_2"}, {"id": "c"}])
    p = algebra.project(r, ["c", "B_2"])
    assert p.metadata.title == "t-rubric[B_2,c]" and p.metadata.version == r.metadata.version
    assert p.metadata.id == "t-rubric-b-2-c" and Rubric.model_validate(p.model_dump()).metadata.id == p.metadata.id
    assert algebra.evolve(r, [{"op": "remove_criterion", "id": "a"}]).metadata.id == r.metadata.id  # lineage kept
