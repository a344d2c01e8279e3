"""A server rubricflow starts serves its owner only (#21): the viewer and the shared Prefect
server listen on 127.0.0.1, answer only requests whose Host header names this machine's loopback
(so a web page that rebinds its DNS name to 127.0.0.1 gets nothing), send no permissive CORS, and
require a per-user secret kept in a 0600 file of the user's state folder (as notebook servers do).

Another local user can reach the port but cannot read the secret; a browser tab of another origin
cannot send it.
"""

from __future__ import annotations

import hmac
import os
import secrets
import socket
import stat
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

from rubricflow.errors import InputError

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})
WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})


def is_loopback(host: str) -> bool:
    """Whether a bind address is this machine's loopback: IPv6's `::1` bare or in brackets too."""
    return host in LOOPBACK_HOSTS or host.strip("[]") == "::1"


Asgi = Callable[[dict, Callable, Callable], Awaitable[None]]


def owner_secret(name: str, folder: Path) -> str:
    """The secret `name` of this user, made on first use: random, in `folder/name.secret`, mode 0600.
    A file someone else owns or others can read is refused by name, never used."""
    path = folder / f"{name}.secret"
    if not path.exists():
        _create(path)
    info = path.stat()
    if info.st_uid != os.getuid() or info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise InputError(
            f"{path} is readable by others or not yours (mode {stat.filemode(info.st_mode)}): "
            "remove it and a new secret is made"
        )
    return path.read_text().strip()


def _create(path: Path) -> None:
    """Write the secret to a private temporary file and link it in place: two processes starting at
    once end up with one secret, and no one ever reads a half-written file."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, secrets.token_urlsafe(32).encode())
    finally:
        os.close(fd)
    try:
        os.link(temporary, path)
    except FileExistsError:
        pass  # another process made it first: use theirs
    finally:
        temporary.unlink()


def same_secret(given: str | None, secret: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), secret.encode())


def host_name(scope: dict) -> str:
    """The Host header's name without its port, lower case ('' when absent)."""
    raw = dict(scope.get("headers") or ()).get(b"host", b"").decode("latin-1").strip().lower()
    if raw.startswith("["):  # an IPv6 literal: [::1], [::1]:8790
        end = raw.find("]") + 1
        name, port = raw[:end], raw[end:]
    else:
        name, colon, port = raw.partition(":")
        port = colon + port
    if port and not (port[0] == ":" and port[1:].isdigit()):
        return raw  # `127.0.0.1:80.evil.com` names no loopback host
    return name


def loopback_only(app: Asgi, hosts: frozenset[str] = LOOPBACK_HOSTS) -> Asgi:
    """`app`, answering only requests whose Host header is one of `hosts` (DNS rebinding gets a 403)."""

    async def guarded(scope, receive, send):
        if scope["type"] in ("http", "websocket") and host_name(scope) not in hosts:
            await refuse(scope, send, 403, f"this server answers only to {', '.join(sorted(hosts))}")
            return
        await app(scope, receive, send)

    return guarded


def served_hosts(bind: str, allowed: Iterable[str] = ()) -> frozenset[str]:
    """The Host names a server bound to `bind` answers to (#41): loopback's, the bound address,
    those the user allowed by name, and, bound to every interface, this machine's names and addresses
    (a 403 to every other machine was all `--host 0.0.0.0` gave)."""
    names = {*LOOPBACK_HOSTS, bind, *allowed}
    if bind in WILDCARD_BINDS:
        names |= machine_names()
    return frozenset(_as_host(n) for n in names if n and n not in WILDCARD_BINDS)


def machine_names() -> set[str]:
    """This machine's host name, its fully qualified name, and the addresses they resolve to."""
    names = {socket.gethostname(), socket.getfqdn()}
    for name in list(names):
        try:
            names |= {str(info[4][0]) for info in socket.getaddrinfo(name, None)}
        except OSError:
            continue  # a name that does not resolve is still accepted as itself
    return names


def shown_host(bind: str) -> str:
    """The name to print in an address: the bound one, or this machine's name for a wildcard bind
    (`http://0.0.0.0:...` opens nothing on another machine)."""
    return socket.getfqdn() if bind in WILDCARD_BINDS else bind


def _as_host(name: str) -> str:
    """`name` as a Host header spells it: lower case, an IPv6 address in brackets."""
    name = name.strip().lower()
    return f"[{name}]" if ":" in name and not name.startswith("[") else name


async def refuse(scope: dict, send, status: int, why: str) -> None:
    """A plain-text refusal (or a closed websocket), no CORS header."""
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    body = (why + "\n").encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
