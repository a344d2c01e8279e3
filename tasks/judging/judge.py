"""The `Judge`: one judge call per work cell, with retries, output-mode negotiation and re-asks.

Its neighbours hold the other concerns: `transport` sends one request (deadline, provider wire,
retry waits), `failures` names what went wrong and what the run does about it (FailureKind and its
policy), `answers` reads what came back. Transient errors are retried with backoff within
max_attempts and the run's retry budget; deterministic ones are recorded; an unusable answer is
asked again a few times, then recorded as UNSCORED with its reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field, replace
from typing import Any

import openai
from openai import AsyncOpenAI
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

from rubricflow.rubrics.compiler import Bundle
from rubricflow.rubrics.render import CallUnit, Rendering, delivered, reask_note, render, schema_suffix
from rubricflow.tasks.judging import answers, providers, telemetry, verdict_tools
from rubricflow.tasks.judging.answers import cached_tokens
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.costs import Budget, TokenEstimator
from rubricflow.tasks.judging.deadline import CallDeadline
from rubricflow.tasks.judging.delivery import WITH_SYSTEM, WITHOUT_SYSTEM, dropped
from rubricflow.tasks.judging.delivery import note as dropped_note
from rubricflow.tasks.judging.failures import (
    BudgetSpent,
    DeadlineExceeded,
    FailureKind,
    NotSent,
    Stopped,
    describe,
    refuses_logprobs,
    refuses_mode,
)
from rubricflow.tasks.judging.logprobs import TOP_LOGPROBS
from rubricflow.tasks.judging.params import RequestForm
from rubricflow.tasks.judging.ratelimit import RateLimiter
from rubricflow.tasks.judging.stop_rule import StopRule
from rubricflow.tasks.judging.transport import RetryBudget, RetryBudgetSpent, Wait, post_chat
from rubricflow.tasks.judging.verify import AnswerError, CriterionResult
from rubricflow.tasks.runtime.progress import notify
from rubricflow.warehouse.rows import blank_completion

TOOL_NAME = "submit_judgment"


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


def nothing_fit(response: Any) -> bool:
    """An answer cut off at the limit with no visible text (nor a tool call): all the budget went to
    hidden reasoning, so only more room can help."""
    try:
        choice = response.choices[0]
        message = choice.message
        return choice.finish_reason == "length" and not (message.content or "").strip() and not message.tool_calls
    except (AttributeError, IndexError, TypeError):
        return False


@dataclass(frozen=True)
class Prompt:
    """One cell's request before the output mode is chosen; `prompt_tokens` is the conservative
    estimate the rate limit and the budget reserve for it (see costs.TokenEstimator)."""

    system: str
    schema: dict
    user: str
    raw_tokens: int  # TokenEstimator.raw of system + user, counted once per cell
    prompt_tokens: int
    feedback: str = ""  # a re-ask: what was wrong with the last answer, added to the user message
    feedback_tokens: int = 0  # the part of prompt_tokens the feedback adds
    max_tokens: int | None = None  # a re-ask's larger allowance (an answer left empty at the limit)


@dataclass
class Attempts:
    """What one cell's calls cost in time: `server_s` from sending each request to the last byte
    of its answer (the server's own time: what the concurrency controller and `latency_ms` read),
    `queued_s` waiting in this client for a slot and the rate limits (`queue_ms`)."""

    count: int = 0
    server_s: float = 0.0
    queued_s: float = 0.0


class Judge:
    """Judges cells of one rubric with one judge setup; one per worker, reusing one client."""

    def __init__(
        self,
        bundle: Bundle,
        config: JudgeConfig,
        client: AsyncOpenAI,
        limiter: RateLimiter,
        retries: RetryBudget,
        run_id: str,
        corpus_id: str,
        spend: Budget | None = None,
    ):
        """`retries` bounds retries across the run; `spend` (optional) is the run's money budget."""
        self.bundle, self.config, self.client = bundle, config, client
        self.limiter = limiter
        self.spend = spend
        self.tokens = TokenEstimator()
        self._system_raw: dict[str, int] = {}
        self.timeout_s = config.resolved_timeout_s()
        self.run_id, self.corpus_id = run_id, corpus_id
        self.new_run(retries)
        self.judge_hash = config.judge_hash()
        self.wire = providers.provider(config.provider)  # its capabilities and error classes, read once
        self.modes = self.wire.capabilities.output_modes
        self.mode = self.modes[0] if config.output_mode == "auto" else config.output_mode
        # max_tokens / temperature as this server takes them (learned only where the API has reasoning models)
        self.form = RequestForm(config.reasoning_tokens, self.wire.capabilities.reasoning_parameters)
        self.logprobs = config.wants_logprobs()  # False once the endpoint refuses them
        # where the rubric goes: the system message, or the user turn for a server whose chat
        # template drops the system role (found by the delivery check when system_prompt is auto)
        self.layout = "user" if config.system_prompt == "user" else "system"
        self._delivery_checked = config.system_prompt != "auto" or self.wire.capabilities.system_role == "field"
        self._form_probed = False
        self._delivery_lock = asyncio.Lock()
        self.rendering: Rendering = render(bundle.rubric, config.strategy)  # once per judge, for every cell
        if self.mode == verdict_tools.MODE:
            verdict_tools.check(bundle.rubric, [u.unit for u in self.rendering.of_genre(None)])

    def new_run(self, retries: RetryBudget | None = None) -> None:
        """Start the run's own accounting: its retry budget and the stop rule's counts. A judge
        outside a warehouse is kept per rubric and settings for what it rendered and learned about
        the endpoint (layout, request form, output mode), and each call on it is a run of its own:
        one call's spent retries or refusals must not stop the next (the endpoint may be up now)."""
        self.retries = retries if retries is not None else RetryBudget(self.config.retry_budget)
        self.stop_rule = StopRule(self.timeout_s)  # refusals and silence stop the run sending
        self.stopping = False  # set when the run fails: no new call is sent, those sent are waited for

    def unit(self, unit_id: str, genre: str | None) -> tuple[CallUnit, str, dict]:
        """The call unit, its system text and answer schema, as rubrics/render rendered them."""
        rendered = self.rendering.unit(unit_id, genre)
        return rendered.unit, rendered.system, rendered.schema

    def request_body(
        self,
        system: str,
        schema: dict,
        user: str,
        mode: str,
        sample: int,
        feedback: str = "",
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        """The chat request of one call as sent: online (see _create), or one line of a batch; a
        re-ask adds what was wrong with the last answer to the user turn (one user turn: templates
        that demand alternating roles accept it, and the prompt grows by a sentence, not an answer)."""
        c = self.config
        user = user + feedback
        kwargs: dict[str, Any] = {
            "model": c.model,
            "temperature": c.temperature,
            "max_tokens": max_tokens or c.max_tokens,
            **c.sent(),  # the JudgeConfig fields marked SENT (top_p, ...) that are set
        }
        # Repeat samples get seeds of their own: independent draws that a re-run reproduces.
        if c.seed is not None or c.samples > 1:
            kwargs["seed"] = (c.seed or 0) + sample
        if self.logprobs and mode not in ("tools", verdict_tools.MODE):  # a tool call's arguments carry no logprobs
            kwargs.update(logprobs=True, top_logprobs=TOP_LOGPROBS)
        if mode == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "judgment", "schema": schema, "strict": True},
            }
        elif mode == "json_object":  # the schema rides along: servers that constrain by it do, others see it below
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
            system += schema_suffix(schema, mode)
        elif mode == verdict_tools.MODE:  # waza: the tool the judge calls is its verdict
            system, tools = verdict_tools.request(system)
            kwargs.update(tools)
        elif mode == "tools":
            kwargs["tools"] = [
                {
                    "type": "function",
                    "function": {"name": TOOL_NAME, "parameters": schema, "description": "Submit the judgment."},
                }
            ]
            kwargs["tool_choice"] = {"type": "function", "function": {"name": TOOL_NAME}}
        else:
            system += schema_suffix(schema, mode)
        kwargs["messages"] = delivered(
            [{"role": "system", "content": system}, {"role": "user", "content": user}], self.layout
        )
        return kwargs

    # Three layers, innermost first: `_send` retries one request through transient errors; `_ask`
    # sends it in the richest output mode the endpoint accepts; `judge` re-asks after an answer
    # that cannot be used. Each layer records what ended it in the cell's completion row.

    async def _send(self, kwargs: dict[str, Any], prompt: Prompt, attempts: Attempts) -> Any:
        """Layer 1: one request, retried on transient errors (429, 5xx, timeouts) with backoff,
        within max_attempts and the run's retry budget; other errors are raised at once. Every
        attempt reserves its worst case from the money budget first and settles after."""
        deadline = CallDeadline(self.config.resolved_call_deadline_s())  # the attempts' and waits' total
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.config.max_attempts) | RetryBudgetSpent(self.retries) | deadline,
            wait=Wait(),
            retry=retry_if_exception(self.retried),
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                waiting_since = time.perf_counter()
                repeat = attempt.retry_state.attempt_number > 1
                async with self.limiter.slot(first=repeat) as slot:
                    if self.stopping:
                        raise Stopped("not sent: the run is stopping")
                    if not_sent := self.stop_rule.why_not_send():
                        raise NotSent(not_sent)
                    if kwargs.get("logprobs") and not self.logprobs:  # refused while this call waited
                        kwargs.pop("logprobs"), kwargs.pop("top_logprobs", None)
                    reserved = self._reserve(prompt)
                    await self.limiter.admit(prompt.prompt_tokens + self.form.completion_budget(self.config.max_tokens))
                    attempts.count += 1
                    started = time.perf_counter()
                    attempts.queued_s += started - waiting_since
                    try:
                        with deadline.attempt(self.timeout_s) as attempt_s:
                            response = await self._create(kwargs, attempt_s, repeat)
                    except openai.APIStatusError as exc:
                        attempts.server_s += time.perf_counter() - started
                        self._settle(reserved, 0, 0)  # an error answer is not billed
                        self._note_refusal(exc)
                        slot.overloaded = exc.status_code in (429, 503, 529)
                        raise
                    except BaseException as exc:
                        attempts.server_s += time.perf_counter() - started
                        self._settle(reserved, None, None)  # a timeout may have been billed: keep the worst case
                        self._note_refusal(exc)
                        slot.overloaded = isinstance(exc, (openai.APITimeoutError, DeadlineExceeded))
                        raise
                    slot.latency_s = time.perf_counter() - started
                    attempts.server_s += slot.latency_s
                    usage = getattr(response, "usage", None)
                    prompt_tokens = getattr(usage, "prompt_tokens", None)
                    if isinstance(prompt_tokens, int) and prompt_tokens > 0:
                        self.tokens.observe(prompt.raw_tokens, prompt_tokens)
                    self._settle(
                        reserved, prompt_tokens, getattr(usage, "completion_tokens", None), cached_tokens(usage)
                    )
                    return response
        raise AssertionError("unreachable")

    async def _create(self, body: dict[str, Any], timeout_s: float | None = None, repeat: bool = True) -> Any:
        """`repeat`: a retry or a probe, whose silence counts toward the stop rule (stop_rule)."""
        try:
            response = await post_chat(self.client, body, timeout_s or self.timeout_s, self.config.provider, self.form)
        except Exception as exc:
            self.stop_rule.sent(exc, repeat)
            raise
        else:
            self.stop_rule.sent(None, repeat)
            return response
        finally:
            while self.form.notes:  # what the run learned about the server's parameters, said once
                notify("note", f"{self.form.notes.pop(0)}; this run adapts its requests")

    def _note_refusal(self, exc: BaseException) -> None:
        """Count an attempt the endpoint refused (key, model, URL) or never answered: after a few,
        with no answer yet, the run stops sending (see stop_rule.StopRule)."""
        if isinstance(exc, Exception):
            self.stop_rule.refused(exc, self.wire.classify(exc))

    def _reserve(self, prompt: Prompt) -> float:
        if not self.spend:
            return 0.0
        reserved = self.spend.reserve(prompt.prompt_tokens, self.form.completion_budget(self.config.max_tokens))
        if reserved is None:
            raise BudgetSpent(f"budget ${self.spend.usd:,.4f} reached: not sent")
        return reserved

    def _settle(
        self,
        reserved: float,
        prompt_tokens: int | None,
        completion_tokens: int | None,
        cached_tokens: int | None = None,
    ) -> None:
        """Pay the call's real cost (cached input at its own rate); unknown counts (no usage
        reported) are paid at the reservation."""
        if not self.spend:
            return
        if not isinstance(prompt_tokens, int) or not isinstance(completion_tokens, int):
            self.spend.settle_amount(reserved, reserved)
        else:
            self.spend.settle(reserved, prompt_tokens, completion_tokens, cached_tokens or 0)

    async def check_delivery(self) -> None:
        """Once per run: does the endpoint deliver a system message? Two one-token probes, with and
        without a 60-word system message; if the counted prompt does not grow, the server's chat
        template dropped it, and the run moves the rubric into the user turn (and says so once)."""
        async with self._delivery_lock:  # every cell waits here until the check is done
            if self._delivery_checked:
                return
            try:
                with_system = await self._probe(WITH_SYSTEM)
                without = await self._probe(WITHOUT_SYSTEM)
            except Exception:  # the cells' own calls will meet and report whatever is wrong
                return
            finally:
                self._delivery_checked = True
            if dropped(with_system, without):
                self.layout = "user"
                notify("note", dropped_note(with_system, without, "this run sends the rubric"))

    async def learn_request_form(self) -> None:
        """Before a batch is built, once a run: the delivery check's one-token calls (or one such
        call, when the layout is set) teach the run the parameter form the server takes, which a
        batch line, answered with a 400 hours later, cannot. A reasoning model gives no logprobs."""
        if not self._delivery_checked:
            await self.check_delivery()
        elif not self._form_probed:
            self._form_probed = True
            with contextlib.suppress(Exception):  # the cells' own calls will meet whatever is wrong
                await self._probe(WITHOUT_SYSTEM)
        if self.form.reasoning:
            self.logprobs = False

    async def _probe(self, messages: list[dict]) -> int | None:
        response = await self._create(
            {"model": self.config.model, "messages": messages, "max_tokens": 1, "temperature": 0}
        )
        count = getattr(getattr(response, "usage", None), "prompt_tokens", None)
        return count if isinstance(count, int) else None

    async def _ask(self, prompt: Prompt, sample: int, row: dict[str, Any], attempts: Attempts) -> Any | None:
        """Layer 2: the response in the richest output mode the endpoint accepts (json_schema ->
        forced tool call -> plain text, learned once per run); None when the call failed, with
        the error in `row`."""
        if not self._delivery_checked:
            await self.check_delivery()
        while True:
            mode = self.mode
            kwargs = self.request_body(
                prompt.system, prompt.schema, prompt.user, mode, sample, prompt.feedback, prompt.max_tokens
            )
            try:
                response = await self._send(kwargs, prompt, attempts)
            except openai.APIStatusError as exc:
                if kwargs.get("logprobs") and refuses_logprobs(exc):
                    self.logprobs = False  # for the rest of the run; the sampled score stands alone
                    continue
                if refuses_mode(exc, mode) and self._fall_back(mode):
                    continue
                row.update(error_kind=self.wire.classify(exc).value, error=describe(exc))
                return None
            except Exception as exc:  # transient and exhausted, a setup problem, or another API error
                row.update(error_kind=self.wire.classify(exc).value, error=describe(exc))
                return None
            row.update(
                model=getattr(response, "model", None),
                output_mode=mode,
                prompt_layout=self.layout,
                system_fingerprint=getattr(response, "system_fingerprint", None),
                response_id=getattr(response, "id", None),
            )
            usage = getattr(response, "usage", None)
            for counted in ("prompt_tokens", "completion_tokens"):  # absent or null counts stay unknown
                count = getattr(usage, counted, None)
                if isinstance(count, int):
                    row[counted] = (row[counted] or 0) + count
            cached = cached_tokens(usage)
            if cached is not None:
                row["cached_tokens"] = (row["cached_tokens"] or 0) + cached
            return response

    async def judge(self, cell: Cell) -> Outcome | None:
        """The cell's outcome (see `_judge`), traced as a model call when telemetry is on."""
        with telemetry.model_call(self.config.model, self.config.provider, self.config, cell) as span:
            outcome = await self._judge(cell)
            if span is not None and outcome is not None:
                thresholds = {
                    c.id: c.pass_threshold for c in self.bundle.rubric.criteria if c.pass_threshold is not None
                }
                telemetry.record_outcome(span, outcome.completion, outcome.judgments, thresholds)
            return outcome

    async def _judge(self, cell: Cell) -> Outcome | None:
        """Layer 3: the cell's outcome, re-asking (up to answer_retries) after an answer that is
        not JSON, cut off, empty or out of scale. None when the run's money budget cannot cover
        the call (nothing is sent)."""
        unit, system, schema = self.unit(cell.unit_id, cell.genre)
        user = self.rendering.unit(cell.unit_id, cell.genre).user(cell.text, cell.input or "", cell.context or "")
        if system not in self._system_raw:  # one count per rendered system prompt, not per cell
            self._system_raw[system] = TokenEstimator.raw(system)
        raw = self._system_raw[system] + TokenEstimator.raw(user)
        prompt = Prompt(system, schema, user, raw, self.tokens.estimate(raw))
        row = self.new_row(cell)
        attempts = Attempts()
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
                if exc.kind in FailureKind.reasked() and may_ask_again and self.retries.take():
                    prompt = self.reasked(prompt, exc.kind, str(exc), answer_try + 2, nothing_fit(response))
                    continue
                break
            except Exception as exc:  # an answer of a shape nobody foresaw: this cell's failure, not the shard's
                row.update(error_kind=FailureKind.MALFORMED.value, error=describe(exc))
                results = []
                break
            out_of_scale = [r.reason for r in results if r.reason and r.reason.startswith("out of scale")]
            if out_of_scale and may_ask_again and self.retries.take():
                prompt = self.reasked(prompt, "out_of_scale", "; ".join(out_of_scale), answer_try + 2)
                continue
            for r in results:
                r.warnings = warnings + r.warnings
            row.update(status="ok", error_kind=None, error=None, declared_disqualifiers=declared)
            self.stop_rule.answered += 1
            break
        row["attempts"] = attempts.count
        row["latency_ms"] = attempts.server_s * 1000 if attempts.count else None
        row["queue_ms"] = attempts.queued_s * 1000
        row["created_at"] = time.time()
        if not results:  # the whole cell failed: every criterion is unscored with the reason
            reason = f"{row['error_kind']}: {row['error']}"
            results = [CriterionResult(cid, reason=reason) for cid in unit.criteria]
        if row["error_kind"] in (FailureKind.BUDGET, FailureKind.STOPPED) and attempts.count == 0:
            return None  # nothing was sent for this cell: it stays unjudged, for a later run
        if row["error_kind"] == FailureKind.STOPPED:  # a stopped row never lands as such
            row["error_kind"] = FailureKind.TRANSIENT.value  # sent before, stopped before a retry: planned again
        return Outcome(row, results)

    def reasked(self, prompt: Prompt, kind: str, error: str, ask: int = 2, nothing_fit: bool = False) -> Prompt:
        """The prompt of the next ask: what was wrong with the last answer, and which ask this is, so
        even an identical unusable answer never gets an identical request. The answer itself is not
        sent back (a small model's rambling would double the prompt) and max_tokens stays (a larger
        allowance let a model that rambles ramble longer: llama.cpp here, 100+ s a call), but for
        an answer cut off before a word of it (`nothing_fit`: a reasoning model's hidden reasoning
        took the whole budget), which a shorter answer cannot help: it gets twice max_tokens, once."""
        note = reask_note(kind, error[:300], self.config.max_tokens, ask, self.config.answer_retries + 1)
        added = self.tokens.estimate(TokenEstimator.raw(note))
        tokens = prompt.prompt_tokens - prompt.feedback_tokens + added
        room = 2 * self.config.max_tokens if nothing_fit and kind == FailureKind.TRUNCATED else prompt.max_tokens
        return replace(prompt, feedback=note, prompt_tokens=tokens, feedback_tokens=added, max_tokens=room)

    def new_row(self, cell: Cell) -> dict[str, Any]:
        """A cell's completion row before any answer: failed until an answer is read."""
        return blank_completion(
            cell_key=cell.cell_key,
            run_id=self.run_id,
            corpus_id=self.corpus_id,
            text_id=cell.text_id,
            text_sha256=cell.text_sha256,
            unit_id=cell.unit_id,
            rubric_hash=self.bundle.hash,
            judge_hash=self.judge_hash,
            sample=cell.sample,
            unit_hash=self.rendering.unit(cell.unit_id, cell.genre).fingerprint,
        )

    def _fall_back(self, used: str) -> bool:
        """The endpoint refused output mode `used`: move the run to the next one (json_schema ->
        json_object -> forced tool call -> plain text), once, for every cell of the run. With
        --output-mode set, there is no fallback: the refusal is the cell's error."""
        if self.config.output_mode != "auto" or used == "text":
            return False
        nxt: Any = self.modes[self.modes.index(used) + 1]
        if self.modes.index(self.mode) < self.modes.index(nxt):
            self.mode = nxt
        return True

    def retried(self, exc: BaseException) -> bool:
        """Whether the transport sends a failed request again (the provider's classification)."""
        return self.wire.classify(exc).policy.retried

    def read_answer(
        self, response, unit: CallUnit, text: str, row: dict
    ) -> tuple[list[CriterionResult], list[str], list[str]]:
        """This judge's rubric read from a completion (see answers.read_answer)."""
        return answers.read_answer(self.bundle.rubric, response, unit, text, row)


async def judge_all(judge: Judge, cells: list[Cell], on_done=None, held=None) -> list[Outcome]:
    """Judge cells concurrently (the limiter caps calls in flight). `held` (tasks/judging/remote.Held)
    caps the cells begun and not yet taken away: a cell takes a place before its call (or is left
    unjudged when `acquire` says False) and the consumer of `on_done` gives it back (a cell with no
    outcome gives it back here)."""

    async def one(cell: Cell) -> Outcome | None:
        if held is not None and not await held.acquire():
            return None  # the consumer can take no more (its link is gone): buy nothing
        try:
            outcome = await judge.judge(cell)
        except BaseException:
            if held is not None:
                held.release()
            raise
        if on_done and outcome is not None:
            on_done(outcome)
        elif held is not None:
            held.release()
        return outcome

    return [o for o in await asyncio.gather(*(one(c) for c in cells)) if o is not None]
