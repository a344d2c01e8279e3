"""Child processes rubricflow starts (a model server, a judge server in tests) and stops by PID."""

from __future__ import annotations

import os
import signal
import subprocess


def stop(proc: subprocess.Popen | None, grace_s: float = 10.0) -> None:
    """Ask a child process to end (SIGTERM), and end it (SIGKILL) if it has not within `grace_s`."""
    if proc is None or proc.poll() is not None:
        return
    os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
