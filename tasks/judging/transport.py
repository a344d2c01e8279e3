"""The call: one chat request sent through the one hardened client, for every model call the
project makes (judging, reflection, drafting, probes). A deadline over the whole answer, the
provider's wire translation, the server's parameter form learned once, and the retry policy
(which errors, how long to wait, the run-wide retry budget) that every caller's loop uses."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import openai
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion
from tenacity import wait_exponential
from tenacity.stop import stop_base
from tenacity.wait import wait_base

from rubricflow.tasks.judging import providers
from rubricflow.tasks.judging.failures import DeadlineExceeded, NotAChatCompletion
from rubricflow.tasks.judging.params import RequestForm


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


class RetryBudgetSpent(stop_base):
    """Stop retrying once the run's retry budget is spent (each retry takes one from it)."""

    def __init__(self, budget: RetryBudget):
        self.budget = budget

    def __call__(self, retry_state: Any) -> bool:
        return not self.budget.take()


def retry_after_s(exc: BaseException | None) -> float | None:
    """The wait a server asked for (Retry-After-Ms or Retry-After in seconds); None for none or a date."""
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


# A rate limit is a quota per minute: a 429 storm with no Retry-After lasts until the window turns,
# so its waits grow from 2 s to 30 s, RATE_LIMIT_WAIT_S in all over the default 6 attempts (the
# other transient errors' waits, 0.25 s doubling, gave a cell up after ~8 s: a storm ended the
# run in ~15 s, before the quota came back).
RATE_LIMIT_WAIT_S = 2 + 4 + 8 + 16 + 30


def rate_limited(exc: BaseException | None) -> bool:
    """A 429: the endpoint's quota, not an outage."""
    return getattr(exc, "status_code", None) == 429


class Jitter(wait_base):
    """Up to `most` seconds at random, drawn from a generator of its own: tenacity's wait_random
    draws from the global one, the user's: a notebook's random.seed(0) sequence moved on with each
    retry of a judge thread, whatever the notebook was doing meanwhile."""

    def __init__(self, most: float) -> None:
        self.most, self.draws = most, random.Random()

    def __call__(self, retry_state) -> float:
        return self.draws.uniform(0, self.most)


class Wait:
    """Retry-After when the server gives one, else exponential backoff with jitter: a quota
    minute's worth over a call's attempts for a 429, short for the other transient errors."""

    def __init__(self) -> None:
        # 0.25 s (2 s for a 429) doubling to 30 s, plus up to 0.5 s of jitter; spelled so every
        # tenacity >= 8.2 takes it (wait_exponential_jitter's `multiplier` is new in 9.2, and
        # google-genai, the vertex extra, holds tenacity below 9.2)
        self.backoff = wait_exponential(multiplier=0.25, max=30) + Jitter(0.5)
        self.rate_backoff = wait_exponential(multiplier=2, max=30) + Jitter(0.5)

    def __call__(self, state) -> float:
        failed = state.outcome.exception() if state.outcome else None
        hinted = retry_after_s(failed)
        if hinted is not None:
            return min(60.0, hinted)
        return self.rate_backoff(state) if rate_limited(failed) else self.backoff(state)


def gateway_answer(response: Any) -> Any:
    """The response, or NotAChatCompletion when it is not a chat completion at all."""
    if not isinstance(response, ChatCompletion):
        raise NotAChatCompletion(
            f"the endpoint answered {type(response).__name__}, not a chat completion: {str(response)[:200]!r}"
        )
    if response.choices and response.choices[0].message is None:
        raise NotAChatCompletion("the endpoint answered a chat completion whose choice has no message")
    return response


async def post_chat(
    client: AsyncOpenAI,
    body: dict[str, Any],
    timeout_s: float,
    provider: str | None = None,
    form: RequestForm | None = None,
) -> Any:
    """One chat request under a deadline for the whole answer, for every model call the project
    makes: a read timeout alone never fires on a server that drips a byte at a time. The body goes
    through the client's `post` as built: `chat.completions.create` first walks every message
    against the typed parameters, which cost a quarter of the judge thread's CPU at 10k cells.
    The provider (tasks/judging/providers) translates the body to its wire API and the answer back.
    `form` (tasks/judging/params) is how this server wants max_tokens and temperature: a 400 refusing
    one is learned and the call sent again in the supported form."""
    form = form or RequestForm()
    response: Any = None
    while True:  # each parameter is learned once, so at most one more send per refused parameter
        sent = form.apply(body)
        try:
            response = await _post_once(client, sent, timeout_s, provider)
            break
        except openai.BadRequestError as exc:
            if not form.learn(exc, sent):
                raise
    form.observe(response)
    return response


async def _post_once(client: AsyncOpenAI, body: dict[str, Any], timeout_s: float, provider: str | None) -> Any:
    wire = providers.provider(provider)
    try:
        async with asyncio.timeout(timeout_s + 1):  # unlike wait_for, no task of its own per call
            response: Any = await wire.post(client, body, timeout_s)
    except TimeoutError:
        raise DeadlineExceeded(f"no complete answer within {timeout_s:g} s") from None
    return gateway_answer(wire.response(response))
