"""The `Judge`: one judge call per work cell, with retries, output-mode negotiation and re-asks.

Its neighbours hold the other concerns: `transport` sends one request (deadline, provider wire,
retry waits), `failures` names what went wrong and what the run does about it (FailureKind and its
policy), `answers` reads what came back. Transient errors are retried with backoff within
max_attempts and the run's retry budget; deterministic ones are recorded; an unusable answer is
asked again a few times, then recorded as UNSCORED with its reason.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

import openai
from openai import AsyncOpenAI
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

from rubricflow.rubrics.compiler import Bundle
from rubricflow.rubrics.render import LAYOUTS, CallUnit, Rendering, reask_note, render
from rubricflow.tasks.judging import answers, providers, telemetry, verdict_tools
from rubricflow.tasks.judging.answers import cached_tokens
from rubricflow.tasks.judging.cells import Attempts, Cell, Outcome, Prompt, nothing_fit  # noqa: F401 - re-exported
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.costs import Budget, TokenEstimator
from rubricflow.tasks.judging.deadline import CallDeadline
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
from rubricflow.tasks.judging.params import RequestForm
from rubricflow.tasks.judging.ratelimit import RateLimiter
from rubricflow.tasks.judging.request_shape import TOOL_NAME, RequestShaping  # noqa: F401 - re-exported
from rubricflow.tasks.judging.stop_rule import StopRule
from rubricflow.tasks.judging.transport import RetryBudget, RetryBudgetSpent, Wait, post_chat
from rubricflow.tasks.judging.verify import AnswerError, CriterionResult
from rubricflow.tasks.runtime.progress import notify
from rubricflow.warehouse.rows import blank_completion


class Judge(RequestShaping):
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
        arrangement: str = "rubric-first",
    ):
        """`retries` bounds retries across the run; `spend` (optional) is the run's money budget;
        `arrangement` the run's cache layout (rubric-first or text-first, layout_plan.py)."""
        self.arrangement = arrangement if arrangement in LAYOUTS else "rubric-first"  # auto unplanned: today's
        self.bundle, self.config, self.client = bundle, config, client
        self.limiter = limiter
        self.spend = spend
        self.tokens = TokenEstimator()
        self._system_raw: dict[str, int] = {}
        self.timeout_s = config.resolved_timeout_s()
        # the call's total, read once as the timeout is (resolving the endpoint per call was ~1% of a
        # reward's CPU, #55): an endpoint resolved otherwise since is another client key, another Judge
        self.call_deadline_s = config.resolved_call_deadline_s(self.timeout_s)
        self.run_id, self.corpus_id = run_id, corpus_id
        self.new_run(retries)
        self.judge_hash = config.judge_hash()
        self.wire = providers.provider(config.provider)  # its capabilities and error classes, read once
        self.rendering: Rendering = render(bundle.rubric, config.strategy)  # once per judge, for every cell
        units = [u.unit for u in self.rendering.of_genre(None)]
        # auto: the API's modes, richest first (a waza rubric's verdict tools before them, seed 004)
        self.modes = verdict_tools.output_modes(bundle.rubric, units, self.wire.capabilities.output_modes)
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
        if self.mode == verdict_tools.MODE:
            verdict_tools.check(bundle.rubric, units)

    def new_run(self, retries: RetryBudget | None = None) -> None:
        """Start the run's own accounting: its retry budget and the stop rule's counts. A judge
        outside a warehouse is kept per rubric and settings for what it rendered and learned about
        the endpoint (layout, request form, output mode), and each call on it is a run of its own:
        one call's spent retries or refusals must not stop the next (the endpoint may be up now)."""
        self.retries = retries if retries is not None else RetryBudget(self.config.retry_budget)
        self.stop_rule = StopRule(self.timeout_s)  # refusals and silence stop the run sending
        self.stopping = False  # set when the run fails: no new call is sent, those sent are waited for
        self.wait = Wait()  # stateless: one for every call (its two tenacity sums cost ~3% of a reward)

    def unit(self, unit_id: str, genre: str | None) -> tuple[CallUnit, str, dict]:
        """The call unit, its system text and answer schema, as rubrics/render rendered them."""
        rendered = self.rendering.unit(unit_id, genre)
        return rendered.unit, rendered.system, rendered.schema

    # Three layers, innermost first: `_send` retries one request through transient errors; `_ask`
    # sends it in the richest output mode the endpoint accepts; `judge` re-asks after an answer
    # that cannot be used. Each layer records what ended it in the cell's completion row.

    async def _send(self, kwargs: dict[str, Any], prompt: Prompt, attempts: Attempts) -> Any:
        """Layer 1: one request, retried on transient errors (429, 5xx, timeouts) with backoff,
        within max_attempts and the run's retry budget; other errors are raised at once. Every
        attempt reserves its worst case from the money budget first and settles after. The first
        attempt is sent before any tenacity loop is built (most calls need no other; the loop's
        set-up was ~4% of a reward's server CPU, #55); one that fails enters the loop as its first
        attempt, so the loop decides on it, waits and stops exactly as if it had sent it."""
        deadline = CallDeadline(self.call_deadline_s)  # the attempts' and waits' total
        try:
            return await self._attempt(kwargs, prompt, attempts, deadline, repeat=False)
        except BaseException as exc:
            failed: BaseException | None = exc
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.config.max_attempts) | RetryBudgetSpent(self.retries) | deadline,
            wait=self.wait,
            retry=retry_if_exception(self.retried),
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                if failed is not None:  # the attempt sent above, as the loop's first
                    first, failed = failed, None
                    raise first
                return await self._attempt(kwargs, prompt, attempts, deadline, repeat=True)
        raise AssertionError("unreachable")

    async def _attempt(
        self, kwargs: dict[str, Any], prompt: Prompt, attempts: Attempts, deadline: CallDeadline, repeat: bool
    ) -> Any:
        """One attempt of `_send`: a slot, the limits, the request; `repeat`: a retry."""
        waiting_since = time.perf_counter()
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
            self._settle(reserved, prompt_tokens, getattr(usage, "completion_tokens", None), cached_tokens(usage))
            return response

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
                output_mode=self.sent_mode(prompt.schema, mode),  # a one-token decision's own, not the mode asked
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
            if self.tools_ignored(kwargs, mode, response):
                continue  # its tokens are counted above; the call goes again in the next mode
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
