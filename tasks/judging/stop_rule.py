"""When a run stops sending: an endpoint that refuses it (a key, model or URL problem, no server at
the address) or one that has gone silent (every call times out, or drips its answer slower than
the whole-answer timeout). Garbage answers and 429s end a cell in seconds; a silent endpoint held
each cell for its whole call deadline, and with the concurrency cut to 1 by the timeouts a run of
20 cells was still going after 600 s. The cells not sent land as `NotSent` (a setup failure,
planned again by the next run) and the run fails with the reason in one line."""

from __future__ import annotations

import time

from rubricflow.tasks.judging.failures import DeadlineExceeded, FailureKind, describe

REFUSALS_BEFORE_STOP = 3  # with no call answered yet, the run stops sending after this many refusals
SILENT_CALLS_BEFORE_STOP = 3  # calls in a row that got no answer within the timeout


def is_silence(exc: BaseException) -> bool:
    """A call that got no (complete) answer within its timeout: the server said nothing, or dripped."""
    import openai  # here, not at the top: a command that calls no model does not load the SDK (0.7 s)

    return isinstance(exc, (openai.APITimeoutError, DeadlineExceeded))


class StopRule:
    """The counts one run's stop rule reads: usable answers, refusals, and calls in a row that
    timed out. Silence stops the run once SILENT_CALLS_BEFORE_STOP calls in a row timed out and
    nothing was heard from the server for a whole timeout (a timeout among answers is a slow call,
    retried; a server that hiccups while others answer is not silent)."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.answered = 0  # usable answers
        self.refusals = 0
        self.first_refusal: str | None = None
        self.silent = 0  # calls in a row with no answer within the timeout
        self.last_silence: str | None = None
        self.heard_at = time.monotonic()  # when the server last said anything (or the run began)

    def heard(self) -> None:
        """The server answered a call (an error status too: it is there)."""
        self.silent = 0
        self.heard_at = time.monotonic()

    def sent(self, exc: BaseException | None) -> None:
        """A call (a probe too) came back: answered (`exc` None, or an error status), or silent."""
        if exc is None or not is_silence(exc):
            import openai  # here, not at the top: a command that calls no model does not load the SDK

            if exc is None or isinstance(exc, openai.APIStatusError):
                self.heard()
            return
        self.silent += 1
        self.last_silence = describe(exc)

    def refused(self, exc: BaseException, kind: FailureKind) -> None:
        """Count a judged call that failed so (`kind`: the provider's classification of `exc`)."""
        if kind.policy.stops_sending:
            self.refusals += 1
            self.first_refusal = self.first_refusal or describe(exc)

    def why_not_send(self) -> str | None:
        """Why the next call is not sent, in one line; None while the run may send."""
        if self.refusals >= REFUSALS_BEFORE_STOP and not self.answered:
            return f"not sent: the endpoint refused or never answered the run's first calls ({self.first_refusal})"
        quiet_s = time.monotonic() - self.heard_at
        if self.silent >= SILENT_CALLS_BEFORE_STOP and quiet_s >= self.timeout_s:
            return (
                f"not sent: the endpoint answered none of the last {self.silent} calls within the "
                f"{self.timeout_s:g} s timeout, nothing heard for {quiet_s:.0f} s ({self.last_silence})"
            )
        return None
