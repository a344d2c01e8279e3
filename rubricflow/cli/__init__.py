"""The `rubricflow` command: one module per command group, each parsing its options, calling a
flow or a function, and printing. This module assembles them and owns the one place where
rubricflow's own errors become a message and an exit code (`main`).

Command modules import Prefect, DuckDB and the heavy libraries inside the commands that need
them, so `rubricflow --help` and the `rubric` commands start without a Prefect server.
"""

from __future__ import annotations

import os
import sys

# Set before Prefect is imported: no telemetry (there is no network here), a patient ephemeral server.
# Set before numpy is: OpenBLAS's thread pool on small problems (a report's 600 bootstrap Bradley-Terry
# fits) spends ~10x the single-threaded time waking its threads on a busy machine (report pairwise:
# 124 s against 39 s at load 17 on two cores); rubricflow's matrices are small, DuckDB does the heavy work.
ENV_DEFAULTS = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "OPENBLAS_NUM_THREADS": "1",
}


def set_env_defaults() -> None:
    for name, value in ENV_DEFAULTS.items():
        os.environ.setdefault(name, value)


set_env_defaults()

import typer  # noqa: E402

# The commands, in the order `rubricflow --help` lists them: name, the module under rubricflow.cli, and
# the function (or, for a group, the module's Typer `app`). A command's module is imported only when
# that command runs (`build_app`): importing all ~30 of them, with the judge options' pydantic models,
# cost every non-flow command ~0.5 s of CPU before it did anything.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("ingest", "ingest", "ingest"),
    ("score", "score", "score"),
    ("compare", "compare", "compare"),
    ("runs", "read", "runs"),
    ("show", "read", "show"),
    ("query", "read", "query"),
    ("rebuild", "rebuild", "rebuild"),
    ("labels", "labelling", "app"),
    ("calibrate", "calibrate", "calibrate"),
    ("estimate", "estimate", "estimate"),
    ("panel", "panel", "panel"),
    ("pairwise", "pairwise", "pairwise"),
    ("best-of", "best_of", "best_of"),
    ("nightly", "nightly", "nightly"),
    ("serve", "nightly", "serve"),
    ("judge-server", "server", "judge_server"),
    ("reward-server", "reward", "reward_server"),
    ("prefect-server", "prefect_server", "prefect_server"),
    ("view", "view", "view"),
    ("demo", "demo", "demo"),
    ("stop", "stop", "stop"),
    ("doctor", "doctor", "doctor"),
    ("gate", "gate", "gate"),
    ("export", "export", "export"),
    ("rubric", "rubric", "app"),
    ("report", "report", "app"),
    ("improve", "improve", "app"),
    ("judge", "judge_bridge", "app"),
)
# The `rubric` group's commands that live in other modules: (module, function, name or None).
RUBRIC_COMMANDS = (
    ("rubric_files", "validate", None),
    ("rubric_files", "convert", None),
    ("rubric_authoring", "generate", None),
    ("rubric_authoring", "review", None),
    ("rubric_refine", "refine", None),
    ("rubric_status", "status", None),
    ("rubric_status", "lattice", None),
    ("goldens", "rubric_test", "test"),
)
HELP = "rubricflow: rubric-driven LLM judging of large text corpora."


def build_app(only: str | None = None) -> typer.Typer:
    """The `rubricflow` app with every command, or with only the command `only` (the one a command
    line runs: its help, options and errors are the same as in the whole app's)."""
    from importlib import import_module

    built = typer.Typer(help=HELP, no_args_is_help=True)
    built.callback()(options)
    for name, module, attr in COMMANDS:
        if only is not None and name != only:
            continue
        target = getattr(import_module(f"{__name__}.{module}"), attr)
        if attr != "app":
            built.command(None if name == attr else name)(target)
            continue
        if name == "rubric":
            _attach_rubric_commands(target)
        built.add_typer(target, name=name)
    return built


def _attach_rubric_commands(group: typer.Typer) -> None:
    """Add the `rubric` commands kept in their own modules to its group, once a process."""
    from importlib import import_module

    if getattr(group, "_rubricflow_attached", False):
        return
    for module, attr, name in RUBRIC_COMMANDS:
        group.command(name)(getattr(import_module(f"{__name__}.{module}"), attr))
    group._rubricflow_attached = True  # type: ignore[attr-defined]


def command_named(args: list[str]) -> str | None:
    """The command a command line runs, when the app needs no other to run it: its first word, with
    no option before it but --debug (`--help` alone lists every command) and no shell completion."""
    if any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        return None
    for arg in args:
        if arg == "--debug":
            continue
        return arg if any(arg == name for name, _, _ in COMMANDS) else None
    return None


def __getattr__(name: str) -> typer.Typer:
    """`rubricflow.cli.app`: the whole app, built when first asked (tests and the warm worker ask)."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    whole = globals()["app"] = build_app()
    return whole


def options(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks and Prefect's error logs in full."),
) -> None:
    """rubricflow: rubric-driven LLM judging of large text corpora."""
    if debug:
        os.environ["RUBRICFLOW_DEBUG"] = "1"


def main() -> None:
    """Run the command; a RubricflowError prints one line and exits with its code (with --debug,
    its traceback too); anything else is a bug and keeps its traceback."""
    from rubricflow.errors import RubricflowError

    from .common import debugging, machine_error, said_in_one_line

    message: str | None
    try:
        refuse_empty_arguments(sys.argv[1:])
        build_app(command_named(sys.argv[1:]))(
            prog_name="rubricflow"
        )  # in the warm worker, Click would name it `python -m rubricflow.rubricflow`
        return
    except (KeyboardInterrupt, SystemExit) as exc:  # Ctrl-C: a run records itself `interrupted`; no traceback
        if debugging() or not _interrupted(exc):
            raise
        message, code = "interrupted: what landed is kept; run the command again to go on", 130
    except Exception as exc:  # noqa: BLE001  # anything but the errors said in one line is re-raised
        message = machine_error(exc)
        if debugging() or (message is None and not said_in_one_line(exc)):
            raise
        if message is None:
            message = str(exc) if isinstance(exc, RubricflowError) else f"{exc.filename}: {exc.strerror or exc}"  # type: ignore[attr-defined]
        code = getattr(exc, "exit_code", 2)
        _release_frames(exc)
    # Exit outside the handler: the error's traceback (and the frames and connections it holds)
    # is released first, so nothing is reported leaked at interpreter shutdown.
    from rich.markup import escape

    from .common import err

    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)  # a path is never cut
    sys.exit(code)


def _interrupted(exc: BaseException) -> bool:
    """Ctrl-C, as raised or as Typer ends it: `Exit(130)` from the KeyboardInterrupt, which left the
    command silent (no line said what was kept) while Prefect logged the crash."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def refuse_empty_arguments(args: list[str]) -> None:
    """No rubricflow argument is meaningfully empty, and an empty path is the current folder to
    the command (`rubricflow ingest ""` read the working folder, `.venv` included): an argument or
    option given as "" (an unset shell variable) is refused before any work."""
    from rubricflow.errors import InputError

    for i, arg in enumerate(args):
        option, _, value = arg.partition("=") if arg.startswith("--") and "=" in arg else ("", "", arg)
        if value.strip():
            continue
        named = option or (args[i - 1] if i and args[i - 1].startswith("-") else "")
        before = " ".join(args[: next((j for j, a in enumerate(args[:i]) if a.startswith("-")), i)])
        what = f"option {named}" if named else f"an argument of `rubricflow {before}`"
        raise InputError(f"{what} is empty (an unset variable?): give it a value; an empty path would be this folder")


def _release_frames(exc: BaseException | None) -> None:
    """Clear the locals of every frame the error's traceback (and its causes') hold: Prefect keeps
    the exception in the failed run's state, and a DuckDB connection left in a frame was reported
    "leaked" by nanobind in ~40 lines at exit."""
    import traceback

    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        traceback.clear_frames(exc.__traceback__)
        exc = exc.__cause__ or exc.__context__
