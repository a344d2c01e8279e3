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


def test_union_merges_and_resolves_a_criterion_id_both_use(lib):
    """A criterion id both use resolves as seed 000's `{**self.criteria, **other.criteria}`: the second
    operand's criterion, in the first's place (this test asserted an AlgebraError, which the seed does
    not raise)."""
    assert "for cid, criterion in {**self.criteria, **other.criteria}.items():" in SEED
    slop, writing = lib.get("llm-slop").rubric, lib.get("writing-quality").rubric
    both = algebra.union(slop, writing, id="slop-and-writing")
    assert len(both.criteria) == len(slop.criteria) + len(writing.criteria)
    # both ask a `because` ritual, worded apart: both kept, as both disqualifier lists are
    assert [c.id for c in both.output.constraints] == ["because", "writing-quality.because"]
    compile_or_raise(both)
    heavier = slop.criteria[0].model_copy(update={"weight": 9})
    clash = writing.model_copy(update={"criteria": (heavier,)})
    resolved = algebra.union(slop, clash)
    assert resolved.criteria[0] == heavier and [c.id for c in resolved.criteria] == [c.id for c in slop.criteria]
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


def test_union_keeps_the_second_operands_output_contract_and_joins_the_missions():
    """Seed 000: `output_schema = merge(R1.output_schema, R2.output_schema)` and
    `mission=f"{self.mission} Additionally: {other.mission}"` (before: b's output constraints and notes
    were dropped and the missions joined by a line break)."""
    assert "output_schema = merge(R1.output_schema, R2.output_schema)," in SEED
    assert 'mission=f"{self.mission} Additionally: {other.mission}",' in SEED
    r1 = rubric(metadata={"id": "r1"}, goal="Judge clarity.", criteria=[{"id": "r1-c"}])
    r2 = rubric(
        metadata={"id": "r2"},
        goal="Judge slop.",
        criteria=[{"id": "r2-c"}],
        output={
            "constraints": [{"id": "because", "field": "rationale", "prefix": "BECAUSE:"}],
            "notes": ["must_be_json: true"],
        },
    )
    both = algebra.union(r1, r2)
    assert [c.id for c in both.output.constraints] == ["because"] and both.output.notes == ("must_be_json: true",)
    assert both.goal == "Judge clarity. Additionally: Judge slop."


def test_the_seeds_zinsser_and_anti_llmy_compose_into_one_rubric(lib):
    """Seed 000 composes ZinsserJudge and AntiLLMY: criteria `{**self.criteria, **other.criteria}` (AntiLLMY's
    C1-C5 win), disqualifiers `self.disqualifiers + other.disqualifiers` (both DQ1-DQ3 kept; ids are unique
    here, so AntiLLMY's are named after it). Before: AlgebraError "criterion id conflict: 'C1'"."""
    assert "for dq in self.disqualifiers + other.disqualifiers:" in SEED
    zinsser, anti = lib.get("zinsser-judge").rubric, lib.get("anti-llmy").rubric
    both = algebra.union(zinsser, anti)
    assert [c.id for c in both.criteria] == [c.id for c in zinsser.criteria]
    assert both.criterion("C1") == anti.criterion("C1") and both.criterion("C6") == zinsser.criterion("C6")
    assert [d.id for d in both.disqualifiers] == [
        *(d.id for d in zinsser.disqualifiers),
        *(f"anti-llmy.{d.id}" for d in anti.disqualifiers),
    ]
    assert both.disqualifiers[-1].description == anti.disqualifiers[-1].description
    assert compile_or_raise(both).profile


def test_scale_multiplies_every_weight_by_alpha(lib):
    """Seed 000: "Weight rescaling alpha * R Scale all weights by factor alpha". A weighted mean is the same
    score after it; alpha must be positive."""
    from rubricflow.rubrics.scoring import verdict

    assert "Weight rescaling alpha * R Scale all weights by factor alpha" in SEED
    zinsser = lib.get("zinsser-judge").rubric
    doubled = algebra.scale(zinsser, 2)
    assert [c.weight for c in doubled.criteria] == [2 * c.weight for c in zinsser.criteria]
    assert [g.weight for g in doubled.groups] == [2 * g.weight for g in zinsser.groups]
    values = {c.id: c.scale.high for c in zinsser.criteria} | {"C1": 1, "C7": 0}
    assert verdict(doubled, values).score == pytest.approx(verdict(zinsser, values).score)
    assert zinsser.criterion("C1").weight == 14  # the input is untouched
    for alpha in (0, -1):
        with pytest.raises(algebra.AlgebraError, match="scale: alpha must be a positive number"):
            algebra.scale(zinsser, alpha)
