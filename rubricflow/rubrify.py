"""rubrify's public names on rubricflow (seed 001), so rubrify code ports by changing its import line.

`from rubrify import Rubric, compile_rubric, Judge, JudgeConfig, ...` becomes
`from rubricflow.rubrify import ...` (and `rubrify.ir.constraints`, `rubrify.ir.roles`,
`harn_ai.models` likewise). Each name builds rubricflow's own object: a `Rubric` here is a
`rubricflow.rubrics.model.Rubric`, `compile_rubric` returns rubricflow's bundle, and `Judge.evaluate`
is rubricflow's client (retries, rate limits, secret scrubbing), awaited as rubrify awaits it.
docs/rubrify.md maps every seed name to rubricflow's.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from rubricflow.errors import InputError
from rubricflow.rubrics import model as ir
from rubricflow.rubrics.compiler import Bundle, RubricCompileError, compile_for_scoring
from rubricflow.rubrify_evolve import (  # rubrify's evolution names
    AnnotatedExample,
    CoEvolutionConfig,
    EvolutionResult,
    RubricEvolutionConfig,
    evolve_rubric,
    evolve_rubric_v3,
    judge_options,
)

BinaryScale = ir.BinaryScale
NominalScale = ir.NominalScale
Disqualifier = ir.Disqualifier
Definition = ir.Definition
AdviceRule = ir.AdviceRule
PatternEntry = ir.Pattern
RoleSpec = ir.Role
CriterionGroup = ir.Group


def ScaleAnchor(value: int, label: str = "", description: str = "") -> ir.Anchor:  # noqa: N802 (rubrify's name)
    return ir.Anchor(value=value, label=label, description=description)


def OrdinalScale(anchors: Sequence[ir.Anchor], min: int | None = None, max: int | None = None) -> ir.OrdinalScale:  # noqa: N802
    return ir.OrdinalScale(anchors=tuple(anchors), min=min, max=max)


def NumericScale(  # noqa: N802
    minimum: float, maximum: float, step: float | None = None, anchors: Sequence[ir.Anchor] = ()
) -> ir.OrdinalScale | ir.NumericScale:
    """rubrify's anchored numeric scale: integer levels in steps of 1 are rubricflow's ordinal scale
    (anchors kept, every level judged); any other grid is a numeric scale."""
    if anchors and step == 1 and float(minimum).is_integer() and float(maximum).is_integer():
        return ir.OrdinalScale(anchors=tuple(anchors), min=int(minimum), max=int(maximum))
    return ir.NumericScale(min=minimum, max=maximum, step=step)


def Criterion(id: str, scale: Any = None, **fields: Any) -> ir.Criterion:  # noqa: N802, A002
    return ir.Criterion(id=id, **({"scale": scale} if scale is not None else {}), **fields)


def RubricMeta(name: str, version: str = "1.0.0", **fields: Any) -> ir.Metadata:  # noqa: N802
    """rubrify's `RubricMeta(name=, version=)`: the id is the name in kebab case, the title the name,
    and a two-part version ("1.0") gains its patch number."""
    from rubricflow.rubrics.importers.common import kebab, semver

    return ir.Metadata(id=kebab(name), title=name, version=semver(version), **fields)


def Rubric(meta: ir.Metadata, **fields: Any) -> ir.Rubric:  # noqa: N802
    """rubrify's `Rubric(meta=, goal=, criteria=[...])`; a rubric without labels decides with seed
    001's (Publish-ready ... Fundamentally unclear), as rubrify's judge loop does."""
    surface = fields.pop("surface", ir.Surface(default_labels=True))
    return ir.Rubric(metadata=meta, surface=surface, **fields)


def SurfacePolicy(
    execution_strategy: Literal["per_criterion", "grouped", "holistic"] | None = None, **fields: Any
) -> ir.Surface:  # noqa: N802
    return ir.Surface(execution_strategy=execution_strategy, default_labels=True, **fields)


def WordCountConstraint(  # noqa: N802
    id: str,  # noqa: A002
    count: int,
    mode: Literal["min", "max"] = "max",
    target_field: str = "rationale",
    description: str = "",
    enforcement: Literal["hard", "soft"] = "soft",
    scope: ir.ConstraintScope = "call",
) -> ir.OutputConstraint:
    limit: dict[str, Any] = {"min_words": count} if mode == "min" else {"max_words": count}
    return ir.OutputConstraint(
        id=id, field=target_field, description=description, severity=enforcement, scope=scope, **limit
    )


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
    compiles it; `.ok` is False with `.issues` where it does not compile (nothing raised, as rubrify)."""
    if policy is not None:
        rubric = rubric.model_copy(update={"surface": policy})
    if output_constraints:
        joined = (*rubric.output.constraints, *output_constraints)
        rubric = rubric.model_copy(update={"output": rubric.output.model_copy(update={"constraints": joined})})
    try:
        return CompilationResult(compile_for_scoring(ir.Rubric.model_validate(rubric.model_dump()), "<rubrify rubric>"))
    except RubricCompileError as exc:
        return CompilationResult(None, [str(exc)])


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
    log); `parallel=False` sends one call at a time; `use_tool=True` asks for the answer as a tool call."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    model: Model
    api_key: str | None = None
    temperature: float = 0.0
    max_tokens: int = 2048
    parallel: bool = False
    use_tool: bool = False

    def options(self) -> dict[str, Any]:
        """The rf.Judge options this config means."""
        return judge_options(self.model, self.temperature, self.max_tokens, self.parallel, self.use_tool)


@dataclass(frozen=True)
class CriterionJudgment:
    criterion_id: str
    value: Any
    unit_score: float | None
    rationale: str = ""
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class Aggregation:
    score: float | None  # 0..1

    @property
    def normalized_score(self) -> float | None:
        """rubrify's 0-100 score."""
        return None if self.score is None else round(100 * self.score, 6)


@dataclass(frozen=True)
class Judgment:
    aggregation: Aggregation
    decision: str | None
    criterion_judgments: list[CriterionJudgment]
    violations: tuple[str, ...]
    result: Any  # rubricflow's Result, with usage, cost and errors


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
        self.total_usage: dict[str, int] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}

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
        done = (lambda s: on_criterion_done(s.name, _judged(bundle, s))) if on_criterion_done else None
        result = await self.engine.aevaluate(
            bundle, response_text, context_text, genre, on_criterion_start=on_criterion_start, on_criterion_done=done
        )
        self.evaluation_count += 1
        for name, n in zip(
            self.total_usage,
            (result.usage.calls, result.usage.prompt_tokens, result.usage.completion_tokens),
            strict=True,
        ):
            self.total_usage[name] += n or 0
        return Judgment(
            aggregation=Aggregation(result.score),
            decision=result.label,
            criterion_judgments=[_judged(bundle, s) for s in result.criteria.values()],
            violations=result.disqualifiers,
            result=result,
        )

    def evaluate_sync(self, bundle: Bundle, response_text: str, **kwargs: Any) -> Judgment:
        return asyncio.run(self.evaluate(bundle, response_text, **kwargs))


def _judged(bundle: Bundle, s: Any) -> CriterionJudgment:
    return CriterionJudgment(s.name, s.value, s.score, s.rationale or "", tuple(s.evidence or ()))


__all__ = [
    "AdviceRule",
    "Aggregation",
    "AnnotatedExample",
    "CoEvolutionConfig",
    "EvolutionResult",
    "RubricEvolutionConfig",
    "evolve_rubric",
    "evolve_rubric_v3",
    "BinaryScale",
    "CompilationResult",
    "Criterion",
    "CriterionGroup",
    "CriterionJudgment",
    "Definition",
    "Disqualifier",
    "Judge",
    "JudgeConfig",
    "Judgment",
    "NominalScale",
    "NumericScale",
    "OrdinalScale",
    "PatternEntry",
    "RoleSpec",
    "Rubric",
    "RubricMeta",
    "ScaleAnchor",
    "SurfacePolicy",
    "WordCountConstraint",
    "compile_rubric",
    "get_model",
]
