"""The offline judge: answers any rubricflow judge request WITHOUT a model.

It is a deterministic stand-in for tests, benchmarks and the demo, not an evaluator: it reads the
rendered prompt (criteria, their patterns, the fenced text) and the answer schema, and scores each
criterion from pattern hits and simple text statistics. Patterns the rubric ties to advice or to
a pattern disqualifier count against a criterion; other patterns count for it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from collections.abc import Callable
from typing import Any

import regex

from rubricflow.rubrics.regex import BACKTRACKING_TIMEOUT_S, backtracking, may_match, required_literals
from rubricflow.rubrics.render import DECISION_RULE, REASK_MARK, unarranged
from rubricflow.tasks.loaders.candidates import split_candidates
from rubricflow.tasks.loaders.pairs import split_pair
from rubricflow.tasks.standins import offline_kinds

_SECTION = re.compile(r"^## (.+)$", re.M)
_CRITERION = re.compile(r"^### ([^\s:]+)", re.M)
_PATTERN_LINE = re.compile(r"^- ([\w.:-]+): `(.*)`(?: — .*)?$")
_FENCE = re.compile(r"<<<BEGIN (TEXT|CONTEXT|INPUT) ([0-9a-f]+)>>>\n(.*?)\n<<<END \1 \2>>>", re.S)
_NUMBER = re.compile(r"\b\d[\d,.]*\b")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
MARK = "offline stand-in judge"


def _sections(prompt: str) -> dict[str, str]:
    parts = _SECTION.split(prompt)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


class PromptReading:
    """What the offline judge understands of one rendered system prompt."""

    def __init__(self, system: str):
        sections = _sections(system)
        self.patterns: dict[str, regex.Pattern] = {}
        self.literals: dict[str, frozenset[str] | None] = {}  # each pattern's prefilter (rubrics/regex.py)
        for line in sections.get(
            "Patterns (regular expressions, RE2 syntax, matched against the text)", ""
        ).splitlines():
            m = _PATTERN_LINE.match(line.strip())
            if m and (compiled := backtracking(m.group(2))):
                self.patterns[m.group(1)] = compiled
                self.literals[m.group(1)] = required_literals(m.group(2))
        flagged = sections.get("Advice rules", "") + sections.get("Disqualifiers", "")
        self.bad = {pid for pid in self.patterns if re.search(rf"\b{re.escape(pid)}\b", flagged)}
        self.criterion_patterns: dict[str, list[str]] = {}
        criteria = sections.get("Criteria", "")
        blocks = _CRITERION.split(criteria)
        for i in range(1, len(blocks) - 1, 2):
            m = re.search(r"^- Patterns to check: (.+)$", blocks[i + 1], re.M)
            self.criterion_patterns[blocks[i]] = [p.strip() for p in m.group(1).split(",")] if m else []
        self.because = "'BECAUSE:'" in system


def _quality(reading: PromptReading, criterion: str, text: str, context: str) -> tuple[float, list[str]]:
    """A number in [0, 1] and the matched snippets used as evidence."""
    words = len(text.split())
    q = 0.75 if words >= 8 else 0.35
    evidence: list[str] = []
    lowered = text.lower()
    for pid in reading.criterion_patterns.get(criterion, []):
        pattern = reading.patterns.get(pid)
        if pattern is None:
            continue
        hits = _hits(pattern, text) if may_match(reading.literals[pid], text, lowered) else []
        evidence += hits[:2]
        if pid in reading.bad:
            q -= 0.3 * len(hits)
        else:
            q += 0.25 if hits else -0.4
    if context:
        novel = [n for n in _NUMBER.findall(text) if n.strip(".,") not in context]
        q -= 0.35 * len(novel)
    return max(0.0, min(1.0, q)), evidence


def _hits(pattern: regex.Pattern, text: str) -> list[str]:
    """The pattern's non-blank matches in `text`; none past the backtracking time limit."""
    try:
        return [m.group(0) for m in pattern.finditer(text, timeout=BACKTRACKING_TIMEOUT_S) if m.group(0).strip()]
    except TimeoutError:
        return []


def _value(schema: dict, q: float) -> Any:
    if "enum" in schema and schema.get("type") == "string":
        options = schema["enum"]
        return options[0] if q >= 0.5 else options[-1]
    if schema.get("enum") == [0, 1]:
        return 1 if q >= 0.5 else 0
    low, high = schema.get("minimum", 0), schema.get("maximum", 1)
    if schema.get("type") == "integer":
        return int(round(low + q * (high - low)))
    value = low + q * (high - low)
    step = schema.get("multipleOf")
    if step:
        value = low + round((value - low) / step) * step
    return round(value, 6)


@functools.lru_cache(maxsize=256)
def _reading(system: str) -> PromptReading:
    """A system prompt's reading, made once: a run sends the same rubric's prompt with every text, and
    reading it again was ~20% of each call (a model server keeps the prefix's KV cache alike)."""
    return PromptReading(system)


def judge(
    system: str, user: str, schema: dict, temperature: float = 0.0, seed: int | None = None, persona: str = ""
) -> dict:
    """The answer object for one request. At temperature > 0 each quality estimate is jittered,
    reproducibly for the same (request, seed), so repeat sampling has something to measure. A
    `persona` (the model name asked for) is a judge of its own: its estimates move by up to 0.25,
    the same way for the same text and criterion, so a panel of personas agrees only in part."""
    reading = _reading(system)
    blocks = {m.group(1): m.group(3) for m in _FENCE.finditer(user)}
    text, context = blocks.get("TEXT", ""), blocks.get("CONTEXT", "")
    props = schema.get("properties", {})
    answer: dict[str, Any] = {}
    criteria_schema = props.get("criteria", {}).get("properties", {})
    scores = {}
    pair, candidates = split_pair(text), split_candidates(text)
    qualities: list[float] = []  # the candidates' quality estimates, made once for every criterion that asks

    def candidate_qualities() -> list[float]:
        if not qualities:
            qualities.extend(_quality(reading, "response-1", c, context)[0] for c in candidates or ())
        return qualities

    for cid, cschema in criteria_schema.items():
        if pair and {"a", "b", "tie"} <= set(cschema["properties"]["value"].get("enum", ())):
            scores[cid] = _verdict(reading, cid, pair, context, user, persona)
            continue
        if candidates and (best := _best_of(cid, cschema, candidates, candidate_qualities)):
            scores[cid] = best
            continue
        q, evidence = _quality(reading, cid, text, context)
        if persona:
            q = max(0.0, min(1.0, q + 0.25 * _jitter(user, cid, f"persona:{persona}")))
        if temperature > 0:
            q = max(0.0, min(1.0, q + temperature * 0.3 * _jitter(user, cid, seed)))
        ev_schema = cschema["properties"]["evidence"]
        if not evidence:  # a judge quotes something: the text's first sentence
            first = _SENTENCE.search(text)
            evidence = [first.group(0).strip()] if first else [text[:40]]
        evidence = evidence[: ev_schema.get("maxItems", 3)]
        prefix = "BECAUSE: " if reading.because else ""
        scores[cid] = {
            "value": _value(cschema["properties"]["value"], q),
            "rationale": f"{prefix}{MARK}: quality estimate {q:.2f} from {len(text.split())} words and pattern hits.",
            "evidence": evidence,
        }
        if "confidence" in cschema["properties"]:  # surface.confidence: surer the further from the middle
            scores[cid]["confidence"] = round(0.5 + abs(q - 0.5), 2)
    if criteria_schema:
        answer["criteria"] = scores
    if "verdict" in props:
        answer["verdict"] = "pass" if _quality(reading, "", text, context)[0] >= 0.5 else "fail"
        answer["rationale"] = f"{MARK}."
    answer["disqualifiers"] = []
    for field, fschema in props.items():
        if field not in answer and fschema.get("type") == "string":
            answer[field] = f"{MARK}."
    return answer


POSITION_MARGIN = 0.08  # quality differences below this are near-ties: the offline judge takes the first response


def _verdict(reading: PromptReading, cid: str, pair: tuple[str, str], context: str, user: str, persona: str) -> dict:
    """A pairwise verdict: the response of higher quality estimate, `a` or `b`. On a near-tie it
    picks the first one shown, as LLM judges tend to: swapping the order exposes it."""
    first, second = (_quality(reading, cid, side, context)[0] for side in pair)
    if persona:
        first += 0.25 * _jitter(pair[0], cid, f"persona:{persona}")
        second += 0.25 * _jitter(pair[1], cid, f"persona:{persona}")
    value = "b" if second - first >= POSITION_MARGIN else "a"
    return {
        "value": value,
        "rationale": f"{MARK}: quality estimates {first:.2f} (A) and {second:.2f} (B).",
        "evidence": [pair[0].split("\n")[0][:80] or "[Response A]"],
    }


_CANDIDATE = re.compile(r"^response-(\d+)$")


def _best_of(cid: str, cschema: dict, candidates: list[str], estimates: Callable[[], list[float]]) -> dict | None:
    """A best-of-n answer (rubrics/best_of.py): `response-i` scores candidate i alone; `winner`, a
    choice of the numbers 1..n, names the candidate of highest quality (the first on a tie). The
    estimates are made once per request (n criteria each asking n estimates cost n^2)."""
    value_schema = cschema["properties"]["value"]
    m = _CANDIDATE.match(cid)
    if m and int(m.group(1)) <= len(candidates):
        q = estimates()[int(m.group(1)) - 1]
        return {"value": _value(value_schema, q), "rationale": f"{MARK}: quality estimate {q:.2f}.", "evidence": []}
    if value_schema.get("enum") == [str(i) for i in range(1, len(candidates) + 1)]:
        qualities = estimates()
        best = max(range(len(candidates)), key=lambda i: (qualities[i], -i))
        said = ", ".join(f"{q:.2f}" for q in qualities)
        return {"value": str(best + 1), "rationale": f"{MARK}: quality estimates {said}.", "evidence": []}
    return None


def _jitter(user: str, criterion: str, seed: int | str | None) -> float:
    """A reproducible number in [-1, 1) for one text, criterion and seed."""
    digest = hashlib.sha256(f"{seed}|{criterion}|{user}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**63 - 1


# Verdicts by tool call (tasks/judging/verdict_tools): judged as one pass/fail criterion, then called.
VERDICT_TOOLS = ("set_waza_grade_pass", "set_waza_grade_fail")
VERDICT_SCHEMA = {
    "type": "object",
    "properties": {
        "criteria": {
            "type": "object",
            "properties": {
                "verdict": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "integer", "enum": [0, 1]},
                        "rationale": {"type": "string"},
                        "evidence": {"type": "array", "items": {"type": "string"}},
                    },
                }
            },
        }
    },
}


def request_schema(body: dict) -> tuple[dict, str]:
    """The answer schema and how it was asked for: json_schema, tools, or text (schema in the prompt)."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["schema"], "json_schema"
    if fmt.get("type") == "json_object" and isinstance(fmt.get("schema"), dict):
        return fmt["schema"], "json_object"
    names = [tool["function"]["name"] for tool in body.get("tools") or []]
    if set(names) == set(VERDICT_TOOLS):  # waza: the verdict is which tool is called
        return VERDICT_SCHEMA, "verdict_tools"
    for tool in body.get("tools") or []:
        return tool["function"]["parameters"], "tools"
    messages = first_turn(body)
    system = next((m["content"] for m in messages if m.get("role") == "system"), None)
    if system is None:  # the rubric came in the user turn
        system = next((m["content"] for m in messages if m.get("role") == "user"), "")
    m = re.search(r"JSON Schema of the answer:\n(\{[^\n]*\})", system)
    return (json.loads(m.group(1)) if m else {}), "text"


_DECISION = re.compile(re.escape(DECISION_RULE.split("{id}")[0]) + r"([^`]+)`: one of ([-\d, ]+);")


def decision_asked(system: str) -> tuple[str, dict] | None:
    """A decision call's criterion and an answer schema for it (the rule rubrics/render writes in
    the system text: the level alone, no schema sent); None for any other call."""
    m = _DECISION.search(system or "")
    if not m:
        return None
    levels = [int(v) for v in m.group(2).split(", ")]
    value = {"type": "integer", "enum": levels, "minimum": levels[0], "maximum": levels[-1]}
    entry = {"properties": {"value": value, "evidence": {"type": "array", "maxItems": 0}}}
    return m.group(1), {"properties": {"criteria": {"properties": {m.group(1): entry}}}}


def first_turn(body: dict) -> list[dict]:
    """The request's messages as first asked: a re-ask (what was wrong with the last answer, added
    to the user turn after REASK_MARK) is the same question, judged the same and counted as the same
    request's attempt. A text-first call (rubrics/render.arranged) is read as the same rubric-first one."""
    messages = []
    for m in body.get("messages", []):
        if m.get("role") == "assistant":
            break
        content = m.get("content")
        if isinstance(content, str) and REASK_MARK in content:
            m = {**m, "content": content.split(REASK_MARK, 1)[0]}
        messages.append(m)
    roles = [m.get("role") for m in messages]
    if roles == ["system", "user"] and all(isinstance(m.get("content"), str) for m in messages):
        system, user = unarranged(messages[0]["content"], messages[1]["content"])  # one question in any layout
        messages = [{**messages[0], "content": system}, {**messages[1], "content": user}]
    return messages


def request_key(body: dict) -> str:
    return hashlib.sha256(json.dumps(first_turn(body), sort_keys=True).encode()).hexdigest()


_TOKEN = re.compile(r"\d|[A-Za-z_]+|\s+|[^\sA-Za-z_\d]")
_AFTER_VALUE_KEY = re.compile(r'"value"\s*:\s*$')


def persona_doubt(user: str, schema: dict, persona: str) -> float | None:
    """How far a persona moved its estimates from the offline judge's (the largest move over the
    criteria, 0..1); None for the offline judge itself. A persona's logprobs are the less sure the
    more it moved, as a real cheap judge is less sure where it is more often wrong."""
    if not persona:
        return None
    criteria = schema.get("properties", {}).get("criteria", {}).get("properties", {})
    return max((abs(_jitter(user, cid, f"persona:{persona}")) for cid in criteria), default=0.0)


def token_logprobs(content: str, top_n: int, key: str, doubt: float | None = None) -> list[dict]:
    """Chat-completions `logprobs.content` for an answer: one token per digit, word, space run or
    sign. At a digit right after `"value":` the judge "hesitates": the written digit has
    probability 0.5-0.9 and one neighbour most of the rest (both drawn from the request key and
    the position), so a weighted score differs from the sampled one, and a neighbour may fall
    outside the scale, as with real models. Every other token is certain."""
    entries, at = [], 0
    for match in _TOKEN.finditer(content):
        token = match.group()
        alternatives = [(token, 0.0)]
        if token.isdigit() and (_AFTER_VALUE_KEY.search(content, 0, at) or content.strip() == token):  # or a decision
            draw = int(hashlib.sha256(f"{key}:{at}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
            confidence, lean = 0.5 + 0.4 * draw, (0.75 if draw * 1000 % 2 < 1 else 0.25)
            if doubt is not None:  # a persona: sure where it kept close to the offline judge (persona_doubt)
                confidence = 0.95 - 0.4 * doubt + 0.02 * (draw - 0.5)
            digit = int(token)
            alternatives = [(token, math.log(confidence))]
            for neighbour, share in ((digit - 1, lean), (digit + 1, 1 - lean)):
                if 0 <= neighbour <= 9:
                    alternatives.append((str(neighbour), math.log((1 - confidence) * share)))
            alternatives.append(('"', math.log(1e-4)))
        entries.append(
            {
                "token": token,
                "logprob": alternatives[0][1],
                "bytes": list(token.encode()),
                "top_logprobs": [
                    {"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in alternatives[: max(0, top_n)]
                ],
            }
        )
        at = match.end()
    return entries


_EXAMPLE = re.compile(r"^- human (-?[\d.]+), judge (-?[\d.]+): (.*)$", re.M)
_WORD = re.compile(r"[a-z]{4,}")


def reflect(user: str) -> dict:
    """A deterministic stand-in for a reflection model (tasks/improve/reflect.py asks it): for the criterion
    named, the word whose presence best separates the examples the humans scored high from those
    they scored low becomes a pattern the criterion checks (this judge scores a criterion up where its
    patterns hit); with no such word, a rewritten description."""
    import yaml

    found = re.search(r"^## Criterion to improve: (\S+)$", user, re.M)
    if found is None:
        return {"mutations": []}
    cid = found.group(1)
    rubric = yaml.safe_load(user.split("## The rubric\n", 1)[1].split("\n## Criterion to improve:", 1)[0])
    criterion = next(c for c in rubric["criteria"] if c["id"] == cid)
    tried = (
        user.split("## Already tried for this criterion", 1)[1] if "## Already tried for this criterion" in user else ""
    )
    taken = {p["id"] for p in rubric.get("patterns") or []} | set(re.findall(rf'"({re.escape(cid)}-[a-z]+)"', tried))
    examples = [(float(h), set(_WORD.findall(text.lower()))) for h, _, text in _EXAMPLE.findall(user)]
    best, gap = None, 0.0
    for word in sorted(set().union(*(words for _, words in examples)) if examples else ()):
        with_word = [h for h, words in examples if word in words]
        without = [h for h, words in examples if word not in words]
        if len(with_word) >= 2 and without and f"{cid}-{word}" not in taken:
            separation = sum(with_word) / len(with_word) - sum(without) / len(without)
            if separation > gap + 1e-12:
                best, gap = word, separation
    if best is None:
        return {
            "mutations": [
                {
                    "op": "rewrite_criterion",
                    "id": cid,
                    "changes": {
                        "description": f"{criterion.get('description', '')} Judge it as the human raters would.".strip()
                    },
                }
            ]
        }
    pattern = f"{cid}-{best}"
    return {
        "mutations": [
            {
                "op": "add_pattern",
                "pattern": {
                    "id": pattern,
                    "words": [best],
                    "flags": "i",
                    "description": f"texts the humans scored higher use {best!r}",
                },
            },
            {
                "op": "rewrite_criterion",
                "id": cid,
                "changes": {"patterns": [*(criterion.get("patterns") or []), pattern]},
            },
        ]
    }


_HEADING = re.compile(r"^#{1,3}\s+(.+)$", re.M)
_RULE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.+)$", re.M)


def draft_rubric(user: str) -> dict:
    """A deterministic stand-in for a model drafting a rubric (tasks/improve/generate.py asks it): the source's
    first heading is the goal, each bullet or numbered rule a binary criterion in the rule's words."""
    m = re.search(r"<<<BEGIN SOURCE (\w+)>>>\n(.*?)\n<<<END SOURCE \1>>>", user, re.S)
    source = m.group(2) if m else user
    rubric_id = re.search(r"Use metadata\.id '([^']+)'", user)
    heading = _HEADING.search(source)
    title = heading.group(1).strip() if heading else "Drafted rubric"
    criteria: list[dict] = []
    seen: set[str] = set()
    for rule in _RULE.findall(source):
        words = re.findall(r"[a-z0-9]+", rule.lower())
        cid = "-".join(words[:4]) or f"rule-{len(criteria) + 1}"
        if cid in seen or len(words) < 3:
            continue
        seen.add(cid)
        criteria.append(
            {
                "id": cid,
                "title": rule.strip()[:60],
                "description": rule.strip(),
                "scale": {"kind": "binary", "labels": ["breaks the rule", "follows the rule"]},
            }
        )
    drafted = {
        "metadata": {"id": rubric_id.group(1) if rubric_id else "drafted", "version": "1.0.0", "title": title},
        "goal": f"Judge whether a text follows the rules of {title}.",
        "criteria": criteria[:30],
    }
    kind = re.search(r"^Rubric kind: (\w+)\.", user, re.M)
    return offline_kinds.shape(kind.group(1), drafted) if kind else drafted
