"""Files that hold a user's texts and judgments are the user's only, whatever the umask: the
warehouse (and DuckDB's write-ahead log beside it), a corpus's normalised texts, the Prefect
server's database. With the usual umask 022 they were readable by every local user."""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE_FILE = 0o600
PRIVATE_FOLDER = 0o700
PRIVATE_UMASK = 0o077  # what a process rubricflow starts creates its files under (the Prefect server)


def owner_only(*paths: Path) -> None:
    """Each existing path this user owns made 0600 (a file) or 0700 (a folder); others left as they are."""
    for path in paths:
        try:
            info = path.stat()
            if info.st_uid != os.geteuid():
                continue
            wanted = PRIVATE_FOLDER if path.is_dir() else PRIVATE_FILE
            if info.st_mode & 0o777 != wanted:
                path.chmod(wanted)
        except OSError:  # gone meanwhile, or a file system without modes: nothing to protect here
            continue
