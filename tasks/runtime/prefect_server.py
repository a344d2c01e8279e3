"""One local Prefect server that every rubricflow command reuses, instead of Prefect's ephemeral
server, which each CLI process would start again (about 10 s of every `ingest` or `score`).

The first command that runs a flow starts the server in the background on 127.0.0.1 and notes
its port and PID in a state file; later commands find it healthy and only point PREFECT_API_URL
at it. It stops itself after RUBRICFLOW_PREFECT_IDLE_S seconds without a request (default 1800),
or with `rubricflow prefect-server --stop`. A user's own PREFECT_API_URL (in the environment, the
active Prefect profile, or a `.env` / `prefect.toml` of the working directory) is always used as is,
and RUBRICFLOW_PREFECT_SERVER=ephemeral keeps Prefect's per-process server.

The server is its owner's only (tasks/runtime/owner.py): Prefect's own basic-auth string, made from a
per-user secret, is required of every request but the health check; requests naming another Host are
refused; CORS allows no other origin.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from rubricflow.errors import TransientError
from rubricflow.settings import endpoint, environment, path_setting, settings
from rubricflow.tasks.runtime import prefect_database
from rubricflow.tasks.runtime.lease import update_locked
from rubricflow.tasks.runtime.owner import loopback_only, owner_secret

IDLE_S = 1800.0
START_TIMEOUT_S = 120.0
# What Prefect's own ephemeral server runs with: no UI, none of the scheduling services.
SERVER_ENV = {
    "PREFECT_UI_ENABLED": "0",
    "PREFECT__SERVER_EPHEMERAL": "1",
    "PREFECT__SERVER_FINAL": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
}


class PrefectServerError(TransientError):
    """The local Prefect server did not start."""


@dataclass(frozen=True)
class ServerState:
    pid: int
    port: int

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"


def state_dir() -> Path:
    given = path_setting(settings().state_dir, "RUBRICFLOW_STATE_DIR")
    base = given or Path(endpoint("XDG_CACHE_HOME") or Path.home() / ".cache") / "rubricflow"
    path = Path(base)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_uid == os.geteuid() and path.stat().st_mode & 0o077:
        path.chmod(0o700)  # servers' and workers' state, logs and command lines: the user's only
    return path


def _file(suffix: str) -> Path:
    """A state file of the server for this process's Prefect home (its database): commands with
    another PREFECT_HOME get a server of their own."""
    home = settings().prefect.home or str(Path.home() / ".prefect")
    key = hashlib.sha256(str(Path(home).expanduser().resolve()).encode()).hexdigest()[:12]
    return state_dir() / f"prefect-server-{key}.{suffix}"


def log_file() -> Path:
    return _file("log")


def state_file() -> Path:
    return _file("json")


# A recorded server whose process lives gets this long to answer /health: on a loaded machine one that
# took over 1 s was taken for dead, and a second server started beside it (the first left running).
ALIVE_HEALTH_S = 5.0


def healthy(state: ServerState | None, timeout_s: float = ALIVE_HEALTH_S) -> bool:
    if state is None:
        return False
    try:
        with urllib.request.urlopen(f"{state.api_url}/health", timeout=timeout_s) as response:  # noqa: S310 (loopback)
            return response.status == 200
    except OSError:
        return False


def _recorded() -> tuple[ServerState, bool] | None:
    """The recorded server, if its process is alive and answers, and whether it requires the secret."""
    try:
        data = json.loads(_file("json").read_text())
        state = ServerState(int(data["pid"]), int(data["port"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (state, bool(data.get("owner_only"))) if _alive(state.pid) and healthy(state) else None


def current() -> ServerState | None:
    """The recorded server, if it is alive, answers and serves its owner only."""
    found = _recorded()
    return found[0] if found and found[1] else None


def auth_string() -> str:
    """Prefect's `user:password` for the shared server: the user's own secret."""
    return "rubricflow:" + owner_secret("prefect-server", state_dir())


def use_shared_server() -> str | None:
    """Point this process's Prefect at the shared server, starting it if needed; call before
    Prefect is imported. Returns the API URL, or None when the user's settings decide."""
    if url := users_api_url():
        check_answers(url)
        return None
    if (settings().prefect_server or "shared") != "shared":
        return None
    _private_home()  # also when the server runs already: a database loosened since, or made before
    state = current() or _start_once()
    os.environ["PREFECT_API_URL"] = _SET_HERE["api_url"] = state.api_url
    os.environ["PREFECT_API_AUTH_STRING"] = auth_string()
    return state.api_url


# The PREFECT_API_URL this process set itself: the shared server's, not the user's. A later call (a
# notebook's, a long-lived process's) looks for the server again: another state folder has its own,
# and a stopped one is started again, where taking the variable for the user's kept the first (or
# refused the call: "your PREFECT_API_URL does not answer").
_SET_HERE: dict[str, str] = {}


def check_answers(url: str, timeout_s: float = 3.0) -> None:
    """A PREFECT_API_URL the user set that nothing answers is one line naming it, before Prefect
    is imported (its client retries, then fails in a traceback of hundreds of lines). Any HTTP answer,
    even 401 from a server that wants a key, counts as answering."""
    import urllib.error

    from rubricflow.errors import InputError

    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/health", timeout=timeout_s):  # noqa: S310 (the user's URL)
            return
    except urllib.error.HTTPError:
        return
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise InputError(
            f"the Prefect API at {url} (PREFECT_API_URL: your environment, .env, prefect.toml or active Prefect "
            f"profile) does not answer ({reason}): start that server, or unset it to use rubricflow's own"
        ) from None


def users_api_url() -> str | None:
    """The PREFECT_API_URL the user set, wherever Prefect would read it from (a profile's too, which the
    local server must not replace): the environment, a `.env` or `prefect.toml` of the working
    directory, or the active profile (not the shared server's URL this process set itself). Read
    without importing Prefect (it costs a second)."""
    import tomllib

    prefect = settings().prefect
    if prefect.api_url and prefect.api_url != _SET_HERE.get("api_url"):
        return prefect.api_url
    try:
        for line in Path(".env").read_text().splitlines():
            name, _, value = line.partition("=")
            if name.strip().removeprefix("export ").strip() == "PREFECT_API_URL" and value.strip():
                return value.strip().strip("'\"")
    except (OSError, UnicodeDecodeError):
        pass
    try:
        if url := tomllib.loads(Path("prefect.toml").read_text()).get("api", {}).get("url"):
            return str(url)
    except (OSError, ValueError):
        pass
    return _profile_api_url()


def _profile_api_url() -> str | None:
    """PREFECT_API_URL of the active Prefect profile (PREFECT_PROFILE, else the file's `active`)."""
    import tomllib

    prefect = settings().prefect
    home = Path(prefect.home or Path.home() / ".prefect").expanduser()
    path = Path(prefect.profiles_path or home / "profiles.toml").expanduser()
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, ValueError):
        return None
    name = prefect.profile or data.get("active") or "ephemeral"
    url = data.get("profiles", {}).get(name, {}).get("PREFECT_API_URL")
    return str(url) if url else None


def users_folder() -> Path:
    folder = state_dir() / "flow-commands"
    folder.mkdir(exist_ok=True)
    return folder


def note_user() -> None:
    """Record this process as a flow command using the shared server until it exits (stopping
    the server under a running `score` would hang it for minutes, with 125 KB of errors)."""
    import atexit

    mark = users_folder() / str(os.getpid())
    mark.write_text(" ".join(sys.argv[1:3]))
    atexit.register(mark.unlink, missing_ok=True)


def users() -> dict[int, str]:
    """The live flow commands using the shared server: PID -> what they run (dead ones forgotten)."""
    found = {}
    for mark in users_folder().iterdir():
        pid = int(mark.name) if mark.name.isdigit() else 0
        if pid and pid != os.getpid() and _alive(pid):
            found[pid] = mark.read_text(errors="replace")
        else:
            mark.unlink(missing_ok=True)
    return found


def idle_seconds() -> float:
    """How long the shared server (and a warm worker) stays up unused."""
    return float(settings().prefect_idle_s or IDLE_S)


def stop() -> ServerState | None:
    """Stop the shared server of this Prefect home (by the PID it recorded); returns what was stopped."""
    state = current()
    if state is not None:
        _end(state.pid)
    _file("json").unlink(missing_ok=True)
    return state


def stop_all() -> int:
    """Stop every shared server recorded in the state folder (any Prefect home); returns how many."""
    stopped = 0
    for path in state_dir().glob("prefect-server-*.json"):
        try:
            data = json.loads(path.read_text())
            state = ServerState(int(data["pid"]), int(data["port"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if _alive(state.pid) and healthy(state):  # the recorded PID still is our server, not a reused one
            _end(state.pid)
            stopped += 1
        path.unlink(missing_ok=True)
    return stopped


def _end(pid: int) -> None:
    os.kill(pid, signal.SIGTERM)
    for _ in range(100):
        if not _alive(pid):
            return
        time.sleep(0.1)


def _start_once() -> ServerState:
    """Start the server unless another command just did (the lock file serialises starters)."""
    found: list[ServerState] = []

    def start(lock_state: dict) -> None:
        recorded = _recorded()
        if recorded and not recorded[1]:
            _end(recorded[0].pid)  # started by an older rubricflow that let anyone in: replaced
        state = current()
        if state is None:
            state = _launch()
            _file("json").write_text(json.dumps({"pid": state.pid, "port": state.port, "owner_only": True}))
        found.append(state)

    update_locked(_file("lock"), {}, start)
    return found[0]


def _home() -> Path:
    return Path(settings().prefect.home or Path.home() / ".prefect").expanduser()


def kept_database() -> Path:
    """The user's copy of an empty database of this Prefect version (tasks/runtime/prefect_database.py):
    in the user's cache, not the state folder, so that every state folder's new home starts from it."""
    from prefect import __version__

    cache = Path(endpoint("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "rubricflow" / "prefect-databases" / f"prefect-{__version__}.db"


def _private_home() -> None:
    """The Prefect home's folder and database the user's only: the server makes them under umask
    077, but a home or a `prefect.db` made before (by `prefect` itself, or an older rubricflow,
    under umask 022) kept every local user's read access to flow parameters and run records."""
    home = _home()
    files = [home / f"prefect.db{end}" for end in ("", "-wal", "-shm", "-journal")]  # SQLite's companions too
    for path, wanted in ((home, 0o700), *((file, 0o600) for file in files)):
        try:
            if path.stat().st_uid == os.geteuid() and path.stat().st_mode & 0o777 != wanted:
                path.chmod(wanted)
        except OSError:  # not there yet (the server makes it, owner-only), or not ours
            continue


def _launch() -> ServerState:
    port = _free_port()
    _private_home()
    log = os.fdopen(os.open(_file("log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab")
    guarded = {
        "PREFECT_SERVER_API_AUTH_STRING": auth_string(),
        "PREFECT_SERVER_API_CORS_ALLOWED_ORIGINS": f"http://127.0.0.1:{port}",  # its own, no other origin
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "rubricflow.tasks.runtime.prefect_server", str(port)],
        env={**_server_env(), **guarded},
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
        umask=0o077,  # its database (prefect.db) and logs the user's only, whatever the caller's umask
    )  # not ended by the command's Ctrl-C: later commands reuse it
    log.close()
    state = ServerState(proc.pid, port)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise PrefectServerError(f"the local Prefect server exited with code {proc.returncode}; see {_file('log')}")
        if healthy(state, 0.5):
            return state
        time.sleep(0.1)
    proc.terminate()
    raise PrefectServerError(
        f"the local Prefect server did not answer within {START_TIMEOUT_S:g} s; see {_file('log')}"
    )


def _server_env() -> dict[str, str]:
    """The starting command's environment without its secrets: the server outlives the command
    and never needs an API key."""
    secret = ("KEY", "TOKEN", "SECRET", "PASSWORD", "AUTH")
    env = {k: v for k, v in environment().items() if not any(word in k.upper() for word in secret)}
    return {**env, **SERVER_ENV}


def _alive(pid: int) -> bool:
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:  # our own child, exited: reaped now
            return False
    except ChildProcessError:
        pass  # another process's child (the usual case: the command that started it has ended)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(port: int, idle_s: float) -> None:
    """The server process: Prefect's API app under uvicorn, for loopback Host headers only, stopped
    after `idle_s` without a request."""
    import uvicorn
    from prefect.server.api.server import create_app

    database = prefect_database.default_database(_home())
    if database is not None:
        prefect_database.seed(database, kept_database())
    app = create_app(ephemeral=True, final=True)
    last = [time.monotonic()]
    unkept = [database] if database is not None else []

    async def touched(scope, receive, send):
        last[0] = time.monotonic()
        if unkept and scope["type"] == "http":  # the first request (the starter's health check): migrated, no run yet
            prefect_database.keep(unkept.pop(), kept_database())
        await app(scope, receive, send)

    server = uvicorn.Server(
        uvicorn.Config(loopback_only(touched), host="127.0.0.1", port=port, log_level="error", lifespan="on")
    )

    def watch() -> None:
        while not server.started and not server.should_exit:  # a slow start (migrations) is not idle time
            time.sleep(0.1)
        last[0] = time.monotonic()
        while not server.should_exit:
            time.sleep(min(5.0, idle_s / 4))
            if time.monotonic() - last[0] > idle_s:
                server.should_exit = True

    threading.Thread(target=watch, daemon=True).start()
    server.run()


if __name__ == "__main__":
    serve(int(sys.argv[1]), idle_seconds())
