"""Rubric algebra: combine, cut and evolve rubrics as values, and say what changed.

Every operation returns a new rubric; the inputs are immutable and untouched.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import semver
from pydantic import Field

from rubricflow.errors import InputError

from .model import MOST_WEIGHT, Criterion, Disqualifier, Pattern, Rubric, Scoring, Strict


class AlgebraError(InputError):
    """Rubrics that cannot be combined or mutated as asked (conflicting ids, unknown targets)."""


def _merge(kind: str, a: tuple, b: tuple, key: str) -> tuple:
    """Concatenate by id; the same id with different content is a conflict, identical is kept once."""
    seen = {getattr(x, key): x for x in a}
    out = list(a)
    for item in b:
        ident = getattr(item, key)
        if ident in seen:
            if seen[ident] != item:
                raise AlgebraError(f"{kind} id conflict: {ident!r} differs between the rubrics")
            continue
        seen[ident] = item
        out.append(item)
    return tuple(out)


def _theirs_win(a: tuple, b: tuple) -> tuple:
    """Seed 000's `{**self.criteria, **other.criteria}` (and `R1.pattern_library | R2.pattern_library`):
    the ids of both, the second operand's content where both use an id, in the first's place."""
    theirs, ours = {x.id: x for x in b}, {x.id for x in a}
    return tuple(theirs.get(x.id, x) for x in a) + tuple(x for x in b if x.id not in ours)


def _keep_both(kind: str, a: tuple, b: tuple, b_name: str) -> tuple:
    """Seed 000's `R1.disqualifiers + R2.disqualifiers`: every item of both. One of b's whose id a gives
    another item is kept as `<b's rubric id>.<its id>` (ids are unique here); an identical one once."""
    mine = {x.id: x for x in a}
    renamed = tuple(
        x.model_copy(update={"id": f"{b_name}.{x.id}"}) if x.id in mine and mine[x.id] != x else x for x in b
    )
    return _merge(kind, a, renamed, "id")


def _merge_output(a: Rubric, b: Rubric):
    """Seed 000's `output_schema = merge(R1.output_schema, R2.output_schema)`: both operands' output
    constraints (as both disqualifier lists) and notes; a's template, or b's when a has none."""
    both = _keep_both("output constraint", a.output.constraints, b.output.constraints, b.metadata.id)
    return a.output.model_copy(
        update={
            "constraints": both,
            "notes": tuple(dict.fromkeys(a.output.notes + b.output.notes)),
            "template": a.output.template or b.output.template,
        }
    )


def _merge_rules(a: tuple, b: tuple) -> tuple:
    """Decision rules of both: rules with ids merge by id (a differing twin is a conflict), plain
    sentences once each."""
    texts = tuple(dict.fromkeys(x for x in a + b if isinstance(x, str)))
    ruled = [tuple(x for x in side if not isinstance(x, str)) for side in (a, b)]
    rules = _merge("decision rule", ruled[0], ruled[1], "id")
    return texts + rules


def _compose_scoring(a: Scoring, b: Scoring) -> Scoring:
    """Seed 000's `compose_formulas(R1.scoring, R2.scoring)`: a setting only one operand states is
    kept (b's disqualified label 'No' is not lost to a's default), a's wins where both state one,
    the formulas are both stated, and a root survives only if both name it (else b's criteria
    would lie outside it). a's aggregation combines the union, as it always has; opposite polarity
    cannot share one score: an error."""
    if a.invert != b.invert:
        raise AlgebraError(
            f"scoring.invert differs ({a.invert!r} vs {b.invert!r}): "
            "one score cannot hold both; use product() to score them apart"
        )
    default = Scoring()
    update: dict[str, Any] = {}
    for name in (n for n in Scoring.model_fields if n != "method"):
        mine, theirs = getattr(a, name), getattr(b, name)
        if mine == getattr(default, name) and theirs != mine:
            update[name] = theirs
    update["formula"] = "\n".join(dict.fromkeys(f for f in (a.formula, b.formula) if f))
    update["root"] = a.root if a.root == b.root else None
    return a.model_copy(update=update)


def union(a: Rubric, b: Rubric, id: str | None = None, version: str = "1.0.0") -> Rubric:
    """One rubric with everything both judge by: criteria, patterns, disqualifiers, output contract,
    definitions, advice, and the decision logic (rules, verdicts, mapping examples) with its scoring
    composed. An id both use resolves as seed 000's `__or__` does: b's criterion or pattern wins, both
    disqualifiers (and output constraints) stay, b's renamed; for anything else it is an AlgebraError."""
    meta = a.metadata.model_copy(
        update={
            "id": id or _kebab(f"{a.metadata.id}-and-{b.metadata.id}"),
            "version": version,
            "title": f"{a.metadata.title or a.metadata.id} + {b.metadata.title or b.metadata.id}",
            "tags": tuple(dict.fromkeys(a.metadata.tags + b.metadata.tags)),
        }
    )
    return _made(
        a,
        {
            "metadata": meta,
            "goal": " Additionally: ".join(x for x in (a.goal, b.goal) if x),  # seed 000's `__or__` mission
            "criteria": _theirs_win(a.criteria, b.criteria),
            "groups": _merge("group", a.groups, b.groups, "id"),
            "patterns": _theirs_win(a.patterns, b.patterns),
            "disqualifiers": _keep_both("disqualifier", a.disqualifiers, b.disqualifiers, b.metadata.id),
            "output": _merge_output(a, b),
            "definitions": _merge("definition", a.definitions, b.definitions, "term"),
            "advice": tuple(dict.fromkeys(a.advice + b.advice)),
            "instructions": tuple(dict.fromkeys(a.instructions + b.instructions)),
            "decision_rules": _merge_rules(a.decision_rules, b.decision_rules),
            "verdicts": _merge("verdict", a.verdicts, b.verdicts, "label"),
            "mapping_examples": _merge("mapping example", a.mapping_examples, b.mapping_examples, "id"),
            "validation": tuple(dict.fromkeys(a.validation + b.validation)),
            "scoring": _compose_scoring(a.scoring, b.scoring),
            "goldens": _merge("golden", a.goldens, b.goldens, "name"),
        },
    )


def _made(base: Rubric, changes: dict[str, Any]) -> Rubric:
    """`base` with `changes`, made as any Rubric is (its validators run: a rubric of decision rules
    and scored verdicts asks its verdict, rubrics/verdict_form.py), so the result and its saved
    file are one rubric; a model_copy skipped them."""
    from .documents import rubric_to_data

    return type(base).model_validate(rubric_to_data(base.model_copy(update=changes)))


def _kebab(text: str) -> str:
    """A metadata id (kebab case, at most 128 characters) made from any text."""
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))[:128].strip("-") or "rubric"


@dataclass(frozen=True)
class Product:
    """Several rubrics applied to the same text, each scored on its own."""

    rubrics: tuple[Rubric, ...]

    def __post_init__(self) -> None:
        ids = [r.metadata.id for r in self.rubrics]
        if len(set(ids)) != len(ids):
            raise AlgebraError(f"a product needs distinct rubric ids, got {ids}")


def product(*rubrics: Rubric) -> Product:
    return Product(tuple(rubrics))


@dataclass(frozen=True)
class Coproduct:
    """Choose one rubric per text by a field of the record: `genre` by default, or a dotted path
    into it (`metadata.topic`); `default` takes any other value. `score --route` executes it."""

    choices: Mapping[str, Rubric]
    field: str = "genre"
    default: Rubric | None = None

    def value(self, record: Mapping[str, Any]) -> str | None:
        """The record's value of the field (a dotted path walks nested mappings), as text."""
        found: Any = record
        for part in self.field.split("."):
            found = found.get(part) if isinstance(found, Mapping) else None
        return None if found is None else str(found)

    def choose(self, record: Mapping[str, Any]) -> tuple[str, Rubric]:
        """The choice that takes the record (its value, or `*` for the default) and its rubric."""
        key = self.value(record)
        if key is not None and key in self.choices:
            return key, self.choices[key]
        if self.default is not None:
            return "*", self.default
        raise AlgebraError(f"no rubric for {self.field}={key!r}; choices are {sorted(self.choices)}")

    def select(self, record: Mapping[str, Any]) -> Rubric:
        return self.choose(record)[1]


def coproduct(choices: Mapping[str, Rubric], field: str = "genre", default: Rubric | None = None) -> Coproduct:
    return Coproduct(dict(choices), field, default)


def project(rubric: Rubric, keep: list[str] | tuple[str, ...], id: str | None = None) -> Rubric:
    """Seed 000's projection pi_S(R): only the named criteria, named as the seed names it
    (`name=f"{self.name}[{','.join(sorted(criterion_ids))}]"`, version kept) so it is never
    mistaken for the whole rubric; groups, disqualifiers and goldens' expected scores follow."""
    kept = _keep_criteria(rubric, keep)
    ids = sorted(set(keep))
    meta = rubric.metadata.model_copy(
        update={
            "id": id or _kebab(f"{rubric.metadata.id}-{'-'.join(ids)}"),
            "title": f"{rubric.metadata.title or rubric.metadata.id}[{','.join(ids)}]",
        }
    )
    return _made(kept, {"metadata": meta})


def _keep_criteria(rubric: Rubric, keep: list[str] | tuple[str, ...]) -> Rubric:
    """The rubric cut to the named criteria, under its own name (remove_criterion evolves it)."""
    known = {c.id for c in rubric.criteria}
    unknown = [k for k in keep if k not in known]
    if unknown:
        raise AlgebraError(f"cannot project onto unknown criteria {unknown}")
    kept = set(keep)
    groups = []
    alive = set(kept)
    for g in reversed(_topological(rubric)):  # children before parents
        children = tuple(c for c in g.children if c in alive)
        if children:
            groups.append(g.model_copy(update={"children": children}))
            alive.add(g.id)
    groups.reverse()
    root = rubric.scoring.root if rubric.scoring.root in alive else None
    return rubric.model_copy(
        update={
            "criteria": tuple(c for c in rubric.criteria if c.id in kept),
            "groups": tuple(groups),
            "disqualifiers": tuple(d for d in rubric.disqualifiers if d.kind != "criterion" or d.criterion in kept),
            "scoring": rubric.scoring.model_copy(update={"root": root}),
            "goldens": tuple(
                g.model_copy(update={"expected_scores": {k: v for k, v in g.expected_scores.items() if k in kept}})
                for g in rubric.goldens
            ),
        }
    )


def _topological(rubric: Rubric) -> list:
    """Groups ordered parents first."""
    by_id = {g.id: g for g in rubric.groups}
    order, seen = [], set()

    def visit(gid: str) -> None:
        if gid in seen:
            return
        seen.add(gid)
        order.append(by_id[gid])
        for child in by_id[gid].children:
            if child in by_id:
                visit(child)

    children = {c for g in rubric.groups for c in g.children}
    for g in rubric.groups:
        if g.id not in children:
            visit(g.id)
    return order


def reweight(rubric: Rubric, weights: Mapping[str, float]) -> Rubric:
    unknown = [k for k in weights if k not in {c.id for c in rubric.criteria}]
    if unknown:
        raise AlgebraError(f"cannot reweight unknown criteria {unknown}")
    return rubric.model_copy(
        update={
            "criteria": tuple(
                c.model_copy(update={"weight": float(weights.get(c.id, c.weight))}) for c in rubric.criteria
            )
        }
    )


def scale(rubric: Rubric, alpha: float) -> Rubric:
    """Seed 000's weight rescaling `alpha * R`: every weight (criteria and groups) times alpha > 0."""
    weights = [c.weight for c in rubric.criteria] + [g.weight for g in rubric.groups]
    if not alpha > 0 or alpha * max(weights, default=0) > MOST_WEIGHT:
        raise AlgebraError(
            f"scale: alpha must be a positive number keeping every weight <= {MOST_WEIGHT:g}, got {alpha!r}"
        )
    return _made(
        reweight(rubric, {c.id: alpha * c.weight for c in rubric.criteria}),
        {"groups": tuple(g.model_copy(update={"weight": alpha * g.weight}) for g in rubric.groups)},
    )


# --------------------------------------------------------------------------- mutations as data


class AddCriterion(Strict):
    op: Literal["add_criterion"] = "add_criterion"
    criterion: Criterion


class RemoveCriterion(Strict):
    op: Literal["remove_criterion"] = "remove_criterion"
    id: str


class AdjustWeight(Strict):
    op: Literal["adjust_weight"] = "adjust_weight"
    id: str
    weight: float = Field(ge=0)


class AddPattern(Strict):
    op: Literal["add_pattern"] = "add_pattern"
    pattern: Pattern


class AddDisqualifier(Strict):
    op: Literal["add_disqualifier"] = "add_disqualifier"
    disqualifier: Disqualifier


class RewriteCriterion(Strict):
    """New wording for a criterion: title, description, scale (its anchors), examples, notes, mechanical
    rules, evidence rules, or the patterns it names."""

    op: Literal["rewrite_criterion"] = "rewrite_criterion"
    id: str
    changes: dict[str, Any] = Field(min_length=1)


class RewriteRubric(Strict):
    """New wording for the rubric's own text, which seed 001 lets evolve: its goal, the judge's role
    (persona, obligations, constraints), its instructions, definitions and advice rules."""

    op: Literal["rewrite_rubric"] = "rewrite_rubric"
    changes: dict[str, Any] = Field(min_length=1)


class SplitCriterion(Strict):
    """One criterion becomes several, in its place and its group."""

    op: Literal["split_criterion"] = "split_criterion"
    id: str
    into: tuple[Criterion, ...] = Field(min_length=2)


class MergeCriteria(Strict):
    """Several criteria become one, in the place and group of the first."""

    op: Literal["merge_criteria"] = "merge_criteria"
    ids: tuple[str, ...] = Field(min_length=2)
    into: Criterion


Mutation = Annotated[
    AddCriterion
    | RemoveCriterion
    | AdjustWeight
    | AddPattern
    | AddDisqualifier
    | RewriteCriterion
    | RewriteRubric
    | SplitCriterion
    | MergeCriteria,
    Field(discriminator="op"),
]
_BUMP = {
    "remove_criterion": "major",
    "add_criterion": "minor",
    "add_disqualifier": "minor",
    "add_pattern": "minor",
    "adjust_weight": "patch",
    "rewrite_criterion": "minor",
    "rewrite_rubric": "minor",
    "split_criterion": "major",
    "merge_criteria": "major",
}
REWRITABLE = frozenset(
    {"title", "description", "scale", "examples", "notes", "mechanical_rules", "evidence", "patterns"}
)
RUBRIC_TEXT = frozenset({"goal", "role", "instructions", "definitions", "advice"})  # what rewrite_rubric may change


def _apply(r: Rubric, m) -> Rubric:
    if isinstance(m, AddCriterion):
        return r.model_copy(update={"criteria": _merge("criterion", r.criteria, (m.criterion,), "id")})
    if isinstance(m, RemoveCriterion):
        remaining = [c.id for c in r.criteria if c.id != m.id]
        if len(remaining) == len(r.criteria):
            raise AlgebraError(f"remove_criterion: no criterion {m.id!r}")
        return _keep_criteria(r, remaining)
    if isinstance(m, AdjustWeight):
        return reweight(r, {m.id: m.weight})
    if isinstance(m, AddPattern):
        return r.model_copy(update={"patterns": _merge("pattern", r.patterns, (m.pattern,), "id")})
    if isinstance(m, AddDisqualifier):
        return r.model_copy(update={"disqualifiers": _merge("disqualifier", r.disqualifiers, (m.disqualifier,), "id")})
    if isinstance(m, RewriteCriterion):
        if not set(m.changes) <= REWRITABLE:
            raise AlgebraError(
                f"rewrite_criterion {m.id!r}: only {sorted(REWRITABLE)} can be rewritten, "
                f"not {sorted(set(m.changes) - REWRITABLE)}"
            )
        old = _criterion(r, m.id)
        new = Criterion.model_validate({**old.model_dump(mode="json"), **m.changes})
        return _replace_criteria(r, (m.id,), (new,))
    if isinstance(m, RewriteRubric):
        if not set(m.changes) <= RUBRIC_TEXT:
            raise AlgebraError(
                f"rewrite_rubric: only {sorted(RUBRIC_TEXT)} can be rewritten, not {sorted(set(m.changes) - RUBRIC_TEXT)}"
            )
        document = r.model_dump(mode="json")
        role = m.changes.get("role")
        changes = {**m.changes, "role": {**document["role"], **role}} if isinstance(role, dict) else m.changes
        return type(r).model_validate({**document, **changes})
    if isinstance(m, SplitCriterion):
        return _replace_criteria(r, (m.id,), m.into)
    if isinstance(m, MergeCriteria):
        return _replace_criteria(r, m.ids, (m.into,))
    raise AlgebraError(f"unknown mutation {m!r}")


def _criterion(r: Rubric, criterion_id: str) -> Criterion:
    try:
        return r.criterion(criterion_id)
    except KeyError:
        raise AlgebraError(f"no criterion {criterion_id!r}; the rubric has {[c.id for c in r.criteria]}") from None


def _replace_criteria(r: Rubric, old_ids: tuple[str, ...], new: tuple[Criterion, ...]) -> Rubric:
    """`new` takes the place (and group) of the first of `old_ids`; the others are removed."""
    for cid in old_ids:
        _criterion(r, cid)
    gone = set(old_ids) - {c.id for c in new}
    taken = {c.id for c in r.criteria} - set(old_ids)
    clash = sorted(c.id for c in new if c.id in taken)
    if clash:
        raise AlgebraError(f"criterion ids {clash} exist already")
    named = [d.id for d in r.disqualifiers if d.kind == "criterion" and d.criterion in gone]
    if named:
        raise AlgebraError(
            f"disqualifiers {named} name criteria {sorted(gone)} that would be gone; re-point them first"
        )

    def swap(ids: tuple[str, ...]) -> tuple[str, ...]:
        out: list[str] = []
        for cid in ids:
            if cid == old_ids[0]:
                out += [c.id for c in new]
            elif cid not in old_ids:
                out.append(cid)
        return tuple(out)

    criteria: list[Criterion] = []
    for c in r.criteria:
        if c.id == old_ids[0]:
            criteria += list(new)
        elif c.id not in old_ids:
            criteria.append(c)
    return r.model_copy(
        update={
            "criteria": tuple(criteria),
            "groups": tuple(g.model_copy(update={"children": swap(g.children)}) for g in r.groups),
            "goldens": tuple(
                g.model_copy(update={"expected_scores": {k: v for k, v in g.expected_scores.items() if k not in gone}})
                for g in r.goldens
            ),
        }
    )


def evolve(rubric: Rubric, mutations: list, bump: Literal["auto", "major", "minor", "patch"] = "auto") -> Rubric:
    """Apply mutations in order and bump the semver: by default the largest bump any mutation implies."""
    from pydantic import TypeAdapter

    parsed = [TypeAdapter(Mutation).validate_python(m) if isinstance(m, dict) else m for m in mutations]
    if not parsed:
        raise AlgebraError("evolve needs at least one mutation")
    result = rubric
    for m in parsed:
        result = _apply(result, m)
    if bump == "auto":
        ranks = ["patch", "minor", "major"]
        bump = max((_BUMP[m.op] for m in parsed), key=ranks.index)  # type: ignore[misc]
    version = semver.Version.parse(rubric.metadata.version)
    new_version = {"major": version.bump_major, "minor": version.bump_minor, "patch": version.bump_patch}[bump]()
    return result.model_copy(update={"metadata": result.metadata.model_copy(update={"version": str(new_version)})})


# --------------------------------------------------------------------------- diff


@dataclass(frozen=True)
class Change:
    kind: Literal["added", "removed", "changed"]
    path: str
    before: Any = None
    after: Any = None

    def __str__(self) -> str:
        if self.kind == "changed":
            return f"changed {self.path}: {self.before!r} -> {self.after!r}"
        return f"{self.kind} {self.path}"


def diff(a: Rubric, b: Rubric) -> list[Change]:
    """What changed from a to b. Criteria, patterns, disqualifiers, groups match by id, so a
    criterion whose wording changed shows as `changed criteria.ID.description`."""
    changes: list[Change] = []
    da, db = a.model_dump(mode="json"), b.model_dump(mode="json")
    keyed = {
        "criteria": "id",
        "groups": "id",
        "patterns": "id",
        "disqualifiers": "id",
        "goldens": "name",
        "definitions": "term",
    }
    for field in da:
        if field in keyed:
            key = keyed[field]
            ia = {x[key]: x for x in da[field]}
            ib = {x[key]: x for x in db[field]}
            changes += [Change("removed", f"{field}.{k}", before=ia[k]) for k in ia if k not in ib]
            changes += [Change("added", f"{field}.{k}", after=ib[k]) for k in ib if k not in ia]
            for k in ia.keys() & ib.keys():
                changes += _deep(f"{field}.{k}", ia[k], ib[k])
        else:
            changes += _deep(field, da[field], db[field])
    return sorted(changes, key=lambda c: c.path)


def _deep(path: str, x: Any, y: Any) -> list[Change]:
    if x == y:
        return []
    if isinstance(x, dict) and isinstance(y, dict):
        out = []
        for k in sorted(x.keys() | y.keys()):
            if k not in x:
                out.append(Change("added", f"{path}.{k}", after=y[k]))
            elif k not in y:
                out.append(Change("removed", f"{path}.{k}", before=x[k]))
            else:
                out += _deep(f"{path}.{k}", x[k], y[k])
        return out
    return [Change("changed", path, x, y)]


def changed_criteria(a: Rubric, b: Rubric) -> set[str]:
    """Criterion ids present in both versions whose definition differs (the A/B 'changed' mark)."""
    return {c.path.split(".")[1] for c in diff(a, b) if c.path.startswith("criteria.") and c.kind == "changed"}
