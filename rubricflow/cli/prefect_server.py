"""`rubricflow prefect-server`: the local Prefect server that flow commands share."""

from __future__ import annotations

import typer

from rubricflow.errors import CheckFailed

from .common import out


def prefect_server(
    stop: bool = typer.Option(False, "--stop", help="Stop it (the next flow command starts it again)."),
    force: bool = typer.Option(False, "--force", help="With --stop: stop it even while flow commands use it."),
    start: bool = typer.Option(False, "--start", help="Start it now, if it is not running."),
) -> None:
    """Show, start or stop the local Prefect server every flow command reuses (started by the first
    one; it stops itself after $RUBRICFLOW_PREFECT_IDLE_S seconds idle, default 1800), and with
    --stop the warm workers that run flow commands with their imports done. A set
    PREFECT_API_URL is used instead, and RUBRICFLOW_PREFECT_SERVER=ephemeral keeps Prefect's
    per-command server."""
    from rubricflow.tasks.runtime import prefect_server as server
    from rubricflow.tasks.runtime import warm_worker

    if stop:
        if (running := server.users()) and not force:
            listed = ", ".join(f"{pid} ({what})" for pid, what in sorted(running.items()))
            raise CheckFailed(
                f"{len(running)} flow command(s) are using the local Prefect server: {listed}; "
                "let them finish (or stop them), or pass --force to stop it under them"
            )
        stopped = server.stop()
        out.print(
            f"stopped the local Prefect server (pid {stopped.pid})"
            if stopped
            else "no local Prefect server was running"
        )
        if workers := warm_worker.stop_all():
            out.print(f"stopped {workers} warm worker(s)")
        return
    if start:
        server.use_shared_server()
    state = server.current()
    if state is None:
        out.print("no local Prefect server is running; the next flow command starts one")
    else:
        out.print(f"local Prefect server: {state.api_url} (pid {state.pid}; log {server.log_file()})")
