"""`rubricflow view`: browse runs, judgment sets, texts, A/B and calibration in the browser."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from .common import WarehouseOpt, fail, out, warehouse_path


def view(
    warehouse: Path | None = WarehouseOpt,
    port: int = typer.Option(8000, help="Port (0: any free one)."),
    host: str = typer.Option("127.0.0.1", help="Address to serve on (default: this machine only)."),
) -> None:
    """Serve a read-only web view of the warehouse: runs, judgment sets, texts (searchable, filtered
    in SQL), one text with its evidence and pattern hits highlighted under every rubric and judge,
    A/B with click-through to the texts that moved, and calibration. No network: every asset is local."""
    import socket

    import uvicorn

    from rubricflow.tasks.presentation.viewer import create_app

    path = warehouse_path(warehouse)
    if not path.exists():
        fail(f"no warehouse at {path}; run `rubricflow ingest` / `rubricflow score` first (or pass -w)")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)  # requests wait in the backlog until the server accepts them
    out.print(
        escape(f"rubricflow view of {path} (read-only; Ctrl-C stops it): http://{host}:{sock.getsockname()[1]}/"),
        highlight=False,
        soft_wrap=True,
    )
    server = uvicorn.Server(uvicorn.Config(create_app(path), log_level="warning"))
    server.run(sockets=[sock])
