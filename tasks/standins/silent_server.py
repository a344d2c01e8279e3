"""A model server that has hung: it accepts every connection and reads the request, then never
answers (`silent`), or sends a 200's headers and then one byte every tenth of a second for ever
(`drip`), which a read timeout alone never ends. For the tests of the run's stop on silence."""

from __future__ import annotations

import socket
import threading


class SilentServer:
    """`with SilentServer("drip") as server:` ... `server.base_url`; `connections` counts the calls."""

    def __init__(self, mode: str = "silent") -> None:
        if mode not in ("silent", "drip"):
            raise ValueError(f"mode is silent or drip, not {mode!r}")
        self.mode = mode
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> SilentServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.thread.join(timeout=5)
        self.sock.close()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            threading.Thread(target=self._hold, args=(conn,), daemon=True).start()

    def _hold(self, conn: socket.socket) -> None:
        """Keep the connection open and say nothing (or drip) until the server stops or the client goes."""
        with conn:
            try:
                if self.mode == "drip":
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n"
                    )
                while not self.stopped.wait(0.1):
                    if self.mode == "drip":
                        conn.sendall(b" ")
            except OSError:  # the client gave up on the call
                return
