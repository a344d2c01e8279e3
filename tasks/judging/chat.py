"""One JSON-mode chat call to any OpenAI-compatible endpoint, retried on transient failures: what
`improve evolve` asks its reflection model and `rubric generate` its drafting model. (Judge calls
have their own path, with output-mode negotiation, rate limits and budgets: tasks/judging/judge.py.)"""

from __future__ import annotations

from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

from rubricflow.tasks.judging.config import JudgeConfig, api_key


def _transient(exc: BaseException) -> bool:
    from openai import APIConnectionError, APIStatusError, APITimeoutError, RateLimitError

    return isinstance(exc, (APIConnectionError, APITimeoutError, RateLimitError)) or (
        isinstance(exc, APIStatusError) and exc.status_code >= 500
    )


@retry(
    retry=retry_if_exception(_transient), stop=stop_after_attempt(4), wait=wait_exponential(0.5, max=8), reraise=True
)
def ask(config: JudgeConfig, messages: list[dict]) -> str | None:
    """The answer's text (JSON mode; the schema is in the prompt)."""
    from openai import OpenAI

    client = OpenAI(
        base_url=config.resolved_base_url(), api_key=api_key(), max_retries=0, timeout=config.resolved_timeout_s()
    )
    response = client.chat.completions.create(
        model=config.model,
        messages=messages,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        response_format={"type": "json_object"},
    )
    return response.choices[0].message.content
