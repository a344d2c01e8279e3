"""One judge call per work cell, through the `openai` client, with retries and rate limits.

Transient errors (429, 5xx, timeouts, connection errors) are retried by tenacity with exponential
backoff and jitter, honouring Retry-After, bounded per call and by a per-run budget. Deterministic
errors (400, context length, content filter) are recorded, not retried. An unusable answer (not
JSON, wrong keys, out of scale, truncated, no choices) is asked again a few times, then recorded
as UNSCORED with its reason.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import openai
from openai import AsyncOpenAI
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from rubricflow.rubrics.compiler import Bundle
from rubricflow.rubrics.render import CallUnit, call_units, output_schema, render_system_prompt, render_user_message
from rubricflow.warehouse.rows import blank_completion

from .config import JudgeConfig
from .costs import CHARS_PER_TOKEN, Budget
from .ratelimit import RateLimiter
from .verify import AnswerError, CriterionResult, parse_json_answer, verify_answer

TRANSIENT_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529}
TOOL_NAME = "submit_judgment"
REASKED_ANSWER_ERRORS = ("parse", "truncated", "empty")  # a refusal or a filtered answer is final


@dataclass
class Cell:
    cell_key: str
    text_id: str
    text_sha256: str
    unit_id: str
    sample: int
    text: str
    input: str | None = None
    context: str | None = None
    genre: str | None = None


@dataclass
class Outcome:
    """What lands for one cell: one completion row and one judgment per criterion of its unit."""

    completion: dict[str, Any]
    judgments: list[CriterionResult] = field(default_factory=list)


@dataclass(frozen=True)
class Prompt:
    """One cell's request before the output mode is chosen; `estimate` is its token estimate for tpm."""

    system: str
    schema: dict
    user: str
    estimate: int


class RetryBudget:
    """Retries (transient errors and re-asks) allowed across a whole run, shared by its cells."""

    def __init__(self, total: int):
        self.left = total
        self.used = 0

    def take(self) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        self.used += 1
        return True


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in TRANSIENT_STATUS
    return False


def retry_after_s(exc: BaseException | None) -> float | None:
    response = getattr(exc, "response", None)
    if response is None:
        return None
    headers = response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue  # an HTTP date: fall back to backoff
    return None


class _Wait:
    """Retry-After when the server gives one, else exponential backoff with jitter."""

    def __init__(self) -> None:
        self.backoff = wait_exponential_jitter(multiplier=0.25, max=30, jitter=0.5)

    def __call__(self, state) -> float:
        hinted = retry_after_s(state.outcome.exception() if state.outcome else None)
        return min(60.0, hinted) if hinted is not None else self.backoff(state)


class Judge:
    """Judges cells of one rubric with one judge setup; one per worker, reusing one client."""

    def __init__(self, bundle: Bundle, config: JudgeConfig, client: AsyncOpenAI, limiter: RateLimiter,
                 retries: RetryBudget, run_id: str, corpus_id: str, spend: Budget | None = None):
        """`retries` bounds retries across the run; `spend` (optional) is the run's money budget."""
        self.bundle, self.config, self.client = bundle, config, client
        self.limiter, self.retries = limiter, retries
        self.spend = spend
        self.run_id, self.corpus_id = run_id, corpus_id
        self.judge_hash = config.judge_hash()
        self.mode = "json_schema" if config.output_mode == "auto" else config.output_mode
        rubric = bundle.rubric
        self.genres = {g for c in rubric.criteria for g in c.genre}
        self._units: dict[tuple[str, str | None], tuple[CallUnit, str, dict]] = {}
        for genre in {None} | self.genres:  # rendered once per run, reused for every cell
            for unit in call_units(rubric, config.strategy, genre):  # type: ignore[arg-type]
                self._units[(unit.id, genre)] = (unit, render_system_prompt(rubric, unit), output_schema(rubric, unit))

    def unit(self, unit_id: str, genre: str | None) -> tuple[CallUnit, str, dict]:
        """A genre no criterion names activates the same criteria as no genre."""
        return self._units[(unit_id, genre if genre in self.genres else None)]

    def request_kwargs(self, system: str, schema: dict, user: str, mode: str, sample: int) -> dict[str, Any]:
        """The chat request of one call: online, or one line of a batch."""
        c = self.config
        kwargs: dict[str, Any] = {"model": c.model, "temperature": c.temperature, "max_tokens": c.max_tokens}
        # Repeat samples get seeds of their own: independent draws that a re-run reproduces.
        if c.seed is not None or c.samples > 1:
            kwargs["seed"] = (c.seed or 0) + sample
        # The schema goes in extra_body: sent as is, it skips the client's per-request walk over
        # typed parameters, which costs more CPU than the rest of a call for a large schema.
        if mode == "json_schema":
            kwargs["extra_body"] = {"response_format": {
                "type": "json_schema", "json_schema": {"name": "judgment", "schema": schema, "strict": True}}}
        elif mode == "tools":
            kwargs["extra_body"] = {
                "tools": [{"type": "function", "function": {"name": TOOL_NAME, "parameters": schema,
                                                             "description": "Submit the judgment."}}],
                "tool_choice": {"type": "function", "function": {"name": TOOL_NAME}}}
        else:
            system = f"{system}\n\nJSON Schema of the answer:\n{json.dumps(schema)}"
        kwargs["messages"] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return kwargs

    # Three layers, innermost first: `_send` retries one request through transient errors; `_ask`
    # sends it in the richest output mode the endpoint accepts; `judge` re-asks after an answer
    # that cannot be used. Each layer records what ended it in the cell's completion row.

    async def _send(self, kwargs: dict[str, Any], estimate: int, attempts: list[int]) -> Any:
        """Layer 1: one request, retried on transient errors (429, 5xx, timeouts) with backoff,
        within max_attempts and the run's retry budget; other errors are raised at once."""
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.config.max_attempts) | (lambda state: not self.retries.take()),
            wait=_Wait(), retry=retry_if_exception(is_transient), reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                async with self.limiter:
                    await self.limiter.admit(estimate)
                    attempts[0] += 1
                    return await self.client.chat.completions.create(timeout=self.config.timeout_s, **kwargs)
        raise AssertionError("unreachable")

    async def _ask(self, prompt: "Prompt", sample: int, row: dict[str, Any], attempts: list[int]) -> Any | None:
        """Layer 2: the response in the richest output mode the endpoint accepts (json_schema ->
        forced tool call -> plain text, learned once per run); None when the call failed, with
        the error in `row`."""
        while True:
            mode = self.mode
            kwargs = self.request_kwargs(prompt.system, prompt.schema, prompt.user, mode, sample)
            try:
                response = await self._send(kwargs, prompt.estimate, attempts)
            except openai.BadRequestError as exc:
                if self._fall_back(exc, mode):
                    continue
                row.update(error_kind="deterministic", error=_describe(exc))
                return None
            except Exception as exc:  # transient and exhausted, or another API error
                row.update(error_kind="transient" if is_transient(exc) else "deterministic", error=_describe(exc))
                return None
            row.update(model=response.model, system_fingerprint=response.system_fingerprint,
                       response_id=response.id, output_mode=mode)
            if response.usage:
                row["prompt_tokens"] = (row["prompt_tokens"] or 0) + response.usage.prompt_tokens
                row["completion_tokens"] = (row["completion_tokens"] or 0) + response.usage.completion_tokens
            return response

    async def judge(self, cell: Cell) -> Outcome | None:
        """Layer 3: the cell's outcome, re-asking (up to answer_retries) after an answer that is
        not JSON, cut off, empty or out of scale. None when the run's money budget cannot cover
        the call (nothing is sent)."""
        unit, system, schema = self.unit(cell.unit_id, cell.genre)
        user = render_user_message(cell.text, cell.input or "", cell.context or "")
        reserved = self.spend.reserve((len(system) + len(user)) // CHARS_PER_TOKEN, self.config.max_tokens) \
            if self.spend else 0.0
        if reserved is None:
            return None
        prompt = Prompt(system, schema, user, (len(system) + len(user)) // 4 + self.config.max_tokens)
        row = self.new_row(cell)
        attempts = [0]
        started = time.perf_counter()
        results: list[CriterionResult] = []
        for answer_try in range(self.config.answer_retries + 1):
            may_ask_again = answer_try < self.config.answer_retries
            response = await self._ask(prompt, cell.sample, row, attempts)
            if response is None:
                break
            try:
                results, declared, warnings = self.read_answer(response, unit, cell.text, row)
            except AnswerError as exc:
                row.update(error_kind=exc.kind, error=str(exc))
                results = []  # an earlier attempt's answer does not stand for this one
                if exc.kind in REASKED_ANSWER_ERRORS and may_ask_again and self.retries.take():
                    continue
                break
            if any(r.reason and r.reason.startswith("out of scale") for r in results) and may_ask_again \
                    and self.retries.take():
                continue
            for r in results:
                r.warnings = warnings + r.warnings
            row.update(status="ok", error_kind=None, error=None, declared_disqualifiers=declared)
            break
        row["attempts"] = attempts[0]
        row["latency_ms"] = (time.perf_counter() - started) * 1000
        row["created_at"] = time.time()
        if not results:  # the whole cell failed: every criterion is unscored with the reason
            reason = f"{row['error_kind']}: {row['error']}"
            results = [CriterionResult(cid, reason=reason) for cid in unit.criteria]
        if self.spend:
            self.spend.settle(reserved, row["prompt_tokens"] or 0, row["completion_tokens"] or 0)
        return Outcome(row, results)

    def new_row(self, cell: Cell) -> dict[str, Any]:
        """A cell's completion row before any answer: failed until an answer is read."""
        return blank_completion(
            cell_key=cell.cell_key, run_id=self.run_id, corpus_id=self.corpus_id, text_id=cell.text_id,
            text_sha256=cell.text_sha256, unit_id=cell.unit_id, rubric_hash=self.bundle.hash,
            judge_hash=self.judge_hash, sample=cell.sample)

    def _fall_back(self, exc: openai.BadRequestError, used: str) -> bool:
        """An endpoint without structured output: json_schema -> forced tool call -> plain text.
        The switch is shared by all cells of the worker; `used` is the mode the failed call used."""
        if self.config.output_mode != "auto":
            return False
        message = str(exc).lower()
        order = ["json_schema", "tools", "text"]
        if used == "json_schema" and ("response_format" in message or "json_schema" in message):
            nxt = "tools"
        elif used == "tools" and "tool" in message:
            nxt = "text"
        else:
            return False
        if order.index(self.mode) < order.index(nxt):
            self.mode = nxt
        return True

    def read_answer(self, response, unit: CallUnit, text: str, row: dict) -> tuple[list[CriterionResult], list[str], list[str]]:
        """Verified results, declared disqualifiers and warnings of a completion; records the raw answer
        in `row`. Raises AnswerError for an answer that cannot be used (refused, cut off, not JSON)."""
        if not response.choices:
            raise AnswerError("empty", "the response has no choices")
        choice = response.choices[0]
        message = choice.message
        row["finish_reason"] = choice.finish_reason
        tool_calls = getattr(message, "tool_calls", None) or []
        content = tool_calls[0].function.arguments if tool_calls else message.content
        row["raw_response"] = content
        if getattr(message, "refusal", None):
            row["raw_response"] = message.refusal
            raise AnswerError("refusal", f"the judge refused: {message.refusal}")
        if choice.finish_reason == "content_filter":
            raise AnswerError("content_filter", "the answer was withheld by a content filter")
        if choice.finish_reason == "length":
            raise AnswerError("truncated", "the answer was cut off at max_tokens")
        answer = parse_json_answer(content)
        return verify_answer(self.bundle.rubric, unit, answer, text)


def _describe(exc: BaseException) -> str:
    status = getattr(exc, "status_code", None)
    text = f"{type(exc).__name__}" + (f" {status}" if status else "") + f": {exc}"
    return text[:500]


async def judge_all(judge: Judge, cells: list[Cell], on_done=None) -> list[Outcome]:
    """Judge cells concurrently (the limiter caps calls in flight)."""
    async def one(cell: Cell) -> Outcome | None:
        outcome = await judge.judge(cell)
        if on_done and outcome is not None:
            on_done(outcome)
        return outcome
    return [o for o in await asyncio.gather(*(one(c) for c in cells)) if o is not None]
