"""The length and sampling parameters a server accepts, learned per run like the output mode.

Reasoning models (OpenAI's o-series, GPT-5) refuse `max_tokens` (they take
`max_completion_tokens`) and any `temperature` but their default, each with a 400 naming the
parameter; and their hidden reasoning tokens count against the completion budget, so an answer
budget alone can end in an empty answer cut off at the limit. A `RequestForm` starts with the
classic form; an unsupported-parameter 400 switches it (the call is sent once more in the
supported form, by `post_chat`), and a server found to reason gets `reasoning_tokens` more room.
"""

from __future__ import annotations

import re
from typing import Any

import openai

COMPLETION_LIMITS = ("max_tokens", "max_completion_tokens")


class RequestForm:
    """How one server wants a request's length and sampling parameters (shared by a run's calls)."""

    def __init__(self, reasoning_tokens: int = 0, negotiates: bool = True):
        self.reasoning_tokens = reasoning_tokens  # room for hidden reasoning, on top of the answer's max_tokens
        # the provider's `reasoning_parameters` capability: False, an API without reasoning models'
        # parameters (Anthropic, Gemini), where a 400 about max_tokens is final, never a form to learn
        self.negotiates = negotiates
        self.limit_param = "max_tokens"
        self.temperature = True  # False: the server takes only its default, so none is sent
        self.reasoning = False  # the server reasons (it refused max_tokens, or reported reasoning tokens)
        self.notes: list[str] = []  # what was learned, for the run's log

    def completion_budget(self, max_tokens: int) -> int:
        """The completion tokens one call may spend: the answer's, plus reasoning room for a reasoning model."""
        return max_tokens + (self.reasoning_tokens if self.reasoning else 0)

    def apply(self, body: dict[str, Any]) -> dict[str, Any]:
        """The body in the form this server accepts (a new dict; the caller's is kept as built)."""
        limit = next((body[k] for k in COMPLETION_LIMITS if body.get(k) is not None), None)
        out = {k: v for k, v in body.items() if k not in COMPLETION_LIMITS}
        if limit is not None:
            out[self.limit_param] = self.completion_budget(limit)
        if not self.temperature:
            out.pop("temperature", None)
        return out

    def learn(self, exc: BaseException, sent: dict[str, Any]) -> bool:
        """Whether `exc` refused a parameter of `sent` that this form now sends otherwise (then the
        call is worth one more try); a refusal of anything else, or one already learned, is False."""
        refused = unsupported_parameter(exc) if self.negotiates else None
        if refused == "max_tokens" and "max_tokens" in sent:
            if self.limit_param == "max_tokens":  # not yet learned by another call of the run
                self.notes.append("the endpoint takes max_completion_tokens, not max_tokens (a reasoning model)")
            self.limit_param, self.reasoning = "max_completion_tokens", True
            return True
        if refused == "temperature" and "temperature" in sent:
            if self.temperature:
                self.notes.append(f"the endpoint refuses temperature {sent['temperature']}: its default is used")
            self.temperature = False
            return True
        return False

    def observe(self, response: Any) -> None:
        """A response that reports reasoning tokens marks the server as reasoning (more room from now on)."""
        details = getattr(getattr(response, "usage", None), "completion_tokens_details", None)
        spent = getattr(details, "reasoning_tokens", None)
        if isinstance(spent, int) and spent > 0 and not self.reasoning:
            self.reasoning = True
            self.notes.append(f"the endpoint spends reasoning tokens: each call gets {self.reasoning_tokens} more")


# A 400's words for "this model takes no such parameter": OpenAI's sentence is one of many (Azure,
# vLLM, LiteLLM and gateways word it otherwise), so the parameter's name is what is matched.
_REFUSED = re.compile(
    r"unsupported|not supported|only the default|not (?:permitted|allowed|accepted|available|valid for)"
    r"|does not (?:accept|support|take)|cannot be used|\binstead\b"
)
_NAMES = ("max_tokens", "temperature")


def unsupported_parameter(exc: BaseException) -> str | None:
    """`max_tokens` or `temperature` when `exc` is a 400 refusing that parameter or its value:
    OpenAI's codes unsupported_parameter / unsupported_value with its `param`, whatever the
    sentence; otherwise refusal words with the parameter named (its `param`, or the name as a word
    of the message). A value the parameter may take but not this large is no refusal of it."""
    if not isinstance(exc, openai.APIStatusError) or exc.status_code != 400:
        return None
    error = exc.body if isinstance(exc.body, dict) else {}
    error = error.get("error", error) if isinstance(error.get("error"), dict) else error
    param, code = error.get("param"), str(error.get("code") or "").lower()
    if code in ("unsupported_parameter", "unsupported_value") and param in _NAMES:
        return param
    message = str(error.get("message") or exc.message).lower()
    for name in _NAMES:
        named = param == name or (param is None and re.search(rf"(?<![\w.]){name}(?!\w)", message))
        hinted = name == "max_tokens" and "max_completion_tokens" in message  # "use max_completion_tokens"
        if named and (_REFUSED.search(message) or hinted):
            return name
    return None
