"""Who may reach the Dask cluster a run judges on. A Dask scheduler runs whatever its clients send
(`client.run`), and its workers hold the judge's key, so whoever reaches it can read the key and
put forged answers into a live run's queue. A run therefore talks to a scheduler over TLS with
mutual certificates only (`tls://HOST:PORT`: the scheduler and workers accept only a peer whose
certificate the user's own CA signed, so the CA and its keys are the per-user secret).

Plain `tcp://` is refused, on a network address (anyone on the network reaches it) and on
loopback too (every user of this machine reaches a loopback port: a TCP port has no owner), unless
RUBRICFLOW_DASK_INSECURE=1 says the user accepts that (a single-user machine, a test).
"""

from __future__ import annotations

import ipaddress
import stat
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from rubricflow.errors import InputError
from rubricflow.settings import settings

if TYPE_CHECKING:
    from distributed.security import Security

TLS_VARIABLES = {
    "ca": "RUBRICFLOW_DASK_TLS_CA",
    "cert": "RUBRICFLOW_DASK_TLS_CERT",
    "key": "RUBRICFLOW_DASK_TLS_KEY",
}
DASK_CONFIG = {
    "ca": "distributed.comm.tls.ca-file",
    "cert": "distributed.comm.tls.client.cert",
    "key": "distributed.comm.tls.client.key",
}
INSECURE_VARIABLE = "RUBRICFLOW_DASK_INSECURE"


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def cluster_security(address: str) -> Security | None:
    """The TLS settings to reach `address` with, or None for a plain tcp:// scheduler the user
    opted into; anything else is one InputError saying what to do."""
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if parts.scheme == "tls":
        return _tls_security(address)
    if parts.scheme != "tcp":
        raise InputError(f"--cluster {address!r}: use tls://HOST:PORT (see docs/deployment.md)")
    if settings().dask_insecure == "1":
        return None
    host = parts.hostname or ""
    who = "every user of this machine" if is_loopback(host) else f"anyone who reaches {host}"
    raise InputError(
        f"--cluster {address} is plain tcp://: {who} could run code on its workers and read their key. "
        f"Use tls:// with certificates ({', '.join(TLS_VARIABLES.values())}; docs/deployment.md), "
        f"or set {INSECURE_VARIABLE}=1 to accept that"
    )


def _tls_security(address: str) -> Security:
    from dask import config
    from distributed.security import Security

    files = {}
    for part, variable in TLS_VARIABLES.items():
        found = getattr(settings(), variable.removeprefix("RUBRICFLOW_").lower()) or config.get(DASK_CONFIG[part], None)
        if not found:
            raise InputError(f"--cluster {address}: set {variable} (the TLS {part} file; docs/deployment.md)")
        path = Path(found).expanduser()
        if not path.is_file():
            raise InputError(f"--cluster {address}: {variable} names {path}, which is not a readable file")
        files[part] = str(path)
    if stat.S_IMODE(Path(files["key"]).stat().st_mode) & 0o077:
        raise InputError(f"--cluster {address}: the TLS key {files['key']} is readable by other users: chmod 600 it")
    return Security(
        tls_ca_file=files["ca"], tls_client_cert=files["cert"], tls_client_key=files["key"], require_encryption=True
    )
