"""Compile a rubric: check it (hard errors, soft warnings), place it on the seed framework's
lattice, and lock it into an immutable bundle named by its content hash."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from rubricflow.errors import InputError

from .model import BinaryScale, NominalScale, Rubric, ScaleError, Surface
from .properties import ECONOMY, SUFFICIENT, author_criteria, described_levels, properties, seed_profile
from .regex import BACKTRACKING_TIMEOUT_S, backtracking, re2_errors
from .render import CRITERION_FIELDS, VERDICT_TOOLS, is_waza

Severity = Literal["error", "warning"]

LATTICE = {
    "N1": "mission/goal stated",
    "N2": "structure: criteria, decision rules or mapping (ICL) examples",
    "N3": "output contract: criteria, an output template or constraints, or ICL examples",
    "S1": "anchored scales (>= 2 distinct anchors)",
    "S2": "output template names every criterion id (P_aligned = 1)",
    "S3": "mechanically checkable: a criterion with mechanical rules or patterns",
    "S4": "disqualifiers",
    "S5": "a ritual: a fixed prefix (e.g. BECAUSE:), a word count or a key order",
    "S6": "an output constraint stated again in the criteria, validation or instructions",
}


@dataclass(frozen=True)
class CompileIssue:
    severity: Severity
    code: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.severity} {self.code} at {self.path}: {self.message}"


class RubricNamed:
    """`id` and `version` of whatever holds a `rubric`."""

    rubric: Rubric

    @property
    def id(self) -> str:
        return self.rubric.metadata.id

    @property
    def version(self) -> str:
        return self.rubric.metadata.version


@dataclass(frozen=True)
class Bundle(RubricNamed):
    """A compiled rubric: immutable, named by the sha256 of its canonical JSON."""

    rubric: Rubric
    hash: str
    profile: str
    lattice: tuple[tuple[str, bool], ...]
    warnings: tuple[CompileIssue, ...] = field(default=())

    @property
    def short_hash(self) -> str:
        return self.hash[:12]

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        payload = {"format": "rubricflow-bundle/1", "hash": self.hash, "rubric": rubric_document(self.rubric)}
        path.write_text(json.dumps(payload, ensure_ascii=False, indent=1), encoding="utf-8")
        return path


class RubricCompileError(InputError):
    def __init__(self, source: str, issues: list[CompileIssue]):
        self.source = source
        self.issues = issues
        lines = "\n".join(f"  {i}" for i in issues if i.severity == "error")
        super().__init__(f"{source}: rubric does not compile:\n{lines}")


class GuidanceOnly(RubricCompileError):
    """A constraint-profile rubric given to a scorer: seed 000 uses it as in-context guidance (rubrics/guidance.py)."""

    MESSAGE = (
        "a constraint-profile rubric (seed 000: a mission and examples, no criteria) guides a model in context "
        "and is not scored; print its guidance block with `rubricflow rubric guidance` (Python: rf.guidance)"
    )

    def __init__(self, source: str):
        self.source = source
        self.issues = [CompileIssue("error", "E_GUIDANCE_ONLY", "criteria", self.MESSAGE)]
        InputError.__init__(self, f"{source}: {self.MESSAGE}")


FLAGGED_SHARE = 0.2  # seed 003: more flagged leaves than this and the auditor recommends regenerating
LATER_FIELDS = ("verdicts", "mapping_examples")  # added after rubricflow-bundle/1 was fixed
# Nested fields added later, left out of the document at their default (the same rule, one level down).
LATER_ROLE_DEFAULTS = {"authority": None, "domain": ""}
LATER_CONSTRAINT_DEFAULTS: dict[str, object] = {
    "scope": "call",
    "min_tokens": None,
    "max_tokens": None,
    "forbid": [],
    "min_chars": None,
    "require": [],
}


def rubric_document(rubric: Rubric) -> dict:
    """The rubric as plain JSON data (every field, defaults included, except fields added later
    while they are empty: a rubric that does not use them keeps the hash it always had)."""
    data = rubric.model_dump(mode="json")
    for key in LATER_FIELDS:
        if not data.get(key):
            data.pop(key, None)
    _drop_defaults(data.get("role") or {}, LATER_ROLE_DEFAULTS)
    for constraint in (data.get("output") or {}).get("constraints") or ():
        _drop_defaults(constraint, LATER_CONSTRAINT_DEFAULTS)
    for criterion in data.get("criteria") or ():
        _drop_defaults(criterion, {"check": None, "scope": "transcript", "select": None, "reducer": "mean"})
    for golden in data.get("goldens") or ():
        _drop_defaults(golden, {"expected_label": None})
    if rubric.surface == Surface():  # added later too: the default surface is how rubrics always rendered
        data.pop("surface", None)
    _drop_defaults(data.get("surface") or {}, {"execution_strategy": None, "rationale": True, "enforce_evidence": True})
    return data


def _drop_defaults(data: dict, defaults: dict) -> None:
    for key, default in defaults.items():
        if key in data and data[key] == default:
            del data[key]


def canonical_json(data: object) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(rubric: Rubric) -> str:
    return hashlib.sha256(canonical_json(rubric_document(rubric)).encode("utf-8")).hexdigest()


def load_bundle(path: str | Path) -> Bundle:
    """Reload a saved bundle; the stored hash must match the content."""
    path = Path(path)
    payload = json.loads(path.read_text(encoding="utf-8"))
    if payload.get("format") != "rubricflow-bundle/1":
        raise InputError(f"{path}: not a rubricflow bundle (format={payload.get('format')!r})")
    try:
        rubric = Rubric.model_validate(payload["rubric"])
    except ValidationError as exc:
        raise InputError(f"{path}: bundle rubric is invalid: {exc}") from None
    bundle = compile_or_raise(rubric, source=str(path))
    if bundle.hash != payload.get("hash"):
        raise InputError(f"{path}: content hash {bundle.hash} does not match the stored {payload.get('hash')}")
    return bundle


def compile_or_raise(rubric: Rubric, source: str = "<rubric>") -> Bundle:
    bundle, issues = compile_rubric(rubric)
    if bundle is None:
        raise RubricCompileError(source, issues)
    return bundle


def compile_for_scoring(rubric: Rubric, source: str = "<rubric>") -> Bundle:
    """A bundle a judge can score: it compiles and has criteria. A rubric of decision rules or an
    output template alone is a valid document (it imports, exports, renders), but a run judges
    criteria: refused here with the reason, before any plan or call (not a crash mid-run)."""
    bundle = compile_or_raise(rubric, source)
    if not rubric.criteria and bundle.profile == "constraint":
        raise GuidanceOnly(source)
    if not rubric.criteria:
        raise RubricCompileError(
            source,
            [
                CompileIssue(
                    "error",
                    "E_NO_CRITERIA",
                    "criteria",
                    "scoring needs at least one criterion; this rubric has decision rules or an output template only",
                )
            ],
        )
    return bundle


def compile_rubric(rubric: Rubric) -> tuple[Bundle | None, list[CompileIssue]]:
    """Check `rubric`; return (bundle, issues). The bundle is None when any issue is an error."""
    checks = _Checks(rubric)
    issues = checks.run()
    if any(i.severity == "error" for i in issues):
        return None, issues
    bundle = Bundle(
        rubric=rubric,
        hash=content_hash(rubric),
        profile=profile_of(rubric),
        lattice=tuple(checks.lattice.items()),
        warnings=tuple(issues),
    )
    return bundle, issues


def profile_of(rubric: Rubric) -> str:
    """The seed framework's profile (scoring, detection, compliance, constraint): the first whose
    definition (`properties.PROFILES`) the rubric satisfies; a rubric that satisfies none gets the
    nearest by the shape of its criteria."""
    exact = seed_profile(rubric)
    if exact is not None:
        return exact
    criteria = rubric.criteria
    if not criteria:
        return "constraint" if rubric.output.constraints or rubric.validation else "compliance"
    pattern_backed = sum(1 for c in criteria if c.patterns)
    if rubric.scoring.invert or (rubric.patterns and pattern_backed * 2 > len(criteria)):
        return "detection"
    if all(isinstance(c.scale, BinaryScale) for c in criteria):
        return "compliance"
    return "scoring"


class _Checks:
    def __init__(self, rubric: Rubric):
        self.r = rubric
        self.issues: list[CompileIssue] = []
        self.lattice: dict[str, bool] = {}

    def add(self, severity: Severity, code: str, path: str, message: str) -> None:
        self.issues.append(CompileIssue(severity, code, path, message))

    def run(self) -> list[CompileIssue]:
        self.unique_ids()
        self.patterns()
        self.references()
        self.tree()
        self.genres()
        self.examples_and_goldens()
        self.verdicts()
        self.flagged()
        self.waza_verdict_tools()
        self.json_template()
        self.scoring()
        self.necessary()
        self.sufficient()
        return self.issues

    # -- hard checks -------------------------------------------------------------------------

    def genres(self) -> None:
        """A text whose genre no criterion names is judged on the genre-less criteria: if every
        criterion is limited to genres, such a text would be a call about nothing."""
        criteria = self.r.criteria
        if criteria and all(c.genre for c in criteria):
            named = sorted({g for c in criteria for g in c.genre})
            self.add(
                "error",
                "E_EMPTY_CALL_UNIT",
                "criteria",
                f"every criterion is limited to genres ({', '.join(named)}): a text of any other genre, or of "
                "none, would be judged on no criterion; give at least one criterion no `genre`",
            )

    def unique_ids(self) -> None:
        def dupes(kind: str, ids: list[str]) -> None:
            seen: set[str] = set()
            for i, node_id in enumerate(ids):
                if node_id in seen:
                    self.add("error", "E_DUPLICATE_ID", f"{kind}[{i}].id", f"id {node_id!r} is used twice")
                seen.add(node_id)

        dupes("criteria/groups", [c.id for c in self.r.criteria] + [g.id for g in self.r.groups])
        dupes("patterns", [p.id for p in self.r.patterns])
        dupes("disqualifiers", [d.id for d in self.r.disqualifiers])
        dupes("goldens", [g.name for g in self.r.goldens])
        dupes("output.constraints", [c.id for c in self.r.output.constraints])
        dq_ids = {d.id for d in self.r.disqualifiers}
        for i, c in enumerate(self.r.output.constraints):
            if c.id in dq_ids:  # a hard constraint disqualifies under its own id, beside the disqualifiers
                self.add(
                    "error", "E_DUPLICATE_ID", f"output.constraints[{i}].id", f"id {c.id!r} is a disqualifier's too"
                )
            if c.scope == "judgment" and c.field not in CRITERION_FIELDS:
                self.add(
                    "error",
                    "E_CONSTRAINT_SCOPE",
                    f"output.constraints[{i}].scope",
                    f"constraint {c.id!r}: scope 'judgment' joins every criterion's {c.field!r}, "
                    f"but {c.field!r} is not a criterion field ({', '.join(CRITERION_FIELDS)})",
                )

    def patterns(self) -> None:
        reasons = re2_errors([p.effective_regex() for p in self.r.patterns])
        for i, p in enumerate(self.r.patterns):
            reason = reasons[p.effective_regex()]
            if reason and backtracking(p.effective_regex()) is None:
                self.add("error", "E_REGEX", f"patterns[{i}].regex", f"pattern {p.id!r} is not a valid regex: {reason}")
            elif reason:
                self.add(
                    "warning",
                    "W_REGEX_BACKTRACKING",
                    f"patterns[{i}].regex",
                    f"pattern {p.id!r} is not RE2 ({reason}); kept, and counted with the backtracking `regex` "
                    f"engine in Python (slower, {BACKTRACKING_TIMEOUT_S:g} s a text at most)",
                )

    def references(self) -> None:
        pattern_ids = {p.id for p in self.r.patterns}
        criterion_ids = {c.id for c in self.r.criteria}
        for i, c in enumerate(self.r.criteria):
            for pid in c.patterns:
                if pid not in pattern_ids:
                    self.add(
                        "error", "E_UNKNOWN_PATTERN", f"criteria[{i}].patterns", f"{c.id} uses unknown pattern {pid!r}"
                    )
        for i, d in enumerate(self.r.disqualifiers):
            for pid in d.patterns:
                if pid not in pattern_ids:
                    self.add(
                        "error",
                        "E_UNKNOWN_PATTERN",
                        f"disqualifiers[{i}].patterns",
                        f"{d.id} uses unknown pattern {pid!r}",
                    )
            if d.criterion is not None and d.criterion not in criterion_ids:
                self.add(
                    "error",
                    "E_UNKNOWN_CRITERION",
                    f"disqualifiers[{i}].criterion",
                    f"{d.id} names unknown criterion {d.criterion!r}",
                )
        for i, a in enumerate(self.r.advice):
            for pid in a.when:
                if pid not in pattern_ids:
                    self.add(
                        "error", "E_UNKNOWN_PATTERN", f"advice[{i}].when", f"advice rule names unknown pattern {pid!r}"
                    )
        used = {pid for c in self.r.criteria for pid in c.patterns}
        used |= {pid for d in self.r.disqualifiers for pid in d.patterns}
        used |= {pid for a in self.r.advice for pid in a.when}
        for i, p in enumerate(self.r.patterns):
            if p.id not in used:
                self.add(
                    "warning",
                    "W_UNUSED_PATTERN",
                    f"patterns[{i}]",
                    f"pattern {p.id!r} is not used by any criterion, disqualifier or advice rule",
                )

    def tree(self) -> None:
        criteria = {c.id for c in self.r.criteria}
        groups = {g.id: g for g in self.r.groups}
        parent: dict[str, str] = {}
        for i, g in enumerate(self.r.groups):
            for child in g.children:
                if child not in criteria and child not in groups:
                    self.add(
                        "error",
                        "E_UNKNOWN_CHILD",
                        f"groups[{i}].children",
                        f"group {g.id!r} names unknown node {child!r}",
                    )
                elif child in parent:
                    self.add(
                        "error",
                        "E_TREE",
                        f"groups[{i}].children",
                        f"{child!r} has two parents: {parent[child]!r} and {g.id!r}",
                    )
                else:
                    parent[child] = g.id
        for start in groups:  # a cycle shows up as a walk up the parents that returns to its start
            node, steps = parent.get(start), 0
            while node is not None and steps <= len(groups):
                if node == start:
                    self.add("error", "E_TREE", "groups", f"group {start!r} is its own ancestor")
                    break
                node, steps = parent.get(node), steps + 1
        root = self.r.scoring.root
        if root is not None and root not in groups:
            self.add("error", "E_UNKNOWN_ROOT", "scoring.root", f"root {root!r} is not a group")
        if self.r.criteria and sum(c.weight for c in self.r.criteria) == 0:
            self.add("error", "E_ZERO_WEIGHTS", "criteria", "every criterion has weight 0")

    def examples_and_goldens(self) -> None:
        by_id = {c.id: c for c in self.r.criteria}
        for i, c in enumerate(self.r.criteria):
            for j, ex in enumerate(c.examples):
                try:
                    c.scale.normalize(ex.score)
                except ScaleError as exc:
                    self.add("error", "E_EXAMPLE_SCORE", f"criteria[{i}].examples[{j}].score", f"{c.id}: {exc}")
            if isinstance(c.scale, NominalScale) and any(cat.score is None for cat in c.scale.categories):
                self.add(
                    "warning",
                    "W_NOMINAL_UNSCORED",
                    f"criteria[{i}].scale",
                    f"{c.id}: some categories have no score; they classify but do not score",
                )
            if not (c.title or c.description or described_levels(c) >= 2):
                self.add(
                    "warning",
                    "W_UNDESCRIBED",
                    f"criteria[{i}]",
                    f"{c.id} has no title, description or anchors for the judge",
                )
        for i, g in enumerate(self.r.goldens):
            for cid, value in g.expected_scores.items():
                if cid not in by_id:
                    self.add(
                        "error",
                        "E_GOLDEN_SCORE",
                        f"goldens[{i}].expected_scores.{cid}",
                        f"golden {g.name!r} names unknown criterion {cid!r}",
                    )
                    continue
                try:
                    by_id[cid].scale.normalize(value)
                except ScaleError as exc:
                    self.add(
                        "error", "E_GOLDEN_SCORE", f"goldens[{i}].expected_scores.{cid}", f"golden {g.name!r}: {exc}"
                    )

    def verdicts(self) -> None:
        """Every verdict a decision rule gives or a mapping example shows lies in the verdict space."""
        space = [v.label for v in self.r.verdicts]
        if len(set(space)) != len(space):
            self.add("error", "E_DUPLICATE_ID", "verdicts", f"a verdict is listed twice: {space}")
        rules = [d for d in self.r.decision_rules if not isinstance(d, str)]
        dupes = _repeated([d.id for d in rules]) + _repeated([e.id for e in self.r.mapping_examples])
        for node_id in dupes:
            self.add("error", "E_DUPLICATE_ID", "decision_rules/mapping_examples", f"id {node_id!r} is used twice")
        if not space:
            return
        for i, rule in enumerate(self.r.decision_rules):
            if not isinstance(rule, str) and rule.verdict is not None and rule.verdict not in space:
                self.add(
                    "error",
                    "E_VERDICT",
                    f"decision_rules[{i}].verdict",
                    f"rule {rule.id} gives {rule.verdict!r}, not one of the verdicts {', '.join(space)}",
                )
        for i, ex in enumerate(self.r.mapping_examples):
            if ex.verdict not in space:
                self.add(
                    "error",
                    "E_VERDICT",
                    f"mapping_examples[{i}].verdict",
                    f"example {ex.id} maps to {ex.verdict!r}, not one of the verdicts {', '.join(space)}",
                )

    def json_template(self) -> None:
        """A JSON output template (seed 000's `<json_template>`) is the answer the judge is told to
        give: one that is not JSON is an error, not a template that merely misaligns."""
        text = self.r.output.template.strip()
        if not text or text[0] not in "{[":
            return
        try:
            json.loads(text)
        except ValueError as exc:
            self.add("error", "E_TEMPLATE", "output.template", f"the JSON template is not valid JSON ({exc})")

    def waza_verdict_tools(self) -> None:
        """Seed 004: a waza body must "end with explicit set_waza_grade_pass / set_waza_grade_fail
        instructions — that's how the prompt grader gets a verdict"; one that names neither tool (or
        only one) leaves the judge to guess how to answer."""
        body = "\n".join(self.r.instructions)
        missing = [tool for tool in VERDICT_TOOLS if tool not in body]
        if is_waza(self.r) and missing:
            self.add(
                "warning",
                "W_WAZA_NO_VERDICT_TOOLS",
                "instructions",
                f"the body never names {' or '.join(missing)}: end it with the instructions to call "
                f"{' / '.join(VERDICT_TOOLS)} (seed 004)",
            )

    def flagged(self) -> None:
        """Seed 003: more than 20% of the leaves flagged by an audit (`flag:` tags) means regenerate."""
        flagged = [c.id for c in self.r.criteria if any(t.startswith("flag:") for t in c.tags)]
        if self.r.criteria and len(flagged) > FLAGGED_SHARE * len(self.r.criteria):
            self.add(
                "warning",
                "W_FLAGGED_LEAVES",
                "criteria",
                f"{len(flagged)} of {len(self.r.criteria)} criteria carry audit flags (more than "
                f"{FLAGGED_SHARE:.0%}): the audit recommends regenerating the rubric ({', '.join(flagged[:5])})",
            )

    def scoring(self) -> None:
        mins = [lab.min for lab in self.r.scoring.labels]
        if len(set(mins)) != len(mins):
            self.add("error", "E_LABELS", "scoring.labels", f"two decision labels share a lower bound: {mins}")
        has_points = any(c.points is not None for c in self.r.criteria)
        if has_points and self.r.scoring.method != "points" and not self.r.groups:
            self.add(
                "warning",
                "W_POINTS_IGNORED",
                "scoring.method",
                "criteria carry signed points but scoring.method is not 'points'",
            )
        if self.r.scoring.method == "points" and not any((c.points or 0) > 0 for c in self.r.criteria):
            self.add(
                "error",
                "E_POINTS",
                "scoring.method",
                "method 'points' needs at least one criterion with positive points",
            )

    # -- the lattice -------------------------------------------------------------------------

    def necessary(self) -> None:
        r = self.r
        self.lattice["N1"] = bool(r.goal.strip() or r.metadata.description.strip())
        # goldens are test cases, never shown to the judge: not structure (seed 000 N2: "has_examples")
        self.lattice["N2"] = bool(r.criteria or r.decision_rules or r.mapping_examples)
        # seed 000 N3: "JSON template, XML tags, or behavioral output format" - ICL examples count
        self.lattice["N3"] = bool(r.criteria or r.output.template.strip() or r.output.constraints or r.mapping_examples)
        messages = {
            "N1": ("N1_NO_GOAL", "goal", "state the rubric's mission in `goal` (or metadata.description)"),
            "N2": ("N2_NO_STRUCTURE", "criteria", "give criteria, decision rules or mapping (ICL) examples"),
            "N3": (
                "N3_NO_OUTPUT_CONTRACT",
                "output",
                "give criteria (the output schema follows from them), an output template or ICL examples",
            ),
        }
        for key, (code, path, message) in messages.items():
            if not self.lattice[key]:
                self.add("error", code, path, message)

    def sufficient(self) -> None:
        r = self.r
        unanchored = [(i, c.id) for i, c in enumerate(r.criteria) if described_levels(c) < 2]
        for index, cid in unanchored:
            self.add(
                "warning",
                "S1_UNANCHORED",
                f"criteria[{index}].scale",
                f"{cid} has fewer than 2 distinct described anchors",
            )
        self.economy()
        predicates = properties(r)
        self.lattice.update((key, holds(predicates)) for key, holds in SUFFICIENT.items())
        hints = {
            "S2": (
                "S2_SCHEMA_MISALIGNED",
                "output.template",
                f"the output template names {predicates['P_aligned']:.0%} of the criterion ids (P_aligned)",
            ),
            "S3": (
                "S3_NOT_MECHANICAL",
                "criteria",
                "no criterion has mechanical rules or names patterns",
            ),
            "S4": ("S4_NO_DISQUALIFIERS", "disqualifiers", "no disqualifiers"),
            "S5": (
                "S5_NO_RITUAL",
                "output.constraints",
                "no ritual: a fixed prefix (rationale starts with 'BECAUSE:'), a word count or a key order",
            ),
            "S6": (
                "S6_NOT_RESTATED",
                "validation",
                "no output constraint is restated in the criteria, validation or instructions",
            ),
        }
        if not author_criteria(r):
            del hints["S2"]  # no criterion for the output to name: S2 does not apply (nor S1)
        for key, (code, path, message) in hints.items():
            if not self.lattice[key]:
                self.add("warning", code, path, message)

    def economy(self) -> None:
        """Seed 000: `3 <= len(r.criteria) <= 7 or r.criteria == {}` is a warning either way; a
        pass/fail rubric of one criterion is legal, and is told it sits below the range."""
        n, (low, high) = len(author_criteria(self.r)), ECONOMY
        if n and not low <= n <= high:
            advice = (
                "split the rubric or merge criteria"
                if n > high
                else "add criteria (a narrow pass/fail check may keep it)"
            )
            self.add(
                "warning",
                "W_ECONOMY",
                "criteria",
                f"{n} {'criterion' if n == 1 else 'criteria'}: the seed framework recommends {low} to {high} "
                f"(P_economy); {advice}",
            )


def _repeated(ids: list[str]) -> list[str]:
    return sorted({i for i in ids if ids.count(i) > 1})
