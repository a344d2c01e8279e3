"""A total deadline for one model call over all its attempts: the per-attempt timeout alone let
a server that drips an answer slower than the timeout hold a call for attempts x timeout plus the
back-off waits (`rubric generate` ran 25 minutes). Every retry loop of the project's model calls
(the judge's `_send`, `chat.ask` for generate / review / refine / evolve) stops before a wait or an
attempt would pass it, and each attempt's timeout is cut to what is left of it.

What counts is the time the call itself spends: its attempts and its back-off waits, not the time
a judged cell waits for rate-limit quota before it is sent (a long run under `--rpm` is not slow).
"""

from __future__ import annotations

import time
from contextlib import contextmanager

from tenacity import RetryCallState
from tenacity.stop import stop_base

MIN_ATTEMPT_S = 0.05  # an attempt with less than this left is not started


class CallDeadline(stop_base):
    """`stop=stop_after_attempt(n) | deadline` and `with deadline.attempt(timeout_s) as t:` around each send."""

    def __init__(self, total_s: float) -> None:
        self.total_s = total_s
        self.used_s = 0.0

    def left_s(self) -> float:
        return self.total_s - self.used_s

    def __call__(self, retry_state: RetryCallState) -> bool:
        """Stop when the wait before the next attempt would leave no time for it; else the wait counts."""
        sleep = retry_state.upcoming_sleep or 0.0
        if self.left_s() - sleep < MIN_ATTEMPT_S:
            return True
        self.used_s += sleep
        return False

    @contextmanager
    def attempt(self, timeout_s: float):
        """The attempt's timeout, cut to what is left; the attempt's time counts, however it ends."""
        started = time.monotonic()
        try:
            yield max(MIN_ATTEMPT_S, min(timeout_s, self.left_s()))
        finally:
            self.used_s += time.monotonic() - started
