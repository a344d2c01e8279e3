"""The per-user secret of the servers rubricflow starts (#21 N3/N4): private, stable, and never
taken from a file someone else could have written or read."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from rubricflow.errors import InputError
from rubricflow.tasks.runtime.owner import host_name, owner_secret


def test_the_secret_is_made_once_private_and_kept(tmp_path):
    first = owner_secret("viewer", tmp_path)
    assert len(first) >= 40 and owner_secret("viewer", tmp_path) == first
    assert (tmp_path / "viewer.secret").stat().st_mode & 0o777 == 0o600
    assert owner_secret("prefect", tmp_path) != first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prefect.secret", "viewer.secret"]  # no temporary left


def test_a_secret_others_can_read_is_refused_by_name(tmp_path):
    (tmp_path / "viewer.secret").write_text("planted")
    os.chmod(tmp_path / "viewer.secret", 0o644)
    with pytest.raises(InputError, match="viewer.secret is readable by others"):
        owner_secret("viewer", tmp_path)


@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("setpriv"), reason="needs root to act as a second user")
def test_a_second_local_user_can_neither_read_the_secret_nor_plant_one():
    tmp_path = Path(tempfile.mkdtemp())  # in /tmp, not pytest's 0700 folder: only the file's mode keeps them out
    os.chmod(tmp_path, 0o755)
    owner_secret("viewer", tmp_path)
    other = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    read = subprocess.run([*other, "cat", str(tmp_path / "viewer.secret")], capture_output=True, text=True)
    assert read.returncode != 0 and "Permission denied" in read.stderr
    planted = tmp_path / "planted"
    planted.mkdir(mode=0o777)
    os.chmod(planted, 0o777)
    subprocess.run([*other, "sh", "-c", f"umask 077; echo theirs > {planted}/viewer.secret"], check=True)
    try:
        with pytest.raises(InputError, match="not yours"):
            owner_secret("viewer", planted)
    finally:
        shutil.rmtree(tmp_path)


@pytest.mark.parametrize(
    ("header", "name"),
    [
        (b"127.0.0.1:8000", "127.0.0.1"),
        (b"LOCALHOST", "localhost"),
        (b"[::1]:9", "[::1]"),
        (b"evil.example", "evil.example"),
    ],
)
def test_the_host_header_is_read_without_its_port(header, name):
    assert host_name({"headers": [(b"host", header)]}) == name


def test_a_host_whose_port_is_not_a_number_names_no_loopback_host():
    """An outside probe: `127.0.0.1:80.evil.com` was read as 127.0.0.1 (split at the first colon)."""
    from rubricflow.tasks.runtime.owner import host_name

    def named(host: str) -> str:
        return host_name({"headers": [(b"host", host.encode())]})

    assert [named(h) for h in ("127.0.0.1:8790", "[::1]:8790", "localhost", "[::1]")] == [
        "127.0.0.1", "[::1]", "localhost", "[::1]"
    ]  # fmt: skip
    assert named("127.0.0.1:80.evil.com") == "127.0.0.1:80.evil.com"
    assert named("[::1].evil.com") == "[::1].evil.com"
