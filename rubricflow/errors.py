"""The one root of every error rubricflow raises on purpose, and the exit code each kind means.

The CLI catches `RubricflowError` once (in `rubricflow.cli`), prints its message on one line and
exits with `exit_code`; anything else is a bug and keeps its traceback. Codes, as the README
documents them: 0 success, 1 the command ran and a check failed, 2 unusable input or usage.
`transient` says whether trying again later, unchanged, may succeed (a locked warehouse, an
endpoint that is down) or not (a bad file, an unknown rubric).
"""

from __future__ import annotations


class RubricflowError(Exception):
    """Root of rubricflow's own errors; the message names the file, row, field or option at fault."""

    exit_code: int = 2
    transient: bool = False


class InputError(RubricflowError):
    """Unusable input or usage: a missing file, a malformed rubric, an unknown corpus, a bad option (exit 2)."""


class EndpointRefused(InputError):
    """Every call was refused for a reason the user must fix (key, model, URL), or the endpoint gave
    no usable answer at all: raised alike by `Warehouse.score` (the run is recorded as failed and its
    cells are planned again by the next run) and by `rf.Judge.evaluate` (no result to return)."""


class TransientError(RubricflowError):
    """A resource is busy or unreachable right now; the same command may succeed later (exit 2)."""

    transient = True


class CheckFailed(RubricflowError):
    """The command ran and its result fails a check: coverage too low, no match, rows quarantined (exit 1)."""

    exit_code = 1
