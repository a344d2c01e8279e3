"""One chat call for the project's model paths besides judging: the reflection model of `improve
evolve`, the drafting model of `rubric generate` and `rubric refine`'s proposals. Under
`--system-prompt auto` the first call to an endpoint runs the judge's delivery check
(tasks/judging/delivery.py) and remembers its layout for the process. They share the judge's hardening
(tasks/judging/transport.py, failures.py, answers.py): transport retries with backoff and Retry-After, a deadline on the whole
answer (a server that drips bytes cannot hold a call open), an answer read whatever its shape
(`answer_text`), and error texts scrubbed of secrets before anyone sees them. No second client."""

from __future__ import annotations

import asyncio

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

from rubricflow.errors import TransientError
from rubricflow.rubrics.render import delivered
from rubricflow.tasks.judging.answers import first_choice, text_parts
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.deadline import CallDeadline
from rubricflow.tasks.judging.delivery import WITH_SYSTEM, WITHOUT_SYSTEM, dropped, note
from rubricflow.tasks.judging.failures import describe
from rubricflow.tasks.judging.params import RequestForm
from rubricflow.tasks.judging.providers import client_for, provider
from rubricflow.tasks.judging.secrets import scrub
from rubricflow.tasks.judging.transport import Wait, post_chat
from rubricflow.tasks.judging.verify import AnswerError
from rubricflow.tasks.runtime.progress import notify


class ModelCallFailed(TransientError):
    """The model endpoint gave no answer after the retries (the message says why, scrubbed)."""


PROBE_TIMEOUT_S = 30.0  # a one-token probe; a server that stalls it stalls the call too
LAYOUTS: dict[tuple, str] = {}  # (provider, base URL, model) -> "system" or "user": found once a process


def ask(config: JudgeConfig, messages: list[dict], schema: dict | None = None) -> str:
    """The answer's text (JSON mode; the schema is in the prompt, and rides along in the
    response_format as the judge's json_object mode sends it: llama.cpp constrains by it).
    AnswerError when the answer has no usable text (the caller may ask again), ModelCallFailed
    when no answer came."""
    return asyncio.run(_ask(config, messages, schema))


async def _ask(config: JudgeConfig, messages: list[dict], schema: dict | None = None) -> str:
    timeout_s = config.resolved_timeout_s()
    client = client_for(config.provider, config.resolved_base_url(), timeout_s)
    wire = provider(config.provider)
    # a reasoning model's max_completion_tokens, learned once per call where the API has such models
    form = RequestForm(config.reasoning_tokens, wire.capabilities.reasoning_parameters)
    layout: str = config.system_prompt
    if layout == "auto" and wire.capabilities.system_role != "field":
        layout = await _layout(client, config, form, timeout_s)
    body = {
        "model": config.model,
        "messages": delivered(messages, layout),
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "response_format": {"type": "json_object", **({"schema": schema} if schema else {})},
    }
    deadline = CallDeadline(config.resolved_call_deadline_s())  # over all attempts, not per attempt
    retrying = AsyncRetrying(
        stop=stop_after_attempt(config.max_attempts) | deadline,
        wait=Wait(),
        retry=retry_if_exception(lambda exc: wire.classify(exc).policy.retried),
        reraise=True,
    )
    try:
        async for attempt in retrying:
            with attempt, deadline.attempt(timeout_s) as attempt_s:
                response = await post_chat(client, body, attempt_s, config.provider, form)
        return scrub(answer_text(response)) or ""  # an endpoint that echoes the request echoes the key
    except AnswerError as exc:
        raise AnswerError(exc.kind, scrub(str(exc)) or "") from None
    except Exception as exc:  # an API error, a timeout, no connection: said in one scrubbed line
        raise ModelCallFailed(scrub(f"the model endpoint gave no answer: {describe(exc)}")) from None
    finally:
        await client.close()


async def _layout(client, config: JudgeConfig, form: RequestForm, timeout_s: float) -> str:
    """The endpoint's layout under --system-prompt auto: the judge's delivery check, once a process
    per endpoint and model. A probe that fails or takes past PROBE_TIMEOUT_S leaves the default
    layout, kept too (the call itself meets and reports whatever is wrong, and pays no second wait)."""
    key = (config.provider, config.resolved_base_url(), config.model)
    if key not in LAYOUTS:
        counts: list[int | None] = []
        for probe in (WITH_SYSTEM, WITHOUT_SYSTEM):
            body = {"model": config.model, "messages": probe, "max_tokens": 1, "temperature": 0}
            try:
                response = await post_chat(client, body, min(timeout_s, PROBE_TIMEOUT_S), config.provider, form)
            except Exception:
                LAYOUTS[key] = "system"
                return "system"
            count = getattr(getattr(response, "usage", None), "prompt_tokens", None)
            counts.append(count if isinstance(count, int) else None)
        with_system, without = counts
        LAYOUTS[key] = "user" if dropped(with_system, without) else "system"
        if LAYOUTS[key] == "user":  # said once, as the judge says it (a CLI listening prints it)
            notify("note", note(with_system, without, f"{config.model}'s prompts go"))
    return LAYOUTS[key]


def answer_text(response: object) -> str:
    """The text of a chat completion, whatever shape the endpoint gave it: a non-JSON body, no
    choices, a null message, content as typed parts, a refusal or a cut-off answer is an
    AnswerError with its kind, never a traceback."""
    choice = first_choice(response)
    message = choice.message
    if getattr(message, "refusal", None):
        raise AnswerError("refusal", f"the model refused: {message.refusal}")
    content = text_parts(message.content)
    if choice.finish_reason == "length":  # its head says why (a rambling list, an echoed prompt)
        head = content[:160] if isinstance(content, str) else ""
        raise AnswerError("truncated", f"the answer was cut off at max_tokens: {head!r}")
    if not isinstance(content, str) or not content.strip():
        raise AnswerError("empty", f"the answer has no text (content {type(content).__name__})")
    return content
