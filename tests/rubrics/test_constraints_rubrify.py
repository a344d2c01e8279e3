"""Seed 001's TokenConstraint(must_contain=True) and CharLimitConstraint(mode="min"/"exactly") as
rubricflow's output-constraint fields `require` and `min_chars`: checked on the judge's answer and on
the text's whole answer (the warehouse's judgment-scoped check), and absent from the document, so the
hash of every rubric that does not use them, until now every rubric, stays as it was."""

from dataclasses import dataclass

from rubricflow.rubrics.compiler import content_hash, rubric_document
from rubricflow.rubrics.constraints import check_constraint, judgment_problems
from rubricflow.rubrics.library import Library
from rubricflow.rubrics.model import OutputConstraint, OutputContract

from ..conftest import SHARED

SEED_001 = (SHARED.parent / "seeds" / "001_646671bcea772b80.txt").read_text(encoding="utf-8")
SLOP = Library().bundle("llm-slop").rubric


@dataclass
class Judged:
    criterion_id: str
    status: str
    rationale: str | None
    evidence: list[str]


def test_a_required_phrase_is_matched_as_written_and_a_character_minimum_counts_characters():
    """rubrify's TokenConstraint.check is `self.token in value` (case as written); CharLimitConstraint's
    min / exactly bound the characters from below (seed 001: "check logic for ... CharLimit, ItemCount,
    Token constraints")."""
    assert "check logic for PrefixSuffix, WordCount, CharLimit, ItemCount, Token constraints" in SEED_001
    because = OutputConstraint(id="because", require=("BECAUSE",))
    assert check_constraint(because, "BECAUSE: the steps are listed.") is None
    assert check_constraint(because, "because the steps are listed.") == "does not contain 'BECAUSE'"
    assert check_constraint(because, None) == "does not contain 'BECAUSE'"
    assert check_constraint(OutputConstraint(id="quote", field="evidence", require=("bridge",)), ["the bridge"]) is None
    between = OutputConstraint(id="size", min_chars=5, max_chars=5)
    assert [check_constraint(between, t) for t in ("four", "fives", "sixsix")] == [
        "4 chars < 5",
        None,
        "6 chars > 5",
    ]


def test_a_judgment_scoped_required_phrase_is_checked_on_the_whole_answer():
    """What the warehouse's refresh runs (warehouse/judgment_constraints.py calls judgment_problems):
    the phrase may be in any criterion's rationale."""
    once = OutputConstraint(id="cite", require=("Zinsser",), scope="judgment", severity="hard")
    rubric = SLOP.model_copy(update={"output": OutputContract(constraints=(once,))})
    first, second = (c.id for c in SLOP.criteria[:2])
    said = [Judged(first, "scored", "Plain, as Zinsser asks.", []), Judged(second, "scored", "Short.", [])]
    assert judgment_problems(rubric, said) == []
    unsaid = [Judged(first, "scored", "Plain.", []), Judged(second, "scored", "Short.", [])]
    assert judgment_problems(rubric, unsaid) == [(once, "does not contain 'Zinsser'")]


def test_the_new_fields_leave_the_document_and_hash_of_a_rubric_that_does_not_use_them():
    """`require` and `min_chars` are kept out of the canonical document at their defaults (as the other
    later fields, rubrics/compiler.LATER_CONSTRAINT_DEFAULTS); set, they are part of the hash."""
    assert SLOP.output.constraints
    for constraint in rubric_document(SLOP)["output"]["constraints"]:
        assert "require" not in constraint and "min_chars" not in constraint
    used = SLOP.output.constraints[0].model_copy(update={"require": ("BECAUSE:",), "min_chars": 10})
    changed = SLOP.model_copy(update={"output": SLOP.output.model_copy(update={"constraints": (used,)})})
    document = rubric_document(changed)["output"]["constraints"][0]
    assert (document["require"], document["min_chars"]) == (["BECAUSE:"], 10)
    assert content_hash(changed) != content_hash(SLOP)


def test_the_judge_is_told_a_required_phrase_and_a_character_minimum():
    """A rule the judge is not told is a trap: the prompt states each, as it states the others."""
    from rubricflow.rubrics.render import call_units, render_system_prompt

    rules = (
        OutputConstraint(id="cite", require=("BECAUSE:",), severity="hard"),
        OutputConstraint(id="long", min_chars=20),
        OutputConstraint(id="exact", field="evidence", min_chars=8, max_chars=8),
    )
    rubric = SLOP.model_copy(update={"output": OutputContract(constraints=rules)})
    prompt = render_system_prompt(rubric, call_units(rubric, "holistic")[0])
    assert "- `rationale` (hard, cite): contains 'BECAUSE:' (case as written)." in prompt
    assert "- `rationale` (soft, long): at least 20 characters." in prompt
    assert "- `evidence` (soft, exact): exactly 8 characters." in prompt
