"""`rubricflow view`: browse runs, judgment sets, texts, A/B and calibration in the browser."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from .common import WarehouseOpt, fail, out, warehouse_path


def view(
    warehouse: Path | None = WarehouseOpt,
    port: int = typer.Option(8000, help="Port (0: any free one)."),
    host: str = typer.Option(
        "127.0.0.1",
        help="Address to serve on (default: this machine only); 0.0.0.0 serves every interface and answers "
        "to this machine's names and addresses.",
    ),
    allowed_host: list[str] = typer.Option(
        [], "--allowed-host", help="Another name the browser reaches this machine by (a DNS alias); repeatable."
    ),
) -> None:
    """Serve a read-only web view of the warehouse: runs, judgment sets, texts (searchable, filtered
    in SQL), one text with its evidence and pattern hits highlighted under every rubric and judge,
    A/B with click-through to the texts that moved, and calibration; and a labelling page (/label:
    one text at a time, keyboard first, each answer stored at once as a label). No network: every asset is local.
    Only for you: the address it prints carries a secret made for this launch (dead once the viewer
    stops); other users of the machine, and web pages of other sites, are refused."""
    import socket

    import uvicorn

    from rubricflow.tasks.presentation.viewer import launch
    from rubricflow.tasks.runtime.owner import served_hosts, shown_host

    path = warehouse_path(warehouse)
    if not path.exists():
        fail(f"no warehouse at {path}; run `rubricflow ingest` / `rubricflow score` first (or pass -w)")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)  # requests wait in the backlog until the server accepts them
    port = sock.getsockname()[1]
    app, token = launch(path, served_hosts(host, allowed_host), f"rubricflow_view_{port}")
    shown = shown_host(host)
    out.print(
        escape(f"rubricflow view of {path} (read-only; Ctrl-C stops it): http://{shown}:{port}/?token={token}"),
        highlight=False,
        soft_wrap=True,
    )
    note = exposure_note(host)
    if note:
        out.print(escape(note), highlight=False, soft_wrap=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    server.run(sockets=[sock])


def exposure_note(host: str) -> str | None:
    """The line that says who else can reach the viewer: the printed address names this machine,
    so a bind to every interface (0.0.0.0) was never said."""
    from rubricflow.tasks.runtime.owner import LOOPBACK_HOSTS

    if host in LOOPBACK_HOSTS:
        return None
    where = "every interface (0.0.0.0: anyone who reaches this machine)" if host in ("0.0.0.0", "::", "") else host
    return (
        f"note: listening on {where}; plain HTTP: the address's token crosses the network unencrypted "
        "(an SSH tunnel is safer)"
    )
