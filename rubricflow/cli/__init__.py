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
from rich.markup import escape  # noqa: E402

from rubricflow.errors import RubricflowError  # noqa: E402

from . import (  # noqa: E402
    best_of,
    calibrate,
    compare,
    demo,
    doctor,
    estimate,
    export,
    gate,
    goldens,
    improve,
    ingest,
    judge_bridge,
    labelling,
    nightly,
    pairwise,
    panel,
    prefect_server,
    read,
    rebuild,
    report,
    reward,
    rubric,
    rubric_authoring,
    rubric_files,
    rubric_refine,
    rubric_status,
    score,
    server,
    stop,
    view,
)
from .common import debugging, err, machine_error, said_in_one_line  # noqa: E402

app = typer.Typer(help="rubricflow: rubric-driven LLM judging of large text corpora.", no_args_is_help=True)
app.command()(ingest.ingest)
app.command()(score.score)
app.command()(compare.compare)
app.command()(read.runs)
app.command()(read.show)
app.command()(read.query)
app.command()(rebuild.rebuild)
app.add_typer(labelling.app, name="labels")
app.command()(calibrate.calibrate)
app.command()(estimate.estimate)
app.command()(panel.panel)
app.command()(pairwise.pairwise)
app.command("best-of")(best_of.best_of)
app.command()(nightly.nightly)
app.command()(nightly.serve)
app.command("judge-server")(server.judge_server)
app.command("reward-server")(reward.reward_server)
app.command("prefect-server")(prefect_server.prefect_server)
app.command()(view.view)
app.command()(demo.demo)
app.command()(stop.stop)
app.command()(doctor.doctor)
app.command()(gate.gate)
app.command()(export.export)
rubric.app.command()(rubric_files.validate)
rubric.app.command()(rubric_files.convert)
rubric.app.command()(rubric_authoring.generate)
rubric.app.command()(rubric_authoring.review)
rubric.app.command()(rubric_refine.refine)
rubric.app.command()(rubric_status.status)
rubric.app.command("test")(goldens.rubric_test)
app.add_typer(rubric.app, name="rubric")
app.add_typer(report.app, name="report")
app.add_typer(improve.app, name="improve")
app.add_typer(judge_bridge.app, name="judge")


@app.callback()
def options(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks and Prefect's error logs in full."),
) -> None:
    """rubricflow: rubric-driven LLM judging of large text corpora."""
    if debug:
        os.environ["RUBRICFLOW_DEBUG"] = "1"


def main() -> None:
    """Run the command; a RubricflowError prints one line and exits with its code (with --debug,
    its traceback too); anything else is a bug and keeps its traceback."""
    message: str | None
    try:
        refuse_empty_arguments(sys.argv[1:])
        app(prog_name="rubricflow")  # in the warm worker, Click would name it `python -m rubricflow.rubricflow`
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
