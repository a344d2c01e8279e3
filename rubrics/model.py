"""The typed rubric: pydantic v2 models, frozen, unknown fields rejected.

Every container is a tuple (or a read-only mapping) so that a compiled rubric is deeply
immutable: the content hash that names it in the warehouse can never drift from its content.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    StringConstraints,
    model_validator,
)

from rubricflow.errors import InputError

from .verdict_form import with_the_verdict_asked

Id = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$", max_length=128)]
KebabId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$", max_length=128)]
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")


def _version_text(value: Any) -> Any:
    """A version written as a YAML number (`2.10`, `3`) as the text it was written as (a float
    loses `2.10`'s zero: the YAML loader keeps the text in `yaml_text`), padded to MAJOR.MINOR.PATCH."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    text = getattr(value, "yaml_text", None) or str(value)
    parts = text.split(".")
    return ".".join(parts + ["0"] * (3 - len(parts))) if len(parts) < 3 else text


def _check_semver(value: str) -> str:
    if not _SEMVER.fullmatch(value):  # not match: "$" also matches before a final newline
        raise ValueError(
            f"version {value!r} is not semantic versioning: MAJOR.MINOR.PATCH, numbers without leading "
            "zeros (e.g. 1.0.0 or 2.10.0-rc.1)"
        )
    return value


_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`]+")


def _check_uri(value: str) -> str:
    """RFC 3986: a scheme, a colon, then no spaces or characters a URI cannot hold unescaped."""
    if not _URI.fullmatch(value):
        raise ValueError(f"{value!r} is not a URI (e.g. file:///data/calibration.jsonl or https://host/path)")
    return value


SemVer = Annotated[str, BeforeValidator(_version_text), AfterValidator(_check_semver)]
Scalar = str | int | float | bool | None
Unit = Annotated[float, Field(ge=0.0, le=1.0)]
SCORE_DIGITS = 9  # every score that meets a threshold is rounded to this many decimals (scoring.fixed)


def _on_the_score_grid(value: float) -> float:
    """A threshold at the scores' precision: a Forge 2.2 on 1-5 is (2.2 - 1) / 4 =
    0.30000000000000004, which the score 0.3 of a mean exactly 2.2 failed (seed 002: a minimum)."""
    return round(value, SCORE_DIGITS)


Threshold = Annotated[float, AfterValidator(_on_the_score_grid)]
UnitThreshold = Annotated[float, Field(ge=0.0, le=1.0), AfterValidator(_on_the_score_grid)]


def _a_number(value: object) -> object:
    """A weight is written as a number: `true` was read as 1 and `'3'` as 3 (docs/rubrics.md: a
    weight that is not a number is refused)."""
    if isinstance(value, bool | str):
        raise ValueError(f"a number is required, found {value!r}")
    return value


def _freeze(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


FrozenMap = Annotated[Mapping[str, Scalar], AfterValidator(_freeze), PlainSerializer(dict)]


class Strict(BaseModel):
    """Base: frozen, no unknown fields, so a typo in a rubric file is an error, not a no-op."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # .inf / .nan are typos too


class ScaleError(InputError, ValueError):
    """A judge value outside the scale's domain."""


# --------------------------------------------------------------------------- scales


class BinaryScale(Strict):
    """Two outcomes, judged as 0 or 1; `labels[i]` names value i and `scores[i]` is its unit score."""

    kind: Literal["binary"] = "binary"
    labels: tuple[str, str] = ("fail", "pass")
    scores: tuple[Unit, Unit] = (0.0, 1.0)

    def domain(self) -> list[int]:
        return [0, 1]

    def normalize(self, value: Any) -> int:
        """Accept 0/1, booleans, or a label; return 0 or 1."""
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, (int, float)) and value in (0, 1):
            return int(value)
        if isinstance(value, str):
            low = value.strip().lower()
            for i, label in enumerate(self.labels):
                if low == label.lower():
                    return i
            if low in ("true", "yes", "y"):
                return 1
            if low in ("false", "no", "n"):
                return 0
        raise ScaleError(f"{value!r} is not one of 0, 1, {self.labels[0]!r}, {self.labels[1]!r}")

    def unit(self, value: Any) -> float:
        return self.scores[self.normalize(value)]

    def json_schema(self) -> dict:
        return {"type": "integer", "enum": [0, 1], "description": f"0 = {self.labels[0]}, 1 = {self.labels[1]}"}

    def describe(self) -> str:
        return f"binary: 0 = {self.labels[0]}, 1 = {self.labels[1]}"


class Anchor(Strict):
    value: int
    label: str = ""
    description: str = ""
    examples: tuple[str, ...] = ()


class OrdinalScale(Strict):
    """Ordered integer levels from `min` to `max` (default: the anchors' range); anchors describe levels."""

    kind: Literal["ordinal"] = "ordinal"
    anchors: tuple[Anchor, ...] = Field(min_length=1)
    min: int | None = None
    max: int | None = None

    @model_validator(mode="after")
    def _check(self) -> OrdinalScale:
        values = [a.value for a in self.anchors]
        if len(set(values)) != len(values):
            raise ValueError(f"duplicate anchor values: {sorted(values)}")
        lo, hi = self.low, self.high
        if lo >= hi:
            raise ValueError(f"ordinal scale needs min < max, got min={lo} max={hi}")
        outside = [v for v in values if not lo <= v <= hi]
        if outside:
            raise ValueError(f"anchor values {outside} lie outside [{lo}, {hi}]")
        return self

    @property
    def low(self) -> int:
        return self.min if self.min is not None else min(a.value for a in self.anchors)

    @property
    def high(self) -> int:
        return self.max if self.max is not None else max(a.value for a in self.anchors)

    def domain(self) -> list[int]:
        return list(range(self.low, self.high + 1))

    def normalize(self, value: Any) -> int:
        return self._level(value, self.low, self.high)

    def _level(self, value: Any, low: int, high: int) -> int:
        """`value` as a level of `low`..`high` (the scale's, read once by the caller: each read
        scans the anchors, and a judged answer reads them per criterion)."""
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ScaleError(f"{value!r} is not an integer level")
        try:
            number = float(value)
        except ValueError:
            for anchor in self.anchors:
                if anchor.label and anchor.label.lower() == str(value).strip().lower():
                    return anchor.value
            raise ScaleError(f"{value!r} is not a level of {low}..{high}") from None
        if not number.is_integer() or not low <= number <= high:
            raise ScaleError(f"{value!r} is outside the levels {low}..{high}")
        return int(number)

    def unit(self, value: Any) -> float:
        low, high = self.low, self.high
        return (self._level(value, low, high) - low) / (high - low)

    def json_schema(self) -> dict:
        return {"type": "integer", "minimum": self.low, "maximum": self.high, "enum": self.domain()}

    def describe(self) -> str:
        return f"integer {self.low} to {self.high} (higher is better)"


class Category(Strict):
    value: str = Field(min_length=1)
    description: str = ""
    score: Unit | None = None  # None: a classification with no score (e.g. OpenAI Evals without choice_scores)


class NominalScale(Strict):
    """Unordered categories, each with its own unit score."""

    kind: Literal["nominal"] = "nominal"
    categories: tuple[Category, ...] = Field(min_length=2)

    @model_validator(mode="after")
    def _check(self) -> NominalScale:
        values = [c.value for c in self.categories]
        if len(set(values)) != len(values):
            raise ValueError(f"duplicate categories: {values}")
        return self

    def domain(self) -> list[str]:
        return [c.value for c in self.categories]

    def normalize(self, value: Any) -> str:
        for c in self.categories:
            if isinstance(value, str) and value.strip() == c.value:
                return c.value
        raise ScaleError(f"{value!r} is not one of {self.domain()}")

    def unit(self, value: Any) -> float | None:
        chosen = self.normalize(value)
        return next(c.score for c in self.categories if c.value == chosen)

    def json_schema(self) -> dict:
        return {"type": "string", "enum": self.domain()}

    def describe(self) -> str:
        return "one of " + ", ".join(self.domain())


class NumericScale(Strict):
    """A number in [min, max], optionally on a grid of `step`."""

    kind: Literal["numeric"] = "numeric"
    min: float
    max: float
    step: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _check(self) -> NumericScale:
        if not (math.isfinite(self.min) and math.isfinite(self.max)) or self.min >= self.max:
            raise ValueError(f"numeric scale needs finite min < max, got min={self.min} max={self.max}")
        return self

    def domain(self) -> tuple[float, float]:
        return (self.min, self.max)

    def normalize(self, value: Any) -> float:
        if isinstance(value, bool):
            raise ScaleError(f"{value!r} is not a number")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ScaleError(f"{value!r} is not a number") from None
        if not math.isfinite(number) or not self.min <= number <= self.max:
            raise ScaleError(f"{value!r} is outside [{self.min}, {self.max}]")
        if self.step is not None:
            steps = (number - self.min) / self.step
            if abs(steps - round(steps)) > 1e-9:
                raise ScaleError(f"{value!r} is not on the grid {self.min} + k*{self.step}")
        return number

    def unit(self, value: Any) -> float:
        return (self.normalize(value) - self.min) / (self.max - self.min)

    def json_schema(self) -> dict:
        schema: dict = {"type": "number", "minimum": self.min, "maximum": self.max}
        if self.step is not None:
            schema["multipleOf"] = self.step
        return schema

    def describe(self) -> str:
        step = f" in steps of {self.step:g}" if self.step else ""
        return f"number from {self.min:g} to {self.max:g}{step}"


Scale = Annotated[BinaryScale | OrdinalScale | NominalScale | NumericScale, Field(discriminator="kind")]

# --------------------------------------------------------------------------- criteria and structure


class Evidence(Strict):
    required: bool = False
    exact_quote: bool = True
    min_items: int = Field(default=0, ge=0)
    max_items: int | None = Field(default=None, ge=0)


class ScoredExample(Strict):
    score: int | float | str
    text: str
    explanation: str = ""


CheckKind = Literal[
    "tool_used", "tool_not_used", "tool_sequence", "argument", "step_count", "error_results", "final_message"
]
CHECK_NEEDS: dict[str, tuple[str, ...]] = {  # the fields each kind of check must be given
    "tool_used": ("tool",),
    "tool_not_used": ("tool",),
    "tool_sequence": ("tools",),
    "argument": ("tool", "path"),
    "step_count": (),
    "error_results": (),
    "final_message": (),
}


class TrajectoryCheck(Strict):
    """A deterministic check of a transcript's messages (#51), evaluated in SQL with no judge call
    (warehouse/sql/check_*.sql): a criterion with a check is never sent to the judge; it passes (its
    binary scale's value 1) or fails (0) per transcript, and lands as a judgment like any other."""

    kind: CheckKind
    tool: str | None = None  # tool_used / tool_not_used / argument: the tool's name
    tools: tuple[str, ...] = ()  # tool_sequence: the names, in the order asked
    order: Literal["in_order", "any_order", "exact"] = "in_order"  # tool_sequence
    path: str | None = None  # argument: a JSON path into the call's arguments ($.city)
    equals: Scalar = None  # argument: the value at `path` equals this (in some call to `tool`)
    matches: str | None = (
        None  # argument: the value matches; final_message: the text matches; error_results: a result that matches is an error
    )
    not_matches: str | None = None  # final_message: the text must not match (RE2)
    count: Literal["steps", "tool_calls", "messages"] = (
        "steps"  # step_count: what is counted (steps: assistant messages)
    )
    min: int | None = Field(default=None, ge=0)  # step_count bounds
    max: int | None = Field(default=None, ge=0)  # step_count's upper bound; error_results: errors allowed (0)

    @model_validator(mode="after")
    def _check(self) -> TrajectoryCheck:
        missing = [f for f in CHECK_NEEDS[self.kind] if not getattr(self, f)]
        if missing:
            raise ValueError(f"a {self.kind} check needs {', '.join(missing)}")
        if self.kind == "argument" and self.equals is None and self.matches is None:
            raise ValueError("an argument check needs equals or matches")
        if self.kind == "final_message" and self.matches is None and self.not_matches is None:
            raise ValueError("a final_message check needs matches or not_matches")
        return self


ScopeKind = Literal["transcript", "final", "turn", "step", "tool_call", "segments"]
Reducer = Literal["any", "all", "mean", "min", "last"]


class LongTranscripts(Strict):
    """What the judge reads of a transcript longer than its context (docs/transcripts.md, "Long
    transcripts"): `segment` judges it in segments of whole turns (each repeating `overlap_turns`
    turns of the one before, the messages before the first user turn heading every segment) and
    combines the segment verdicts by the criterion's reducer; `last_turns` judges its last N turns
    only, `tool_calls` its tool calls and results only. A transcript within the context is judged
    whole. Declared, every transcript-scoped judged criterion of the rubric takes `scope: segments`."""

    context_tokens: int = Field(ge=64)  # the judge's context for one transcript, at 4 characters a token
    mode: Literal["segment", "last_turns", "tool_calls"] = "segment"
    overlap_turns: int = Field(default=1, ge=0)
    last_turns: int = Field(default=4, ge=1)


class UnitSelector(Strict):
    """Which units of a transcript a scoped criterion judges: by the message's role (turn), the
    tool's name (tool_call), and the position among the matching units (first, last, or an index,
    negative from the end)."""

    role: Literal["system", "developer", "user", "assistant", "tool"] | None = None
    tool: str | None = None
    position: Literal["first", "last"] | int | None = None


# A weight or a point count beyond this is a typo: two weights of 1e308 overflowed the weighted mean
# to NaN (and a score of 0.5 to 0.0), with no word.
MOST_WEIGHT = 1e12


class Criterion(Strict):
    id: Id
    title: str = ""
    description: str = ""
    scale: Scale = BinaryScale()
    weight: Annotated[float, BeforeValidator(_a_number)] = Field(default=1.0, ge=0, le=MOST_WEIGHT)
    importance: Literal["essential", "important"] = "important"
    pass_threshold: UnitThreshold | None = None
    evidence: Evidence = Evidence()
    genre: tuple[str, ...] = ()  # active only for texts of these genres; empty = always active
    mechanical_rules: tuple[str, ...] = ()
    patterns: tuple[Id, ...] = ()
    examples: tuple[ScoredExample, ...] = ()
    points: float | None = Field(
        default=None, ge=-MOST_WEIGHT, le=MOST_WEIGHT
    )  # signed (HealthBench): negative marks undesirable behaviour
    notes: str = ""
    tags: tuple[str, ...] = ()
    check: TrajectoryCheck | None = None  # decided in SQL over the transcript's messages, not by the judge
    # What of a transcript the judge reads for this criterion (docs/transcripts.md, "Scopes"): the
    # whole transcript, or each matching unit judged once and the unit scores reduced per transcript.
    scope: ScopeKind = "transcript"
    select: UnitSelector | None = None
    reducer: Reducer = "mean"

    @model_validator(mode="after")
    def _check_is_binary(self) -> Criterion:
        if self.check is not None and not isinstance(self.scale, BinaryScale):
            raise ValueError(f"criterion {self.id!r}: a check passes or fails, so its scale is binary")
        if self.check is not None and self.scope != "transcript":
            raise ValueError(f"criterion {self.id!r}: a check reads the whole transcript; it takes no scope")
        if self.select is not None and self.scope in ("transcript", "final", "segments"):
            raise ValueError(f"criterion {self.id!r}: select applies to a turn, step or tool_call scope")
        if self.select is not None and self.select.tool is not None and self.scope != "tool_call":
            raise ValueError(f"criterion {self.id!r}: select.tool applies to the tool_call scope")
        return self

    @property
    def scoped(self) -> bool:
        """Judged per unit (turn, step, tool call, final message) rather than on the whole transcript."""
        return self.scope != "transcript"


Aggregation = Literal["weighted_mean", "weighted_sum", "min", "max", "all", "any", "points"]


class Group(Strict):
    """A node of the criteria tree; `children` name criteria or other groups."""

    id: Id
    title: str = ""
    description: str = ""
    aggregation: Aggregation = "weighted_mean"
    weight: Annotated[float, BeforeValidator(_a_number)] = Field(default=1.0, ge=0, le=MOST_WEIGHT)
    children: tuple[Id, ...] = Field(min_length=1)


class Disqualifier(Strict):
    """`pattern`: a regex hit in the text under test; `criterion`: a criterion at or below
    `threshold` (its floor by default); `judge`: an id the judge may declare."""

    id: Id
    description: str = ""
    kind: Literal["pattern", "criterion", "judge"] = "judge"
    patterns: tuple[Id, ...] = ()
    criterion: Id | None = None
    threshold: UnitThreshold = 0.0

    @model_validator(mode="after")
    def _check(self) -> Disqualifier:
        if self.kind == "pattern" and not self.patterns:
            raise ValueError(f"pattern disqualifier {self.id!r} names no patterns")
        if self.kind == "criterion" and not self.criterion:
            raise ValueError(f"criterion disqualifier {self.id!r} names no criterion")
        return self


class Pattern(Strict):
    """A named regex (RE2 syntax) or word list; `flags` from i, m, s, U."""

    id: Id
    regex: str | None = None
    words: tuple[str, ...] = ()
    flags: str = Field(default="", pattern=r"^[imsU]*$")
    description: str = ""

    @model_validator(mode="after")
    def _check(self) -> Pattern:
        if (self.regex is None) == (not self.words):
            raise ValueError(f"pattern {self.id!r} needs exactly one of regex or words")
        return self

    def effective_regex(self) -> str:
        """The RE2 expression the warehouse runs: flags inlined, word lists as a word-bounded alternation."""
        if self.regex is not None:
            body = self.regex
        else:
            body = "(?:" + "|".join(_bounded(w) for w in self.words) + ")"
        return f"(?{self.flags}){body}" if self.flags else body


def _bounded(word: str) -> str:
    """A word matched whole: `\\b` only on a side that is a word character (`\\bcertainly!\\b` can never
    match "Certainly! I", since no word boundary follows the "!")."""
    left = r"\b" if word[:1].isalnum() or word[:1] == "_" else ""
    right = r"\b" if word[-1:].isalnum() or word[-1:] == "_" else ""
    return left + _re2_escape(word) + right


def _re2_escape(word: str) -> str:
    return "".join("\\" + ch if not (ch.isalnum() or ch in " _") else ch for ch in word)


class Definition(Strict):
    term: str = Field(min_length=1)
    meaning: str


class Verdict(Strict):
    """One verdict of a rubric's verdict space (a ComplianceJudge's Yes / Somewhat / No), with the
    unit score downstream metrics give it (None: a verdict that classifies without a score)."""

    label: str = Field(min_length=1)
    score: Unit | None = None
    description: str = ""


class DecisionRule(Strict):
    """A decision rule (R1..Rn): the condition, and the verdict it gives when it applies."""

    id: Id
    condition: str = Field(min_length=1)
    verdict: str | None = None


class MappingExample(Strict):
    """A rubric-level calibration example (ICL): a request and a response, mapped to a verdict."""

    id: Id
    input: str = ""
    output: str = ""
    verdict: str = Field(min_length=1)
    note: str = ""  # the author's reason, e.g. "meta-prefix neutral; direct fulfillment"


class AdviceRule(Strict):
    when: tuple[Id, ...] = Field(min_length=1)  # pattern ids
    advice: str


class Role(Strict):
    """The judge's role (seed 001's RoleSpec): a structural part of the prompt, not a cosmetic prefix.
    `authority` says how final the judge's word is (absolute: its verdict stands; advisory: a
    recommendation a person reviews; peer: one reviewer among equals); `domain` is its field."""

    persona: str = ""
    authority: Literal["absolute", "advisory", "peer"] | None = None
    domain: str = ""
    obligations: tuple[str, ...] = ()  # what the judge MUST do
    constraints: tuple[str, ...] = ()  # what the judge MUST NOT do


class InputField(Strict):
    name: str
    required: bool = False
    description: str = ""


ConstraintScope = Literal["call", "criterion", "judgment"]


class OutputConstraint(Strict):
    """A rule on one field of the judge's output: a ritual prefix, word/char/token limits, item
    counts, forbidden and required phrases. A `hard` one that fails disqualifies the judgment; a
    `soft` one warns. `scope` (seed 001): `call` checks each judge call's output once (a value
    repeated across the call's criteria once), `criterion` each criterion's own value, `judgment`
    the text's whole answer (every criterion's value joined) once."""

    id: Id
    field: str = "rationale"
    description: str = ""
    prefix: str | None = None
    suffix: str | None = None
    min_words: int | None = Field(default=None, ge=0)
    max_words: int | None = Field(default=None, ge=0)
    min_chars: int | None = Field(default=None, ge=0)  # CharLimitConstraint(mode="min"/"exactly")
    max_chars: int | None = Field(default=None, ge=0)
    min_tokens: int | None = Field(default=None, ge=0)  # TokenConstraint: tokens as verify.count_tokens counts them
    max_tokens: int | None = Field(default=None, ge=0)
    min_items: int | None = Field(default=None, ge=0)
    max_items: int | None = Field(default=None, ge=0)
    separator: str | None = None  # items inside a string field, e.g. ";"
    forbid: tuple[str, ...] = ()  # phrases the field must not contain, any case (a no-apology rule)
    require: tuple[str, ...] = ()  # phrases the field must contain, case as written (TokenConstraint)
    severity: Literal["hard", "soft"] = "soft"
    scope: ConstraintScope = "call"


class OutputContract(Strict):
    format: Literal["json"] = "json"
    constraints: tuple[OutputConstraint, ...] = ()
    template: str = ""  # an example of the expected output shape, shown to the judge
    notes: tuple[str, ...] = ()


class DecisionLabel(Strict):
    label: str
    min: Threshold  # inclusive lower bound on the final score


class Scoring(Strict):
    method: Aggregation = "weighted_mean"  # how the root combines its children
    root: Id | None = None  # a group id; default: all criteria under the method above
    invert: bool = False  # risk scoring: criteria measure risk (top = most hits); the score is 1 - aggregate
    labels: tuple[DecisionLabel, ...] = ()
    pass_threshold: Threshold | None = None  # on the final score
    essential_minimum: UnitThreshold | None = None  # every essential criterion must reach this unit score
    disqualified_label: str = "disqualified"
    formula: str = ""  # the rubric author's own statement of the scoring, shown to the judge


# Seed 001's decision labels, for a rubric that names none and asks for them (surface.default_labels).
DEFAULT_LABELS = (
    ("Publish-ready", 0.9),
    ("Strong draft", 0.75),
    ("Workable draft", 0.6),
    ("Needs major revision", 0.4),
    ("Fundamentally unclear", 0.0),
)


class Surface(Strict):
    """How the rubric is put before the judge (seed 001's SurfacePolicy). The defaults are how
    rubricflow always rendered, so a rubric without this section keeps its prompts and hash."""

    input_codec: Literal["markdown", "xml"] = "markdown"
    """`xml`: the rubric as an `<LLM_JUDGE_SPEC>` document in the system text (rubrics/xml_surface)."""
    enforce_key_order: bool = False
    """Ask for the answer's keys in the schema's order; an answer in another order gets a warning."""
    criterion_focus: Literal["full", "focused"] = "focused"
    """`focused`: each call shows only the criteria it scores; `full`: every active criterion, as context."""
    default_labels: bool = False
    """Without scoring.labels, decide with seed 001's labels (Publish-ready >= 0.9 ... Fundamentally unclear)."""
    confidence: bool = False
    """Ask for a `confidence` (0-1) with each criterion's answer; kept in judgments.confidence."""
    rationale: bool = True
    """False: ask for no rationale or evidence. A call of one criterion whose scale is binary or
    ordinal with one-token levels is then a decision: the judge answers the level alone (one token;
    max_tokens 2, or 1 where the provider holds it to the levels by a grammar) and the score is
    weighed from the top logprobs (rubrics/render.decision_criterion)."""
    enforce_evidence: bool = True
    """False: a criterion's evidence spec (required, min_items) is prompt-only, as in rubrify's engine
    (seed 001): an answer that cites less is still scored. True: it goes unscored ("required evidence missing")."""
    execution_strategy: Literal["per_criterion", "grouped", "holistic"] | None = None
    """How many criteria one call asks about when the user gives no --strategy (seed 001's
    SurfacePolicy.execution_strategy); a --strategy given wins, and the run records which was used."""


class Golden(Strict):
    name: str = Field(min_length=1)
    input: str = ""
    output: str
    context: str = ""
    genre: str | None = None
    expected: Literal["pass", "fail"] | None = None
    expected_label: str | None = None  # the verdict expected (a red-team case's Yes / Somewhat / No)
    expected_scores: FrozenMap = Field(default_factory=lambda: MappingProxyType({}))


class Metadata(Strict):
    id: KebabId
    version: SemVer = "1.0.0"
    title: str = ""
    artifact_type: str = "text"
    tags: tuple[str, ...] = ()
    description: str = ""
    calibration_dataset: Annotated[str, AfterValidator(_check_uri)] | None = None
    provenance: FrozenMap = Field(default_factory=lambda: MappingProxyType({}))


class Rubric(Strict):
    metadata: Metadata
    goal: str = ""
    role: Role = Role()
    inputs: tuple[InputField, ...] = ()
    criteria: tuple[Criterion, ...] = ()
    groups: tuple[Group, ...] = ()
    disqualifiers: tuple[Disqualifier, ...] = ()
    patterns: tuple[Pattern, ...] = ()
    definitions: tuple[Definition, ...] = ()
    advice: tuple[AdviceRule, ...] = ()
    instructions: tuple[str, ...] = ()
    decision_rules: tuple[str | DecisionRule, ...] = ()
    verdicts: tuple[Verdict, ...] = ()  # the verdict space, when the rubric states one
    mapping_examples: tuple[MappingExample, ...] = ()
    validation: tuple[str, ...] = ()  # critical constraints restated ("triple validation")
    output: OutputContract = OutputContract()
    scoring: Scoring = Scoring()
    goldens: tuple[Golden, ...] = ()
    surface: Surface = Surface()
    long_transcripts: LongTranscripts | None = None

    @model_validator(mode="before")
    @classmethod
    def _judged_by_its_verdict(cls, data: Any) -> Any:
        """Decision rules and a scored verdict space: the verdict asked (rubrics/verdict_form.py),
        however the rubric is made, so a rubric built in Python and its saved file are one."""
        return with_the_verdict_asked(data)

    @model_validator(mode="before")
    @classmethod
    def _segments_when_declared(cls, data: Any) -> Any:
        """With `long_transcripts` declared, the transcript-scoped judged criteria take `scope:
        segments` (judged whole, or in segments past the context); without it none may."""
        if not isinstance(data, dict) or not isinstance(data.get("criteria"), list | tuple):
            return data
        declared = data.get("long_transcripts") is not None
        criteria = []
        for c in data["criteria"]:
            if (
                isinstance(c, dict)
                and declared
                and c.get("check") is None
                and c.get("scope", "transcript") == "transcript"
            ):
                c = {**c, "scope": "segments"}
            elif isinstance(c, dict) and not declared and c.get("scope") == "segments":
                raise ValueError(f"criterion {c.get('id')!r}: scope segments needs the rubric's long_transcripts")
            criteria.append(c)
        return {**data, "criteria": criteria}

    def decision_labels(self) -> tuple[DecisionLabel, ...]:
        """The scoring's labels, or seed 001's defaults where it gives none and the surface asks for them."""
        if self.scoring.labels or not self.surface.default_labels:
            return self.scoring.labels
        return tuple(DecisionLabel(label=label, min=low) for label, low in DEFAULT_LABELS)

    def criterion(self, criterion_id: str) -> Criterion:
        for c in self.criteria:
            if c.id == criterion_id:
                return c
        raise KeyError(criterion_id)

    def pattern(self, pattern_id: str) -> Pattern:
        for p in self.patterns:
            if p.id == pattern_id:
                return p
        raise KeyError(pattern_id)

    def active_criteria(self, genre: str | None = None) -> tuple[Criterion, ...]:
        """Criteria that apply to a text of this genre (genre-less criteria always apply)."""
        return tuple(c for c in self.criteria if not c.genre or (genre is not None and genre in c.genre))
