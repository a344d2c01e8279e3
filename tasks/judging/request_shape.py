"""The request as this endpoint takes it: the chat body of one call in the run's output mode, the
once-a-run checks of where the rubric goes (system message or user turn) and which parameter form
the server takes, and the fallback to the next output mode after a refusal. A mixin of the `Judge`
(tasks/judging/judge.py), moved out of it; it reads the judge's config, mode, layout (where the
rubric goes), arrangement (the cache layout: rubric-first or text-first) and form."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
from typing import TYPE_CHECKING, Any

from rubricflow.rubrics.render import (
    arranged,
    decision_criterion,
    decision_levels,
    decision_max_tokens,
    delivered,
    schema_criteria,
    schema_suffix,
    shared_prefix,
)
from rubricflow.tasks.judging import verdict_tools
from rubricflow.tasks.judging.delivery import WITH_SYSTEM, WITHOUT_SYSTEM, dropped
from rubricflow.tasks.judging.delivery import note as dropped_note
from rubricflow.tasks.judging.logprobs import TOP_LOGPROBS
from rubricflow.tasks.runtime.progress import notify

if TYPE_CHECKING:
    from rubricflow.rubrics.compiler import Bundle
    from rubricflow.rubrics.model import Rubric
    from rubricflow.rubrics.render import Rendering
    from rubricflow.tasks.judging.config import JudgeConfig
    from rubricflow.tasks.judging.params import RequestForm
    from rubricflow.tasks.judging.providers.base import Provider

TOOL_NAME = "submit_judgment"


@functools.lru_cache(maxsize=256)
def cache_key(prefix: str) -> str:
    """The prompt_cache_key naming `prefix`: hashed once per prefix (rubric-first, the rubric unit,
    the same for every call: hashing its few kilobytes each request was ~1% of a reward's CPU)."""
    return "rf-" + hashlib.sha256(prefix.encode()).hexdigest()[:24]


def answer_shape(rubric: Rubric, system: str, schema: dict, mode: str) -> tuple[str, str, dict[str, Any]]:
    """How a call in output `mode` asks for its answer: the mode it really goes out in (`decision`,
    one token, whatever was asked, where decision_criterion says so), its system text (the schema
    appended where the API cannot carry it; waza's tool rule in place of the JSON rules) and the
    request's fields for it (response_format, tools). The one source for the judge and `rubric render`."""
    if decision_criterion(rubric, schema_criteria(schema)) is not None:
        return "decision", system, {}  # the system text's one rule says what to answer; no schema rides along
    if mode == "json_schema":
        strict = {"name": "judgment", "schema": schema, "strict": True}
        return mode, system, {"response_format": {"type": "json_schema", "json_schema": strict}}
    if mode == "json_object":  # the schema rides along: servers that constrain by it do, others see it below
        return (
            mode,
            system + schema_suffix(schema, mode),
            {"response_format": {"type": "json_object", "schema": schema}},
        )
    if mode == verdict_tools.MODE:  # waza: the tool the judge calls is its verdict
        system, tools = verdict_tools.request(system, rubric, schema_criteria(schema))
        return mode, system, tools
    if mode == "tools":
        tool = {"name": TOOL_NAME, "parameters": schema, "description": "Submit the judgment."}
        choice = {"type": "function", "function": {"name": TOOL_NAME}}
        return mode, system, {"tools": [{"type": "function", "function": tool}], "tool_choice": choice}
    return mode, system + schema_suffix(schema, mode), {}


class RequestShaping:
    """The Judge's request shaping (see the module's docstring)."""

    # the Judge's state these methods read and set (made in Judge.__init__)
    config: JudgeConfig
    bundle: Bundle
    modes: tuple[str, ...]
    mode: str
    form: RequestForm
    logprobs: bool
    layout: str
    arrangement: str
    rendering: Rendering
    wire: Provider
    _delivery_checked: bool
    _form_probed: bool
    _delivery_lock: asyncio.Lock

    if TYPE_CHECKING:

        async def _create(self, body: dict[str, Any], timeout_s: float | None = None) -> Any: ...

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
        kwargs: dict[str, Any] = {
            "model": c.model,
            "temperature": c.temperature,
            "max_tokens": max_tokens or c.max_tokens,
            **c.sent(),  # the JudgeConfig fields marked SENT (top_p, ...) that are set
        }
        # Repeat samples get seeds of their own: independent draws that a re-run reproduces.
        if c.seed is not None or c.samples > 1:
            kwargs["seed"] = (c.seed or 0) + sample
        mode, system, shape = answer_shape(self.bundle.rubric, system, schema, mode)
        kwargs.update(shape)
        if mode == "decision":  # the level alone, in plain text: its token limits
            decided = decision_criterion(self.bundle.rubric, schema_criteria(schema))
            kwargs.update(self.decision_limits(decision_levels(decided)))  # type: ignore[arg-type]
        if self.logprobs and mode not in ("tools", verdict_tools.MODE):  # a tool call's arguments carry no logprobs
            kwargs.update(logprobs=True, top_logprobs=TOP_LOGPROBS)
        messages = arranged(system, user, self.arrangement, feedback, self.rendering.shared)
        if self.wire.capabilities.prompt_cache_key:  # calls sharing a prefix go to the same cache machine
            kwargs["prompt_cache_key"] = cache_key(shared_prefix(messages))
        kwargs["messages"] = delivered(messages, self.layout)
        return kwargs

    def sent_mode(self, schema: dict, mode: str) -> str:
        """The output mode a call asked in `mode` goes out in: `decision` where the call is decided
        in one token (answer_shape), else `mode`. What the completions row records."""
        return "decision" if decision_criterion(self.bundle.rubric, schema_criteria(schema)) is not None else mode

    def decision_limits(self, levels: list[str]) -> dict[str, Any]:
        """What holds a decision's answer to the levels: on a server that takes a GBNF grammar
        (Capabilities.decision_grammar: llama.cpp) a grammar of the levels and max_tokens of the
        longest level's tokens; elsewhere the prompt's rule and room for a leading space too."""
        if self.wire.capabilities.decision_grammar:
            return {"grammar": levels_grammar(levels), "max_tokens": decision_max_tokens(levels, constrained=True)}
        return {"max_tokens": decision_max_tokens(levels, constrained=False)}

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

    def tools_ignored(self, kwargs: dict[str, Any], used: str, response: Any) -> bool:
        """An answer in text to a request that carried the verdict tools (a server that takes tools
        only in part): under auto, a refusal of the mode, so the run moves to the next (_fall_back)
        and the call is sent again in it."""
        return (
            used == verdict_tools.MODE
            and "tools" in kwargs
            and verdict_tools.ignored(response)
            and self._fall_back(used)
        )


def levels_grammar(levels: list[str]) -> str:
    """A GBNF grammar whose only sentences are the levels (`root ::= "0" | "1" | "2" | "3"`): the
    level's token is the answer's first, with no space, quote or word before it."""
    return "root ::= " + " | ".join(json.dumps(level) for level in levels)
