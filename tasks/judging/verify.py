"""Read the judge's answer and check it against the rubric: scale domains, evidence quotes really
in the text, output constraints. A value outside its scale is flagged, never clamped; anything
that cannot be scored is UNSCORED with a reason, never a 0."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from rubricflow.errors import RubricflowError
from rubricflow.rubrics.constraints import check_constraint, count_tokens, judgment_problems
from rubricflow.rubrics.decision_logic import decide
from rubricflow.rubrics.model import Criterion, Rubric, ScaleError
from rubricflow.rubrics.render import CRITERION_FIELDS, CallUnit, output_schema


class AnswerError(RubricflowError):
    """The answer as a whole is unusable (not JSON, wrong shape)."""

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(message)


@dataclass
class CriterionResult:
    criterion_id: str
    value: Any = None
    unit_score: float | None = None
    rationale: str | None = None
    evidence: list[str] = field(default_factory=list)
    evidence_verified: bool | None = None
    warnings: list[str] = field(default_factory=list)
    status: str = "unscored"
    reason: str | None = None
    weighted: Any = None  # logprobs.Weighted, when the endpoint returned logprobs at the value
    confidence: float | None = None  # the judge's own, 0-1, when the rubric's surface asks for it
    violations: list[str] = field(default_factory=list)  # hard output constraints broken: they disqualify
    overruled: str | None = None  # the decision rules replaced the value the judge wrote (what it wrote, which rule)


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def parse_json_answer(content: str | None) -> dict:
    """Tolerant: code fences, prose around the object, trailing commas."""
    if content is None or not content.strip():
        raise AnswerError("parse", "empty answer")
    fenced = [m.group(1) for m in _FENCE.finditer(content)] if "```" in content else []  # the search: ~4% of a call
    candidates = [*fenced, content]
    for text in candidates:  # the outermost object first, as written, then without trailing commas
        obj = _object_at_first_brace(text)
        if obj is None:  # commas removed only for a text that needs it (each answer's search was ~1% of a reward)
            obj = _object_at_first_brace(_TRAILING_COMMA.sub(r"\1", text))
        if obj is not None:
            return obj
    raise AnswerError("parse", f"no JSON object in the answer: {content[:120]!r}")


_DECODER = json.JSONDecoder()  # stateless between calls: one for every answer


def _object_at_first_brace(text: str) -> dict | None:
    """The JSON object that starts at the text's first `{`, if one does."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        obj, _ = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


QUOTE_MARKS = "\"'\u201c\u201d\u2018\u2019"


def _normalise_space(text: str) -> str:
    """Seed 001's "normalized containment", as rubrify normalises both sides: whitespace collapsed,
    lowercased (a judge that quotes "the council met" of "The council met" quoted it)."""
    return " ".join(text.split()).lower()


def _normalise_quote(quote: str) -> str:
    """A quote normalised as the text is, the quote marks a judge wraps it in stripped first."""
    return _normalise_space(quote.strip().strip(QUOTE_MARKS))


@functools.lru_cache(maxsize=64)
def _normalised_text(text: str) -> str:
    """A judged text whitespace-normalised, once for its answer's criteria (each criterion's quotes
    normalised the whole text again: ~2% of a reward's server CPU, #55)."""
    return _normalise_space(text)


CITED = re.compile(r"^\s*\[(M\d+)\]:?\s*(.*)$", re.S)  # evidence citing a transcript's message: "[M12] the words"
MESSAGE_HEAD = re.compile(r"^\[(M\d+)\] ", re.M)  # a message's first line in a transcript's rendering


def quotes_in_text(quotes: list[str], text: str) -> bool | None:
    """Whether every quote occurs in the text (whitespace- and case-insensitive, the quote marks
    around it left out: seed 001's "exact containment, then normalized containment"); an empty quote proves
    nothing and fails; no quotes at all is None (nothing was claimed). In a transcript's rendering
    (tasks/loaders/transcripts.render_message) a quote citing a message, `[M12] words`, must occur
    in that message: the right words in another message are a false quote too."""
    if not quotes:
        return None
    haystack = _normalised_text(text)
    messages = transcript_messages(text) if any(CITED.match(q) for q in quotes) else {}
    return all(_quote_found(q, haystack, messages) for q in quotes)


def _quote_found(quote: str, haystack: str, messages: dict[str, str]) -> bool:
    cited = CITED.match(quote) if messages else None
    if cited:
        words = _normalise_quote(cited.group(2))
        return bool(words) and words in messages.get(cited.group(1), "")
    words = _normalise_quote(quote)
    return bool(words) and words in haystack


def transcript_messages(text: str) -> dict[str, str]:
    """A transcript rendering's messages by id (M0, M1...), each its block whitespace-normalised;
    empty for a text that is no transcript."""
    heads = list(MESSAGE_HEAD.finditer(text))
    if not heads:
        return {}
    ends = [h.start() for h in heads[1:]] + [len(text)]
    return {h.group(1): _normalise_space(text[h.end() : end]) for h, end in zip(heads, ends, strict=True)}


def key_order_problems(answer: Any, schema: dict, where: str = "answer") -> list[str]:
    """Where an answer's keys leave the schema's order (surface.enforce_key_order): one warning each."""
    if not isinstance(answer, dict):
        return []
    expected = [k for k in schema.get("properties", {}) if k in answer]
    given = [k for k in answer if k in expected]
    problems = [f"{where}: keys {given} not in the schema's order {expected}"] if given != expected else []
    for key in given:
        sub = schema["properties"][key]
        if sub.get("type") == "object":
            problems += key_order_problems(answer[key], sub, f"{where}.{key}")
    return problems


def _confidence(given: Any, asked: bool, warnings: list[str]) -> float | None:
    """The judge's confidence when it is a number in [0, 1]; asked for and not so, a warning."""
    if isinstance(given, (int, float)) and not isinstance(given, bool) and 0 <= given <= 1:
        return float(given)
    if asked:
        warnings.append(f"confidence missing or outside 0-1: {given!r}")
    return None


def verify_answer(
    rubric: Rubric, unit: CallUnit, answer: dict, text: str
) -> tuple[list[CriterionResult], list[str], list[str]]:
    """Return (per-criterion results, declared disqualifier ids, cell-level warnings)."""
    scores = answer.get("criteria")
    if not isinstance(scores, dict):
        raise AnswerError("parse", f"answer has no `criteria` object (keys: {sorted(answer)[:8]})")
    results = [_verify_criterion(rubric, rubric.criterion(cid), scores.get(cid), text) for cid in unit.criteria]
    cell_warnings: list[str] = []
    for c in rubric.output.constraints:  # fields of the answer as a whole: once per call
        if c.field in CRITERION_FIELDS or c.field == "disqualifiers":
            continue
        problem = check_constraint(c, answer.get(c.field))
        if problem and c.severity == "hard":
            for r in results:
                r.violations.append(c.id)
                r.warnings.append(f"{c.id} (hard) on {c.field}: {problem}")
        elif problem:
            cell_warnings.append(f"{c.id}: {problem}")
    _check_criterion_fields(rubric, results)
    judge_ids = {d.id for d in rubric.disqualifiers if d.kind == "judge"}
    declared = answer.get("disqualifiers") or []
    if not isinstance(declared, list):
        declared = [declared]
    unknown = [str(d) for d in declared if str(d) not in judge_ids]
    if unknown:
        cell_warnings.append(f"unknown disqualifiers declared: {unknown}")
    extra = sorted(set(scores) - set(unit.criteria))
    if extra:
        cell_warnings.append(f"answer scores criteria not asked for: {extra}")
    if rubric.surface.enforce_key_order:
        cell_warnings.extend(key_order_problems(answer, output_schema(rubric, unit)))
    follow_the_decision_rules(rubric, results)
    return results, [str(d) for d in declared if str(d) in judge_ids], cell_warnings


def follow_the_decision_rules(rubric: Rubric, results: list[CriterionResult]) -> None:
    """The verdict the rubric's decision rules give from the answer's own criterion values (seed
    000: R2-R4) replaces the verdict the judge wrote, here where every answer is read, so the API,
    the warehouse and every figure read from it hold the same verdict. The judge's own word stays in
    the raw answer (completions.raw_response) and in the note. Rules this cannot read, or criteria
    another call scored, leave the judge's verdict as it is."""
    decided = decide(rubric, {r.criterion_id: r.value for r in results if r.status == "scored"})
    if decided is None:
        return
    criterion_id, decision = decided
    result = next((r for r in results if r.criterion_id == criterion_id), None)
    if result is None or (result.status == "scored" and str(result.value) == decision.verdict):
        return
    result.overruled = (  # what the judge wrote: a verdict, one out of the scale, or None (it wrote none)
        f"{criterion_id}: the judge said {result.value!r}; {decision.rule} gives {decision.verdict!r} "
        "from its criterion scores"
    )
    result.warnings.append(result.overruled)
    result.value = decision.verdict
    result.unit_score = rubric.criterion(criterion_id).scale.unit(decision.verdict)
    result.status, result.reason = "scored", None


def _verify_criterion(rubric: Rubric, c: Criterion, entry: Any, text: str) -> CriterionResult:
    result = CriterionResult(c.id)
    if entry is None:
        result.reason = "missing from the answer"
        return result
    if not isinstance(entry, dict):  # a bare value instead of {value, rationale, evidence}
        entry = {"value": entry}
    result.value = entry.get("value")
    result.confidence = _confidence(entry.get("confidence"), rubric.surface.confidence, result.warnings)
    rationale = entry.get("rationale")
    result.rationale = rationale if isinstance(rationale, str) else None
    evidence = entry.get("evidence") or []
    result.evidence = [str(e) for e in evidence] if isinstance(evidence, list) else [str(evidence)]
    try:
        unit = c.scale.unit(result.value)
    except ScaleError as exc:
        result.reason = f"out of scale: {exc}"
        return result
    if unit is None:
        result.reason = "category has no score"
        return result
    if result.evidence:
        result.evidence_verified = quotes_in_text(result.evidence, text) if c.evidence.exact_quote else None
        if result.evidence_verified is False:
            result.warnings.append("evidence quote not found in the text")
    if c.evidence.required and rubric.surface.enforce_evidence and len(result.evidence) < max(1, c.evidence.min_items):
        result.reason = "required evidence missing"
        return result
    result.unit_score = unit
    result.status = "scored"
    return result


def _field_value(result: CriterionResult, name: str) -> Any:
    return result.rationale if name == "rationale" else result.evidence


def _check_criterion_fields(rubric: Rubric, results: list[CriterionResult]) -> None:
    """Constraints on a criterion's rationale or evidence, scoped `criterion` (every scored
    criterion's value) or `call` (each distinct value of the call once: a rationale the call's
    criteria share is one output). A hard one that fails is a violation, which disqualifies."""
    for c in rubric.output.constraints:
        if c.field not in CRITERION_FIELDS or c.scope == "judgment":
            continue
        seen: set[str] = set()
        for r in results:
            if r.status != "scored":
                continue
            value = _field_value(r, c.field)
            if c.scope == "call":
                if repr(value) in seen:
                    continue
                seen.add(repr(value))
            problem = check_constraint(c, value)
            if problem and c.severity == "hard":
                r.violations.append(c.id)
                r.warnings.append(f"{c.id} (hard) on {c.field}: {problem}")
            elif problem:
                r.warnings.append(f"{c.id}: {problem}")


def hard_violations(rubric: Rubric, results: list[CriterionResult], problems: list | None = None) -> set[str]:
    """The ids of the hard constraints one text's answer broke, every scope: they disqualify it.
    `problems`: judgment_problems(rubric, results), when the caller has them already."""
    found = {v for r in results for v in r.violations}
    problems = judgment_problems(rubric, results) if problems is None else problems
    return found | {c.id for c, _ in problems if c.severity == "hard"}


__all__ = ["check_constraint", "count_tokens", "judgment_problems"]  # their home is rubrics/constraints.py
