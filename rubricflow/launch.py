"""The `rubricflow` executable. A command that runs a flow goes to the warm worker when one is
ready (tasks/runtime/warm_worker.py: it has Prefect and the flows imported already); every other command,
and a flow command with no worker yet, runs in this process. `python -m rubricflow.launch
--serve-warm-worker SOCKET KEY` is the worker itself."""

from __future__ import annotations

import sys
from pathlib import Path

# What a flow command imports beside its own CLI module (prewarm() adds those), imported once by the
# worker. Not polars or statsmodels (which imports polars): polars starts threads when imported, and
# the worker must fork with none but its own.
PREWARM_LIBRARIES = (
    "prefect.main",
    "rubricflow.flows.ingest",
    "rubricflow.flows.score",
    "rubricflow.flows.compare",
    "rubricflow.flows.panel",
    "rubricflow.flows.nightly",
    "pyarrow.parquet",
    "fastapi.encoders",  # Prefect imports it to serialise every flow run's parameters: ~0.3 s a command
    "pandas",
    "scipy.stats",
)


def prewarm() -> tuple[str, ...]:
    """The modules the warm worker imports: the CLI, each flow command's own module (rubricflow.cli
    imports a command's module only when it runs; which module is the CLI's COMMANDS table's word),
    and the libraries they use."""
    from rubricflow.cli import COMMANDS
    from rubricflow.tasks.runtime.flow_commands import FLOW_COMMANDS

    commands = tuple(f"rubricflow.cli.{module}" for name, module, _ in COMMANDS if name in FLOW_COMMANDS)
    return ("rubricflow.cli", *commands, *PREWARM_LIBRARIES)


def main() -> None:
    from rubricflow.tasks.runtime.flow_commands import FLOW_COMMANDS, WORKER_FLAG

    argv = sys.argv[1:]
    if argv[:1] != [WORKER_FLAG] and not FLOW_COMMANDS & set(argv):
        from rubricflow.cli import main as run_command

        run_command()  # no flow to hand over (warm_worker.wanted would say no): the worker's client is not imported
        return
    from rubricflow.errors import RubricflowError
    from rubricflow.tasks.runtime import warm_worker

    if argv[:1] == [warm_worker.WORKER_FLAG]:
        warm_worker.serve(Path(argv[1]), argv[2], prewarm, run_forked)
        return
    if warm_worker.wanted(argv):
        try:
            code = warm_worker.run(argv)
        except (OSError, RubricflowError):
            code = None  # no socket folder, or no Prefect server: the command runs here and says what is wrong
        if code is not None:
            sys.exit(code)
    from rubricflow.cli import main as run_here

    run_here()


def run_forked(argv: list[str]) -> None:
    """A command in a runner forked from the worker: the environment defaults the CLI sets on import,
    and consoles that fit the caller's terminal, not the worker's log file."""
    from rubricflow.cli import common, set_env_defaults
    from rubricflow.cli import main as run_here

    set_env_defaults()
    # In place: modules imported `out` and `err` by name; re-made for the caller's terminal.
    common.out.__init__()  # type: ignore[misc]
    common.err.__init__(stderr=True)  # type: ignore[misc]
    run_here()


if __name__ == "__main__":
    main()
