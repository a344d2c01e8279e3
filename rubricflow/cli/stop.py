"""`rubricflow stop`: end what flow commands leave running in the background (the local Prefect server
and the warm workers), and the one line that names them, which `rubricflow demo` prints at its end."""

from __future__ import annotations

import typer

from rubricflow.errors import CheckFailed

from .common import out


def left_running() -> str | None:
    """What keeps running after this command, with PIDs and how to stop it; None: nothing does."""
    from rubricflow.tasks.runtime import prefect_server as server
    from rubricflow.tasks.runtime import warm_worker

    parts = []
    if (state := server.current()) is not None:
        parts.append(f"the local Prefect server (pid {state.pid}, {state.api_url})")
    if workers := warm_worker.running():
        parts.append(f"{len(workers)} warm worker(s) (pid {', '.join(map(str, workers))})")
    if not parts:
        return None
    idle = server.idle_seconds()
    return (
        f"left running for the next command: {' and '.join(parts)}; they stop by themselves after "
        f"{idle:g} s idle, or now with: rubricflow stop"
    )


def stop(
    force: bool = typer.Option(False, "--force", help="Stop them even while flow commands use them."),
) -> None:
    """Stop what flow commands leave running in the background: the local Prefect server (of every
    Prefect home) and the warm workers. The next flow command starts them again."""
    from rubricflow.tasks.runtime import prefect_server as server
    from rubricflow.tasks.runtime import warm_worker

    if (users := server.users()) and not force:
        listed = ", ".join(f"{pid} ({what})" for pid, what in sorted(users.items()))
        raise CheckFailed(
            f"{len(users)} flow command(s) are using the local Prefect server: {listed}; "
            "let them finish (or stop them), or pass --force to stop it under them"
        )
    servers, workers = server.stop_all(), warm_worker.stop_all()
    out.print(f"stopped {servers} local Prefect server(s) and {workers} warm worker(s)")
