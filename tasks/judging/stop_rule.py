"""When a run stops sending: an endpoint that refuses it (a key, model or URL problem, no server at
the address) or one that has gone silent (every call times out, or drips its answer slower than
the whole-answer timeout). Garbage answers and 429s end a cell in seconds; a silent endpoint held
each cell for its whole call deadline, and with the concurrency cut to 1 by the timeouts a run of
20 cells was still going after 600 s. The cells not sent land as `NotSent` (a setup failure,
planned again by the next run) and the run fails with the reason in one line."""

from __future__ import annotations

from rubricflow.tasks.judging.failures import DeadlineExceeded, FailureKind, describe, is_unreachable

REFUSALS_BEFORE_STOP = 3  # with no call answered yet, the run stops sending after this many refusals
# Repeated calls (a retry, or a one-token probe) in a row that got no whole answer within the timeout,
# with nothing heard between: calls sent together time out together, so a first attempt's timeout is
# no evidence (a server that stalls every call once, then answers the retries, must not stop the run).
SILENT_REPEATS_BEFORE_STOP = 2


def is_silence(exc: BaseException) -> bool:
    """A call that got no (complete) answer within its timeout: the server said nothing, or dripped.
    A refused connection is not silence, even where the transport reports it as a timeout: no
    server was there to be silent (see is_unreachable)."""
    import openai  # here, not at the top: a command that calls no model does not load the SDK (0.7 s)

    return isinstance(exc, (openai.APITimeoutError, DeadlineExceeded)) and not is_unreachable(exc)


class StopRule:
    """The counts one run's stop rule reads: usable answers, refusals, and repeated calls in a row
    that timed out (see SILENT_REPEATS_BEFORE_STOP): a timeout among answers is a slow call, retried."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.answered = 0  # usable answers
        self.refusals = 0
        self.first_refusal: str | None = None
        self.silent = 0  # repeated calls in a row with no whole answer within the timeout
        self.last_silence: str | None = None
        self.unreachable = 0  # repeated calls in a row that found no server (connection refused)
        self.last_unreachable: str | None = None

    def sent(self, exc: BaseException | None, repeat: bool) -> None:
        """A call came back: answered (`exc` None, or an error status: the server is there), or
        silent; `repeat`: a retry of a call, or a probe (one token: no server is that slow)."""
        import openai  # here, not at the top: a command that calls no model does not load the SDK

        if exc is None or isinstance(exc, openai.APIStatusError):
            self.silent = self.unreachable = 0
        elif is_unreachable(exc) and repeat:  # the server went away: said so, not called silent
            self.unreachable += 1
            self.last_unreachable = describe(exc)
        elif is_silence(exc) and repeat:
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
        if self.unreachable >= SILENT_REPEATS_BEFORE_STOP:
            return (
                f"not sent: the endpoint refused the connection to {self.unreachable} repeated calls in a row "
                f"({self.last_unreachable})"
            )
        if self.silent >= SILENT_REPEATS_BEFORE_STOP:
            return (
                f"not sent: the endpoint answered none of {self.silent} repeated calls in a row within the "
                f"{self.timeout_s:g} s timeout ({self.last_silence})"
            )
        return None
