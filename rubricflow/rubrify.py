"""rubrify's public names on rubricflow (seed 001), so rubrify code ports by changing its import line.

`from rubrify import Rubric, compile_rubric, Judge, JudgeConfig, ...` becomes
`from rubricflow.rubrify import ...` (and `rubrify.ir.constraints`, `rubrify.ir.roles`,
`harn_ai.models` likewise). Each name builds rubricflow's own object: a `Rubric` here is a
`rubricflow.rubrics.model.Rubric`, `compile_rubric` returns rubricflow's bundle, and `Judge.evaluate`
is rubricflow's client (retries, rate limits, secret scrubbing), awaited as rubrify awaits it.
rubrify's defaults come with the names (a "Rejected" disqualification, one call per criterion, the
XML surface, tool calls). docs/rubrify.md maps every seed name to rubricflow's.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rubricflow.errors import InputError
from rubricflow.rubrics import compiler
from rubricflow.rubrics import model as ir
from rubricflow.rubrics.compiler import Bundle, CompileIssue, RubricCompileError, compile_for_scoring
from rubricflow.rubrify_evolve import (  # rubrify's evolution names
    AnnotatedExample,
    CoEvolutionConfig,
    EvolutionResult,
    RubricEvolutionConfig,
    evolve_rubric,
    evolve_rubric_v3,
    judge_options,
)

Definition = ir.Definition
AdviceRule = ir.AdviceRule
RoleSpec = ir.Role
REJECTED = "Rejected"  # rubrify's decision for a disqualified judgment (seed 001, step 10)
Enforcement = Literal["hard", "soft"]
Mode = Literal["exactly", "min", "max"]


def ScaleAnchor(value: int, label: str = "", description: str = "") -> ir.Anchor:  # noqa: N802 (rubrify's name)
    return ir.Anchor(value=value, label=label, description=description)


def BinaryScale(  # noqa: N802
    true_label: str | None = None,
    false_label: str | None = None,
    true_score: float | None = None,
    false_score: float | None = None,
    **fields: Any,
) -> ir.BinaryScale:
    """rubrify's True/False labels and scores as rubricflow's value 1 / value 0; a score is a unit
    score here, so one outside [0, 1] is refused rather than pushing the total past 100."""
    labels = list(fields.pop("labels", ir.BinaryScale().labels))
    scores = list(fields.pop("scores", ir.BinaryScale().scores))
    for i, label, score in ((0, false_label, false_score), (1, true_label, true_score)):
        labels[i] = label if label is not None else labels[i]
        if score is not None and not 0 <= score <= 1:
            raise InputError(f"BinaryScale: a score is a unit score in [0, 1] in rubricflow, got {score!r}")
        scores[i] = score if score is not None else scores[i]
    return ir.BinaryScale(labels=tuple(labels), scores=tuple(scores), **fields)


def OrdinalScale(anchors: Sequence[ir.Anchor], min: int | None = None, max: int | None = None) -> ir.OrdinalScale:  # noqa: N802
    return ir.OrdinalScale(anchors=tuple(anchors), min=min, max=max)


def NominalScale(  # noqa: N802
    anchors: Sequence[ir.Anchor] = (), categories: Sequence[Any] = (), **fields: Any
) -> ir.NominalScale:
    """rubrify's nominal scale of anchors (seed 001: "Maps category value to [0, 1] by range"; its
    source spells them `categories=[ScaleAnchor(...)]`): each anchor a category named by its label
    (or its value), scoring (value - min) / (max - min); rubricflow's own `categories=` pass through."""
    if not anchors and categories and all(isinstance(c, ir.Anchor) for c in categories):
        anchors, categories = categories, ()
    if not anchors:
        return ir.NominalScale(categories=tuple(categories), **fields)
    lo, hi = min(a.value for a in anchors), max(a.value for a in anchors)
    return ir.NominalScale(
        categories=tuple(
            ir.Category(
                value=a.label or str(a.value),
                description=a.description,
                score=(a.value - lo) / (hi - lo) if hi > lo else 0.0,  # rubrify: one value scores 0
            )
            for a in anchors
        ),
        **fields,
    )


def NumericScale(  # noqa: N802
    minimum: float, maximum: float, step: float | None = None, anchors: Sequence[ir.Anchor] = ()
) -> ir.OrdinalScale | ir.NumericScale:
    """rubrify's anchored numeric scale: integer levels in steps of 1 are rubricflow's ordinal scale
    (anchors kept, every level judged); any other grid is a numeric scale."""
    if anchors and step == 1 and float(minimum).is_integer() and float(maximum).is_integer():
        return ir.OrdinalScale(anchors=tuple(anchors), min=int(minimum), max=int(maximum))
    return ir.NumericScale(min=minimum, max=maximum, step=step)


def EvidenceSpec(  # noqa: N802
    source: Literal["response", "context", "rubric", "any"] = "response", **fields: Any
) -> ir.Evidence:
    """rubrify's evidence spec (required, exact_quote, min_items, max_items) as rubricflow's, which
    checks every quote against the response: another `source` has nothing to map to."""
    if source != "response":
        raise InputError(f"EvidenceSpec(source={source!r}): rubricflow checks quotes against the response only")
    return ir.Evidence(**fields)


def Criterion(  # noqa: N802
    id: str,  # noqa: A002
    scale: Any = None,
    genre: str | Sequence[str] | None = None,
    **fields: Any,
) -> ir.Criterion:
    """`genre=None` (rubrify: always active) is rubricflow's empty genre list; one genre may be a string."""
    if genre is not None:
        fields["genre"] = (genre,) if isinstance(genre, str) else tuple(genre)
    return ir.Criterion(id=id, **({"scale": scale} if scale is not None else {}), **fields)


def CriterionGroup(id: str, children: Sequence[str], aggregation: str = "weighted_sum", **fields: Any) -> ir.Group:  # noqa: N802, A002
    """rubrify's `weighted_sum` group divides by its children's total weight (its judge loop), which
    is rubricflow's `weighted_mean`; rubricflow's own `weighted_sum` adds without dividing."""
    method = "weighted_mean" if aggregation == "weighted_sum" else aggregation
    return ir.Group.model_validate({"id": id, "children": tuple(children), "aggregation": method, **fields})


def CalibrationExample(id: str, input_summary: str, expected_verdict: str, explanation: str = "") -> ir.MappingExample:  # noqa: N802, A002
    """rubrify's few-shot example: the response it summarizes, the verdict and why, as a mapping example."""
    return ir.MappingExample(id=id, output=input_summary, verdict=expected_verdict, note=explanation)


def PatternEntry(id: str, pattern: str | None = None, flags: str | None = None, **fields: Any) -> ir.Pattern:  # noqa: N802, A002
    """rubrify's `PatternEntry(id=, pattern=, flags="i")` (any case unless told); rubricflow's own
    `regex=` / `words=` pass through with its own default flags."""
    if pattern is not None:
        fields["regex"] = pattern
        flags = "i" if flags is None else flags
    return ir.Pattern.model_validate({"id": id, **({"flags": flags} if flags is not None else {}), **fields})


class _PatternDisqualifier(ir.Disqualifier):
    """A disqualifier with rubrify's own regex, which `Rubric` adds as the pattern it names."""

    regex: str = Field(exclude=True)


def Disqualifier(  # noqa: N802
    id: str,  # noqa: A002
    description: str = "",
    pattern: str | None = None,
    criterion_ids: Sequence[str] = (),
    **fields: Any,
) -> ir.Disqualifier:
    """rubrify's `pattern=` (a regex searched in any case) or `criterion_ids=` (a criterion whose unit
    score is 0); rubricflow's own `kind=`, `patterns=`, `criterion=` pass through. rubricflow's
    disqualifier is of one kind and names one criterion, so a mix or several criteria are refused."""
    if pattern is not None and criterion_ids or len(criterion_ids) > 1:
        raise InputError(f"Disqualifier {id!r}: give one Disqualifier per pattern or criterion in rubricflow")
    if pattern is not None:
        return _PatternDisqualifier(
            id=id, description=description, kind="pattern", patterns=(f"dq_{id}",), regex=pattern, **fields
        )
    if criterion_ids:
        fields.update(kind="criterion", criterion=criterion_ids[0])
    return ir.Disqualifier(id=id, description=description, **fields)


def RubricMeta(name: str, version: str = "1.0.0", **fields: Any) -> ir.Metadata:  # noqa: N802
    """rubrify's `RubricMeta(name=, version=)`: the id is the name in kebab case, the title the name,
    and a two-part version ("1.0") gains its patch number."""
    from rubricflow.rubrics.importers.common import kebab, semver

    return ir.Metadata(id=kebab(name), title=name, version=semver(version), **fields)


class SurfacePolicy(ir.Surface):
    """rubrify's SurfacePolicy: rubricflow's Surface with rubrify's defaults (the XML surface, one
    call per criterion showing the whole rubric, keys in the schema's order, seed 001's labels,
    evidence asked for but not enforced). `decision_thresholds` (min score 0-100, label) and `role`
    are not the surface's in rubricflow: `compile_rubric` moves them to the scoring and the role."""

    input_codec: Literal["markdown", "xml"] = "xml"
    criterion_focus: Literal["full", "focused"] = "full"  # rubrify's: the whole rubric in every call
    enforce_key_order: bool = True  # rubrify's: the answer's keys asked for in the schema's order
    default_labels: bool = True
    enforce_evidence: bool = False  # seed 001: EvidenceSpec's required/min_items are prompt-only
    execution_strategy: Literal["per_criterion", "grouped", "holistic"] | None = "per_criterion"
    output_codec: Literal["json"] = Field(default="json", exclude=True)
    role: ir.Role | None = Field(default=None, exclude=True)
    decision_thresholds: tuple[tuple[float, str], ...] | None = Field(default=None, exclude=True)


def Rubric(meta: ir.Metadata, **fields: Any) -> ir.Rubric:  # noqa: N802
    """rubrify's `Rubric(meta=, goal=, criteria=[...], calibration_examples=[...])` with rubrify's
    policy (SurfacePolicy's defaults, or `surface=`) and its "Rejected" disqualification."""
    surface = fields.pop("surface", None) or SurfacePolicy()
    if "calibration_examples" in fields:
        fields["mapping_examples"] = (*fields.get("mapping_examples", ()), *fields.pop("calibration_examples"))
    own = [d for d in fields.get("disqualifiers", ()) if isinstance(d, _PatternDisqualifier)]
    if own:
        kept = tuple(fields.get("patterns", ()))
        fields["patterns"] = (*kept, *(ir.Pattern(id=d.patterns[0], regex=d.regex, flags="i") for d in own))
        fields["disqualifiers"] = [
            ir.Disqualifier.model_validate(d.model_dump()) if isinstance(d, _PatternDisqualifier) else d
            for d in fields["disqualifiers"]
        ]
    scoring = ir.Scoring.model_validate(fields.pop("scoring", {}))
    if "disqualified_label" not in scoring.model_fields_set:
        scoring = scoring.model_copy(update={"disqualified_label": REJECTED})
    return _with_policy(_references_checked(ir.Rubric(metadata=meta, scoring=scoring, **fields)), surface)


def _references_checked(rubric: ir.Rubric) -> ir.Rubric:
    """rubrify's Rubric validators: unique criterion ids, and groups and disqualifiers that name known
    criteria, "at construction time" (seed 001), by the compiler's own checks, refused in one line."""
    refused = [
        f"{i.path}: {i.message}"
        for i in compiler.compile_rubric(rubric)[1]
        if i.code in ("E_UNKNOWN_CHILD", "E_UNKNOWN_CRITERION") or i.path.startswith("criteria/groups")
    ]
    if refused:
        raise InputError(f"Rubric {rubric.metadata.id!r}: {'; '.join(refused)}")
    return rubric


def _with_policy(rubric: ir.Rubric, policy: ir.Surface) -> ir.Rubric:
    """The rubric under `policy`: its surface, its thresholds as the scoring's labels, its role."""
    update: dict[str, Any] = {"surface": ir.Surface.model_validate(policy.model_dump())}
    if isinstance(policy, SurfacePolicy) and policy.decision_thresholds is not None:
        labels = _labels(policy.decision_thresholds)
        update["scoring"] = rubric.scoring.model_copy(update={"labels": labels})
    if isinstance(policy, SurfacePolicy) and policy.role is not None:
        update["role"] = policy.role
    return rubric.model_copy(update=update)


def _labels(thresholds: Sequence[tuple[float, str]]) -> tuple[ir.DecisionLabel, ...]:
    """rubrify's (min score 0-100, label) thresholds on rubricflow's 0-1 score. rubrify gives a score
    below every threshold the lowest one's label, so that one starts at 0; no thresholds: "Unclassified"."""
    if not thresholds:
        return (ir.DecisionLabel(label="Unclassified", min=0.0),)
    ordered = sorted(thresholds, key=lambda t: -t[0])
    lowest = len(ordered) - 1
    return tuple(
        ir.DecisionLabel(label=label, min=0.0 if i == lowest else min(lo, 100) / 100)
        for i, (lo, label) in enumerate(ordered)
    )


def _constraint(
    kind: str, id: str, target_field: str, description: str, enforcement: Enforcement, scope: str, **limits: Any
) -> ir.OutputConstraint:  # noqa: A002
    """One of rubrify's OutputConstraint variants as rubricflow's single output constraint."""
    if not limits:
        raise InputError(f"{kind} {id!r}: nothing to check (give a prefix, a suffix or a count)")
    return ir.OutputConstraint.model_validate(
        {"id": id, "field": target_field, "description": description, "severity": enforcement, "scope": scope, **limits}
    )


def _bounds(mode: Mode, count: int, low: str, high: str) -> dict[str, int]:
    """rubrify's `mode` (exactly, min, max) of `count` as rubricflow's lower and upper bound fields."""
    return {"exactly": {low: count, high: count}, "min": {low: count}, "max": {high: count}}[mode]


def WordCountConstraint(  # noqa: N802
    id: str,  # noqa: A002
    count: int,
    mode: Mode = "exactly",
    target_field: str = "rationale",
    description: str = "",
    enforcement: Enforcement = "hard",
    scope: ir.ConstraintScope = "call",
) -> ir.OutputConstraint:
    limits = _bounds(mode, count, "min_words", "max_words")
    return _constraint("WordCountConstraint", id, target_field, description, enforcement, scope, **limits)


def PrefixSuffixConstraint(  # noqa: N802
    id: str,  # noqa: A002
    prefix: str | None = None,
    suffix: str | None = None,
    target_field: str = "rationale",
    description: str = "",
    enforcement: Enforcement = "hard",
    scope: ir.ConstraintScope = "call",
) -> ir.OutputConstraint:
    limits = {k: v for k, v in (("prefix", prefix), ("suffix", suffix)) if v is not None}
    return _constraint("PrefixSuffixConstraint", id, target_field, description, enforcement, scope, **limits)


def CharLimitConstraint(  # noqa: N802
    id: str,  # noqa: A002
    limit: int,
    mode: Mode = "max",
    target_field: str = "rationale",
    description: str = "",
    enforcement: Enforcement = "hard",
    scope: ir.ConstraintScope = "call",
) -> ir.OutputConstraint:
    limits = _bounds(mode, limit, "min_chars", "max_chars")
    return _constraint("CharLimitConstraint", id, target_field, description, enforcement, scope, **limits)


def ItemCountConstraint(  # noqa: N802
    id: str,  # noqa: A002
    count: int,
    mode: Mode = "exactly",
    delimiter: str = ";",
    target_field: str = "rationale",
    description: str = "",
    enforcement: Enforcement = "hard",
    scope: ir.ConstraintScope = "call",
) -> ir.OutputConstraint:
    limits = _bounds(mode, count, "min_items", "max_items")
    return _constraint(
        "ItemCountConstraint", id, target_field, description, enforcement, scope, separator=delimiter, **limits
    )


def TokenConstraint(  # noqa: N802
    id: str,  # noqa: A002
    token: str,
    must_contain: bool = True,
    target_field: str = "rationale",
    description: str = "",
    enforcement: Enforcement = "hard",
    scope: ir.ConstraintScope = "call",
) -> ir.OutputConstraint:
    """`must_contain=True` is rubricflow's required phrase (case as written, as rubrify's check);
    `must_contain=False` its forbidden phrase (matched in any case)."""
    limits = {"require": (token,)} if must_contain else {"forbid": (token,)}
    return _constraint("TokenConstraint", id, target_field, description, enforcement, scope, **limits)


@dataclass(frozen=True)
class CompilationResult:
    bundle: Bundle | None
    issues: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.bundle is not None and not self.issues


def compile_rubric(
    rubric: ir.Rubric, *, policy: ir.Surface | None = None, output_constraints: Sequence[ir.OutputConstraint] = ()
) -> CompilationResult:
    """rubrify's `compile_rubric`: the policy and output constraints join the rubric, then rubricflow
    compiles it; `.ok` is False with `.issues` where it does not compile or rubrify's audit of the
    output constraints finds a problem (nothing raised, as rubrify)."""
    if policy is not None:
        rubric = _with_policy(rubric, policy)
    if output_constraints:
        joined = (*rubric.output.constraints, *output_constraints)
        rubric = rubric.model_copy(update={"output": rubric.output.model_copy(update={"constraints": joined})})
    audit = _unrecognised_fields(rubric)
    try:
        bundle = compile_for_scoring(ir.Rubric.model_validate(rubric.model_dump()), "<rubrify rubric>")
    except RubricCompileError as exc:
        return CompilationResult(None, [str(exc), *audit])
    return CompilationResult(bundle, audit)


RUBRIFY_FIELDS = ("rationale", "evidence", "score", "advice")  # rubrify's audit_output_constraints recognises


def _unrecognised_fields(rubric: ir.Rubric) -> list[str]:
    """rubrify's audit "recognized fields" (seed 001): a constraint on any other field is an issue
    (rubricflow would quietly ask the judge for it as a new answer field)."""
    return [
        str(
            CompileIssue(
                "error",
                "E_UNKNOWN_FIELD",
                f"output.constraints[{i}].field",
                f"constraint {c.id!r}: target_field {c.field!r} is not one rubrify recognises "
                f"({', '.join(RUBRIFY_FIELDS)})",
            )
        )
        for i, c in enumerate(rubric.output.constraints)
        if c.field not in RUBRIFY_FIELDS
    ]


class Model(BaseModel):
    """harn_ai's model record, as far as a judge needs it: provider, id, and an optional `baseUrl`
    (`model.model_copy(update={"baseUrl": ..., "api": "openai-completions"})` points it at a proxy)."""

    model_config = ConfigDict(extra="allow")
    provider: str
    id: str
    baseUrl: str | None = None  # noqa: N815 (harn_ai's field name)
    api: str = "openai-completions"


# OpenAI-compatible providers rubrify reaches through harn_ai, by their public base URL.
COMPATIBLE = {"deepseek": "https://api.deepseek.com/v1", "groq": "https://api.groq.com/openai/v1"}


def get_model(provider: str, model_id: str) -> Model:
    """harn_ai's `get_model`: an OpenAI-compatible model of a known provider (its own base URL, or
    OPENAI_BASE_URL / the provider's default for "openai")."""
    return Model(provider=provider, id=model_id, baseUrl=COMPATIBLE.get(provider))


class JudgeConfig(BaseModel):
    """rubrify's JudgeConfig. `api_key` is set as the provider's key variable for this process (the
    key is read from there, as every rubricflow call reads it: it never enters a config, record or
    log); `parallel=False` sends one call at a time; `use_tool=True` (rubrify's default) asks for the
    answer as a tool call, `use_tool=False` as JSON in plain text."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    model: Model
    api_key: str | None = None
    temperature: float = 0.0
    max_tokens: int = 2048
    parallel: bool = False
    use_tool: bool = True

    def options(self) -> dict[str, Any]:
        """The rf.Judge options this config means."""
        return judge_options(self.model, self.temperature, self.max_tokens, self.parallel, self.use_tool)


@dataclass(frozen=True)
class CriterionJudgment:
    """rubrify's per-criterion result; `warnings` holds rubricflow's reason a criterion went unscored."""

    criterion_id: str
    value: Any
    unit_score: float | None
    rationale: str = ""
    evidence: tuple[str, ...] = ()
    confidence: float | None = None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class AggregatedScore:
    """rubrify's aggregation: `score` is rubricflow's (0-1), `normalized_score` rubrify's 0-100;
    `raw_score` the weighted sum of the top level before division (weighted_mean scoring only, else
    None), `group_scores` each group's 0-1 score (None where none of its criteria was scored)."""

    score: float | None  # 0..1
    raw_score: float | None = None
    method: str = "weighted_mean"
    group_scores: dict[str, float | None] = field(default_factory=dict)

    @property
    def normalized_score(self) -> float | None:
        """rubrify's 0-100 score."""
        return None if self.score is None else round(100 * self.score, 6)


Aggregation = AggregatedScore  # the port's earlier name


@dataclass(slots=True)
class JudgeUsage:
    """Token usage of a judgment's calls (a retried call counts once per attempt sent)."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    api_calls: int = 0

    def __iadd__(self, other: JudgeUsage) -> JudgeUsage:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.total_tokens += other.total_tokens
        self.api_calls += other.api_calls
        return self


def _time_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Judgment:
    aggregation: AggregatedScore
    decision: str | None
    criterion_judgments: list[CriterionJudgment]
    violations: tuple[str, ...]
    result: Any  # rubricflow's Result, with usage, cost and errors
    constraint_warnings: tuple[str, ...] = ()
    pattern_hits: dict[str, list[str]] = field(default_factory=dict)
    usage: JudgeUsage = field(default_factory=JudgeUsage)
    timestamp: int = field(default_factory=_time_ms)  # when the judgment was made, ms since the epoch


class Judge:
    """rubrify's stateful Judge: `await judge.evaluate(bundle, text)` (also under `asyncio.run`),
    counting `evaluation_count` and `total_usage` across evaluations."""

    def __init__(self, config: JudgeConfig) -> None:
        from rubricflow.api_judge import Judge as Engine
        from rubricflow.tasks.judging.providers import provider

        if config.api_key:
            name = config.options()["provider"]
            os.environ[provider(name).key_variable] = config.api_key
        self.config = config
        self.engine = Engine(**config.options())
        self.evaluation_count = 0
        self.total_usage = JudgeUsage()

    async def evaluate(
        self,
        bundle: Bundle,
        response_text: str,
        context_text: str | None = None,
        genre: str | None = None,
        on_criterion_start: Callable[[str], Any] | None = None,
        on_criterion_done: Callable[[str, CriterionJudgment], Any] | None = None,
    ) -> Judgment:
        if not isinstance(bundle, Bundle):
            raise InputError(f"Judge.evaluate takes a compiled bundle (compile_rubric(...).bundle), not {bundle!r}")
        done = (lambda s: on_criterion_done(s.name, _judged(s))) if on_criterion_done else None
        result, usage = await self._ask(bundle, response_text, context_text, genre, on_criterion_start, done)
        result = _disqualified_by_rationales(bundle.rubric, result)
        self.evaluation_count += 1
        self.total_usage += usage
        return Judgment(
            aggregation=_aggregated(bundle.rubric, result, genre),
            decision=result.label,
            criterion_judgments=[_judged(s) for s in result.criteria.values()],
            violations=result.disqualifiers,
            result=result,
            constraint_warnings=_warnings(result),
            pattern_hits=_pattern_hits(bundle.rubric, response_text),
            usage=usage,
        )

    async def _ask(
        self, bundle: Bundle, text: str, context: str | None, genre: str | None, on_start: Any, on_done: Any
    ) -> tuple[Any, JudgeUsage]:
        """rubricflow's Result and its usage. An endpoint that refuses tool calls moves this judge
        to rubricflow's output-mode negotiation (JSON schema ... plain text) for good, as rubrify
        reads the text when no tool call comes back."""

        async def ask() -> Any:
            return await self.engine.aevaluate(
                bundle, text, context, genre, on_criterion_start=on_start, on_criterion_done=on_done
            )

        result = await ask()
        usage = _usage(result)
        if self.engine.config.output_mode == "tools" and _refused_tools(result):
            from rubricflow.api_judge import Judge as Engine

            self.engine = Engine(**{**self.config.options(), "output_mode": "auto"})
            result = await ask()
            usage += _usage(result)
        return result, usage

    def evaluate_sync(self, bundle: Bundle, response_text: str, **kwargs: Any) -> Judgment:
        return asyncio.run(self.evaluate(bundle, response_text, **kwargs))


_REFUSAL = re.compile(r"\b(400|422|500|501)\b")  # how servers refuse a request shape (tasks/judging/failures)


def _refused_tools(result: Any) -> bool:
    """Whether every call of `result` failed on the endpoint refusing tool calls."""
    said = [e.lower() for e in result.errors]
    return result.score is None and bool(said) and all("tool" in e and _REFUSAL.search(e) for e in said)


def _usage(result: Any) -> JudgeUsage:
    u = result.usage
    return JudgeUsage(u.prompt_tokens or 0, u.completion_tokens or 0, u.total_tokens or 0, u.calls or 0)


def _judged(s: Any) -> CriterionJudgment:
    warnings = (*s.warnings, *((s.reason,) if s.reason else ()))
    evidence = tuple(s.evidence or ())
    return CriterionJudgment(s.name, s.value, s.score, s.rationale or "", evidence, s.confidence, warnings)


def _warnings(result: Any) -> tuple[str, ...]:
    """rubrify's constraint_warnings: the judgment's own warnings, then each criterion's, by criterion."""
    each = (f"{s.name}: {w}" for s in result.criteria.values() for w in s.warnings)
    return tuple(dict.fromkeys((*result.warnings, *each)))


def _aggregated(rubric: ir.Rubric, result: Any, genre: str | None) -> AggregatedScore:
    """rubrify's AggregatedScore of rubricflow's verdict: each group scored as rubricflow scores it
    (rubrics/scoring.aggregate with the group as the root), the method rubrify would name."""
    from rubricflow.rubrics.scoring import aggregate

    if result.disqualifiers:  # rubrify's: a raw score of 0 and no group scores
        return AggregatedScore(result.score, 0.0, "disqualified")
    units = {name: s.score for name, s in result.criteria.items() if s.status == "scored"}
    groups = {}
    for g in rubric.groups:
        rooted = rubric.model_copy(update={"scoring": rubric.scoring.model_copy(update={"root": g.id})})
        groups[g.id] = aggregate(rooted, units, genre)
    method = rubric.scoring.method
    raw = None
    if method == "weighted_mean" and rubric.scoring.root is None:
        inner = {x for g in rubric.groups for x in g.children}
        top = [(c.weight, units.get(c.id)) for c in rubric.criteria if c.id not in inner]
        top += [(g.weight, groups[g.id]) for g in rubric.groups if g.id not in inner]
        raw = sum(w * v for w, v in top if v is not None) if result.score is not None else None
    return AggregatedScore(result.score, raw, f"grouped_{method}" if rubric.groups else method, groups)


def _disqualified_by_rationales(rubric: ir.Rubric, result: Any) -> Any:
    """rubrify's pattern disqualifiers are "scanned first against judge rationales, then against the
    response text" (seed 001): one whose pattern matches a rationale rejects the judgment too (its
    id first), as its decision, score and violations say."""
    rationales = "\n".join(s.rationale for s in result.criteria.values() if s.rationale)
    hits = set(_pattern_hits(rubric, rationales)) if rationales else set()
    fired = [d.id for d in rubric.disqualifiers if d.kind == "pattern" and hits & set(d.patterns)]
    if not fired:
        return result
    said = tuple(dict.fromkeys((*fired, *result.disqualifiers)))
    return replace(result, score=0.0, label=rubric.scoring.disqualified_label, passed=False, disqualifiers=said)


def _pattern_hits(rubric: ir.Rubric, text: str) -> dict[str, list[str]]:
    """rubrify's pattern_hits: each rubric pattern's matches in the text, by the engine the warehouse
    uses for it (RE2, or the backtracking engine for a pattern RE2 refuses); patterns without one left out."""
    from rubricflow.rubrics.regex import backtracking, re2_cursor, re2_errors

    sources = {p.id: p.effective_regex() for p in rubric.patterns}
    refused = re2_errors(list(sources.values()))
    hits: dict[str, list[str]] = {}
    for pid, source in sources.items():
        if refused[source]:
            compiled = backtracking(source)
            try:
                found = [m.group(0) for m in compiled.finditer(text, timeout=0.5)] if compiled else []
            except TimeoutError:
                found = []
        else:
            with re2_cursor() as con:
                found = con.execute("SELECT regexp_extract_all($1, $2)", [text, source]).fetchone()[0]
        if found:
            hits[pid] = list(found)
    return hits


__all__ = [
    "AdviceRule",
    "AggregatedScore",
    "Aggregation",
    "AnnotatedExample",
    "CoEvolutionConfig",
    "EvolutionResult",
    "RubricEvolutionConfig",
    "evolve_rubric",
    "evolve_rubric_v3",
    "BinaryScale",
    "CalibrationExample",
    "CharLimitConstraint",
    "CompilationResult",
    "Criterion",
    "CriterionGroup",
    "CriterionJudgment",
    "Definition",
    "Disqualifier",
    "EvidenceSpec",
    "ItemCountConstraint",
    "Judge",
    "JudgeConfig",
    "JudgeUsage",
    "Judgment",
    "NominalScale",
    "NumericScale",
    "OrdinalScale",
    "PatternEntry",
    "PrefixSuffixConstraint",
    "RoleSpec",
    "Rubric",
    "RubricMeta",
    "ScaleAnchor",
    "SurfacePolicy",
    "TokenConstraint",
    "WordCountConstraint",
    "compile_rubric",
    "get_model",
]
