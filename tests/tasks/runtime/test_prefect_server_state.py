"""The shared Prefect server's URL is an environment variable this process sets itself
(`use_shared_server`): a later call in the same process (a notebook, a long-lived process) must
not take it for the user's own PREFECT_API_URL. No Prefect server is started: two stand-ins answer
its health check on 127.0.0.1, as a recorded live server does."""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from rubricflow.tasks.runtime import prefect_server


class _Healthy(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/api/health" else 404)
        self.end_headers()
        self.wfile.write(b"true")

    def log_message(self, *args) -> None:
        pass


class _Standin:
    """A server answering the shared server's health check, recorded as the state folder's server."""

    def __enter__(self) -> _Standin:
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), _Healthy)
        self.thread = threading.Thread(target=self.http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        return self

    def record(self) -> str:
        """Record it as this state folder's server; its API URL."""
        file = prefect_server.state_file()
        file.parent.mkdir(parents=True, exist_ok=True)
        port = self.http.server_address[1]
        file.write_text(json.dumps({"pid": os.getpid(), "port": port, "owner_only": True}))
        return f"http://127.0.0.1:{port}/api"

    def __exit__(self, *exc) -> None:
        self.http.shutdown()
        self.http.server_close()


def _no_start():
    raise AssertionError("the test found no recorded server and would have started one")


def test_the_shared_servers_url_this_process_set_is_not_taken_for_the_users(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no .env or prefect.toml naming a server
    monkeypatch.setattr(prefect_server, "_start_once", _no_start)  # a test that starts no Prefect server
    for name in ("PREFECT_API_URL", "RUBRICFLOW_PREFECT_SERVER", "PREFECT_PROFILE"):
        os.environ.pop(name, None)
    os.environ["PREFECT_PROFILES_PATH"] = str(tmp_path / "no-profiles.toml")
    os.environ["RUBRICFLOW_STATE_DIR"] = str(tmp_path / "first")
    with _Standin() as first, _Standin() as second:
        url = first.record()
        assert prefect_server.use_shared_server() == url
        os.environ["RUBRICFLOW_STATE_DIR"] = str(tmp_path / "second")  # another state folder: its own server
        url = second.record()
        assert prefect_server.use_shared_server() == url  # before: None (the first's URL taken for the user's)
    # that server stopped (`rubricflow prefect-server --stop`) and another started: it is found, where
    # before the call was refused ("your PREFECT_API_URL does not answer: unset it")
    with _Standin() as third:
        later = third.record()
        assert prefect_server.use_shared_server() == later != url
    assert prefect_server.users_api_url() is None  # the variable is this process's, not the user's
