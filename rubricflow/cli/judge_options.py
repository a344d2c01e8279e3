"""Judge options declared once: every JudgeConfig field (but `model` and `base_url`, which each
command words its own way) becomes a command-line option, its help text the field's docstring, so
a new judge option is one field of JudgeConfig (inspect_ai and Prefect derive their options the same
way). A command decorated with `judge_options` receives the options the user gave as `judge`, a dict
of JudgeConfig fields; an option left out keeps JudgeConfig's default."""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable
from typing import Any

import typer

OWN = ("model", "base_url")  # each command declares these itself (repeatable, per side, ...)
# the fields whose option name is not the field's: kept as the command line has always spelt them
NAMES = {"budget_usd": "--budget", "limits_url": "--limits"}


def option_name(field: str) -> str:
    """--field-name, a unit of seconds left out (timeout_s: --timeout)."""
    return NAMES.get(field, "--" + field.removesuffix("_s").replace("_", "-"))


def judge_fields(exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """The JudgeConfig fields a command offers as options, by name."""
    from rubricflow.tasks.judging.config import JudgeConfig

    return {n: f for n, f in JudgeConfig.model_fields.items() if n not in OWN and n not in exclude}


def _option_type(annotation: Any) -> type:
    """The type the command line parses: the field's own, a choice (Literal) read as text and checked
    by JudgeConfig, and always optional (None: the user left it out)."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    base = (
        args[0] if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1 else annotation
    )
    if typing.get_origin(base) is typing.Literal:
        base = str
    return typing.cast(type, base | None)


def _parameter(name: str, field: Any) -> inspect.Parameter:
    default = field.default
    shown = str(default).lower() if isinstance(default, bool) else default
    flag = option_name(name)
    names = [f"{flag}/--no-{flag[2:]}"] if _option_type(field.annotation) == bool | None else [flag]
    help = " ".join((field.description or "").split()) + ("" if shown is None else f" [default: {shown}]")
    option = typer.Option(None, *names, help=help, show_default=False)
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=_option_type(field.annotation)
    )


def judge_options(*, exclude: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add an option per JudgeConfig field (but `exclude`) to a command whose `judge` parameter
    receives them as a dict of the fields the user set."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        fields = judge_fields(exclude)
        signature, hints = inspect.signature(command), typing.get_type_hints(command)
        own = [p.replace(annotation=hints[p.name]) for p in signature.parameters.values() if p.name != "judge"]
        clash = {p.name for p in own} & set(fields)
        if clash:
            raise TypeError(f"{command.__name__} declares judge options itself: {sorted(clash)}")

        @functools.wraps(command)
        def with_judge(**given: Any) -> Any:
            judge = {name: given.pop(name) for name in fields}
            return command(**given, judge={k: v for k, v in judge.items() if v is not None})

        added = [_parameter(name, field) for name, field in fields.items()]
        with_judge.__signature__ = signature.replace(parameters=own + added)  # type: ignore[attr-defined]
        with_judge.__annotations__ = {p.name: p.annotation for p in own + added}
        return with_judge

    return decorate
