"""Judge options declared once: every JudgeConfig field (but `model` and `base_url`, which each
command words its own way) becomes a command-line option, its help text the field's docstring, so
a new judge option is one field of JudgeConfig (inspect_ai and Prefect derive their options the same
way). A command decorated with `judge_options` receives the options the user gave as `judge`, a dict
of JudgeConfig fields; an option left out keeps JudgeConfig's default. Run-wide settings
(RunOptions: --shard-size, --max-cells, ...) are generated the same way (`run_options`)."""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable
from typing import Any

import typer

if typing.TYPE_CHECKING:
    from rubricflow.tasks.judging.config import JudgeConfig
    from rubricflow.tasks.judging.run_options import RunOptions

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


def run_fields(exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """The RunOptions fields (run-wide settings) a command offers as options, by name."""
    from rubricflow.tasks.judging.run_options import RunOptions

    return {n: f for n, f in RunOptions.model_fields.items() if n not in exclude}


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
    return _options_into("judge", judge_fields(exclude))


def run_options(*, exclude: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add an option per RunOptions field (but `exclude`) to a command whose `options` parameter
    receives them as a dict of the fields the user set: a new run-wide setting is one field of
    RunOptions, and every command that scores offers it."""
    return _options_into("options", run_fields(exclude))


def _options_into(target: str, fields: dict[str, Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator adding an option per field, gathered into the command's `target` parameter."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        signature, hints = inspect.signature(command), typing.get_type_hints(command)
        own = [p.replace(annotation=hints[p.name]) for p in signature.parameters.values() if p.name != target]
        clash = {p.name for p in own} & set(fields)
        if clash:
            raise TypeError(f"{command.__name__} declares {target} options itself: {sorted(clash)}")

        @functools.wraps(command)
        def with_fields(**given: Any) -> Any:
            chosen = {name: given.pop(name) for name in fields}
            return command(**given, **{target: {k: v for k, v in chosen.items() if v is not None}})

        added = [_parameter(name, field) for name, field in fields.items()]
        with_fields.__signature__ = signature.replace(parameters=own + added)  # type: ignore[attr-defined]
        with_fields.__annotations__ = {p.name: p.annotation for p in own + added}
        return with_fields

    return decorate


def typed(judge: dict) -> JudgeConfig:
    """The judge a flow takes, from the fields `common.judge_settings` checked."""
    from rubricflow.tasks.judging.config import JudgeConfig

    return JudgeConfig(**judge)


def run_settings(options: dict | None) -> RunOptions:
    """The run-wide settings from the options `run_options` generated, checked here: a bad one is a
    one-line usage error."""
    from rubricflow.tasks.judging.config import checked
    from rubricflow.tasks.judging.run_options import RunOptions

    return checked(RunOptions, options or {})
