"""What a failed judge call is: one enum of failure kinds, each with its policy, and the
classification of an exception into a kind. The kind is what a completion row keeps in
`error_kind`; the policy says what the project does about it (retry now, ask again, plan again
in a later run, count against the endpoint). The SQL that re-plans cells or reports an endpoint
that never answered lists the same kinds (plan_cells.sql, run_refusals.sql; a test pins them)."""

from __future__ import annotations

import errno
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

from rubricflow.tasks.judging import verdict_tools

TRANSIENT_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529}
SETUP_STATUS = {401, 402, 403, 404, 405}  # a key, account, model or URL problem: fixed by the user, not by time
MODE_REFUSAL_STATUS = {400, 422, 500, 501}  # how servers say "not this request shape"
MODE_WORDS = {
    "json_schema": ("response_format", "json_schema"),
    "json_object": ("response_format", "json_object", "schema"),
    "tools": ("tool",),
    verdict_tools.MODE: ("tool",),
}


@dataclass(frozen=True)
class Policy:
    """What happens to a call that failed so. `retried`: sent again now (backoff, Retry-After),
    each retry taking one from the run's retry budget; `reasked`: the answer is asked for again
    with a note of what was wrong (also from the retry budget); `replanned`: the landed cell is
    not final, a later run plans it again; `unanswered`: the endpoint gave no usable answer, so
    a run of only these fails; `stops_sending`: with no call answered yet, a few of these stop the
    run sending (the endpoint refuses us or is not there); `lands`: a row of this kind is kept."""

    retried: bool = False
    reasked: bool = False
    replanned: bool = False
    unanswered: bool = False
    stops_sending: bool = False
    lands: bool = True


class FailureKind(StrEnum):
    """Every value `completions.error_kind` takes, with its policy (`FailureKind.X.policy`)."""

    TRANSIENT = "transient"  # 429, 5xx, a timeout, a proxy's page: retried, then planned again
    UNREACHABLE = "unreachable"  # no server answered at all (refused, no such host)
    SETUP = "setup"  # the endpoint refuses us (key, model, URL): planned again once fixed
    BUDGET = "budget"  # the money budget could not cover the call: planned again with a larger one
    STOPPED = "stopped"  # the run was stopping: never lands (unjudged, or landed as transient)
    DETERMINISTIC = "deterministic"  # this request itself is refused (too long, a 400): final
    PARSE = "parse"  # the answer is not JSON
    TRUNCATED = "truncated"  # the answer was cut off at max_tokens
    EMPTY = "empty"  # no choices, no text
    MALFORMED = "malformed"  # an answer of a shape no chat completion has
    REFUSAL = "refusal"  # the model declined: final
    CONTENT_FILTER = "content_filter"  # the answer was withheld by a filter: final

    @property
    def policy(self) -> Policy:
        return POLICIES[self]

    @classmethod
    def replanned(cls) -> list[FailureKind]:
        """The landed kinds a later run plans again (plan_cells.sql)."""
        return [k for k in cls if k.policy.replanned and k.policy.lands]

    @classmethod
    def unanswered(cls) -> list[FailureKind]:
        """The landed kinds that mean the endpoint gave no usable answer (run_refusals.sql)."""
        return [k for k in cls if k.policy.unanswered and k.policy.lands]

    @classmethod
    def reasked(cls) -> list[FailureKind]:
        """The answer kinds asked for again (a refusal or a filtered answer is final)."""
        return [k for k in cls if k.policy.reasked]


POLICIES = {
    FailureKind.TRANSIENT: Policy(retried=True, replanned=True, unanswered=True),
    FailureKind.UNREACHABLE: Policy(retried=True, replanned=True, unanswered=True, stops_sending=True),
    FailureKind.SETUP: Policy(replanned=True, unanswered=True, stops_sending=True),
    FailureKind.BUDGET: Policy(replanned=True),
    FailureKind.STOPPED: Policy(replanned=True, lands=False),
    FailureKind.DETERMINISTIC: Policy(),
    FailureKind.PARSE: Policy(reasked=True),
    FailureKind.TRUNCATED: Policy(reasked=True),
    FailureKind.EMPTY: Policy(reasked=True),
    FailureKind.MALFORMED: Policy(reasked=True),
    FailureKind.REFUSAL: Policy(),
    FailureKind.CONTENT_FILTER: Policy(),
}


class BudgetSpent(Exception):
    """The run's money budget cannot cover the next call; it was not sent."""


class DeadlineExceeded(Exception):
    """The whole answer did not arrive within the call's timeout (transient: retried)."""


class NotSent(Exception):
    """A call the run did not send because the endpoint refused (or never answered) its first calls."""


class Stopped(Exception):
    """A call not sent because its run is stopping (it failed or was interrupted): the cell stays
    unjudged for the next run, while the calls already sent are waited for and landed."""


class NotAChatCompletion(Exception):
    """A 200 whose body is no chat completion (an HTML page, plain text, `message: null`): what a
    proxy or gateway in trouble sends, not the model's answer. Transient: retried now, and the cell
    is planned again by a later run (it was final once, so a re-run after the fix judged nothing)."""


def error_kind(exc: BaseException) -> FailureKind:
    """The kind of a failed call (see FailureKind): a call that reached no server is `unreachable`,
    one the endpoint refuses for who we are is `setup`, one refused for what it asked is
    `deterministic`, and no HTTP answer at all (a malformed URL, an unsupported scheme) is `setup`."""
    import openai  # here, not at the top: a command that calls no model does not load the SDK (0.7 s)

    from rubricflow.tasks.judging.answer_cap import AnswerTooLarge

    if isinstance(exc, AnswerTooLarge):  # the same request would bring the same answer: final
        return FailureKind.DETERMINISTIC
    if isinstance(exc, openai.APIConnectionError) and is_unreachable(exc):
        return FailureKind.UNREACHABLE
    if is_transient(exc):
        return FailureKind.TRANSIENT
    if isinstance(exc, BudgetSpent):
        return FailureKind.BUDGET
    if isinstance(exc, Stopped):
        return FailureKind.STOPPED
    if isinstance(exc, openai.APIStatusError):
        return FailureKind.SETUP if exc.status_code in SETUP_STATUS else FailureKind.DETERMINISTIC
    return FailureKind.SETUP


def causes(exc: BaseException | None) -> Iterator[BaseException]:
    """The exception and what caused it, outermost first (a transport reports a refused connection
    as a timeout; the cause says what happened)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def is_unreachable(exc: BaseException) -> bool:
    """No server answered at all: the connection was refused, or the host or network is unknown."""
    return any(
        isinstance(c, (ConnectionRefusedError, socket.gaierror))
        or (isinstance(c, OSError) and c.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH))
        for c in causes(exc)
    )


def refuses_mode(exc: BaseException, mode: str) -> bool:
    """Whether an error answer says the request's output mode is not supported (a 400, 422, or
    a 500 whose body names response_format or tools): never an outage to retry."""
    import openai  # here, not at the top: a command that calls no model does not load the SDK (0.7 s)

    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in MODE_REFUSAL_STATUS or mode == "text":
        return False
    message = str(exc).lower()
    return any(word in message for word in MODE_WORDS[mode])


def refuses_logprobs(exc: BaseException) -> bool:
    """Whether an error answer says the endpoint does not return logprobs."""
    import openai  # here, not at the top: a command that calls no model does not load the SDK (0.7 s)

    return (
        isinstance(exc, openai.APIStatusError)
        and exc.status_code in MODE_REFUSAL_STATUS
        and "logprob" in str(exc).lower()
    )


def is_transient(exc: BaseException) -> bool:
    """Whether sending the same request again later may succeed (what the transport retries)."""
    import openai  # here, not at the top: a command that calls no model does not load the SDK (0.7 s)

    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, DeadlineExceeded, NotAChatCompletion)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return (
            exc.status_code in TRANSIENT_STATUS
            and not any(refuses_mode(exc, m) for m in MODE_WORDS)
            and not refuses_logprobs(exc)
        )
    return False


def describe(exc: BaseException) -> str:
    """A failed call in one line (at most 500 characters), as its completion row keeps it."""
    if isinstance(exc, (NotSent, Stopped)):
        return str(exc)
    if is_unreachable(exc):  # say what the transport saw, not "Request timed out."
        return f"no connection to the endpoint: {list(causes(exc))[-1]}"[:500]
    status = getattr(exc, "status_code", None)
    text = f"{type(exc).__name__}" + (f" {status}" if status else "") + f": {exc}"
    return text[:500]


def unanswered_advice(error: str) -> str:
    """What to check when no call was answered, by what the endpoint said: a 429 storm is the
    quota, not the key (blaming the key sent users to rotate a good one)."""
    said = error.lower()
    if "429" in said or "rate limit" in said or "ratelimit" in said or "quota" in said:
        return "the endpoint rate-limited every call: lower --rpm / --max-in-flight or wait for its quota"
    if "401" in said or "403" in said or "auth" in said or "api key" in said:
        return "check OPENAI_API_KEY (the endpoint refused it) and --base-url"
    return "check that it runs, and --base-url, --model and OPENAI_API_KEY"


RUN_AGAIN = "run again: these cells are planned again then"  # a run's; rf.Judge's calls are asked again


def refusal_message(
    ok: int,
    unanswered: int,
    unanswered_error: str | None,
    setup: int,
    setup_error: str | None,
    again: str = RUN_AGAIN,
) -> str | None:
    """Why the endpoint gave a set of calls no usable answer, or None when it did: every call
    unanswered (refused, unreachable, transient to the end), or any call refused for a setup reason
    (key, model, URL). One wording for `Warehouse.score`'s run (run_refusals.sql counts its rows) and
    `rf.Judge.evaluate` (its own calls), which both raise it as EndpointRefused."""
    if unanswered and not ok:
        return (
            f"the endpoint refused, never answered or gave no usable answer to every call "
            f"({unanswered} cells; {unanswered_error}); {unanswered_advice(unanswered_error or '')}, then {again}"
        )
    if setup:
        return f"{setup} cells failed for a setup reason ({setup_error}); fix it and {again}"
    return None


def rows_refusal(rows: list[dict]) -> str | None:
    """`refusal_message` over completion rows held in memory (rf.Judge's calls), counted as
    run_refusals.sql counts a run's."""
    kinds = {k.value for k in FailureKind.unanswered()}
    unanswered = [r for r in rows if r.get("error_kind") in kinds]
    setup = [r for r in rows if r.get("error_kind") == FailureKind.SETUP]
    sent = sorted(str(r.get("error")) for r in unanswered if (r.get("attempts") or 0) > 0)
    unsent = sorted(str(r["error"]) for r in unanswered if r.get("error"))  # none sent: why (a breaker open)
    return refusal_message(
        sum(r.get("status") == "ok" for r in rows),
        len(unanswered),
        (sent or unsent or ["no call was sent"])[0],
        len(setup),
        min((str(r.get("error")) for r in setup), default=None),
        again="ask again",
    )
