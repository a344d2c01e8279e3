"""What `rubricflow serve` prints while it serves: one line per night that ends, read from the
Prefect server (the night runs in a process of Prefect's runner, whose own logs go elsewhere).

The line is the flow run's state message: the nightly flow ends `Completed` with the night in one
line (flows/nightly.night_line), and a failed night's message is its one-line error."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable


def poll_s() -> float:
    from rubricflow.settings import settings

    return float(settings().serve_poll_s or 5.0)


def _ended_runs(deployment: str, since: dt.datetime) -> list:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        DeploymentFilter,
        DeploymentFilterName,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.client.schemas.sorting import FlowRunSort

    ended = [StateType.COMPLETED, StateType.FAILED, StateType.CRASHED, StateType.CANCELLED]
    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(
            deployment_filter=DeploymentFilter(name=DeploymentFilterName(any_=[deployment])),
            flow_run_filter=FlowRunFilter(state=FlowRunFilterState(type=FlowRunFilterStateType(any_=ended))),
            sort=FlowRunSort.END_TIME_DESC,
            limit=50,
        )
    return [r for r in runs if r.end_time is not None and r.end_time >= since]


def describe(run) -> str:
    state = run.state
    when = run.end_time.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if run.end_time else "?"
    message = " ".join((state.message or "").split()) if state else ""
    return f"{when} {state.name if state else '?'}: {message or run.name}"


def print_each_night(deployment: str, say: Callable[[str], None]) -> threading.Event:
    """Print one line for each run of `deployment` that ends from now on; set the event to stop."""
    stop = threading.Event()
    since = dt.datetime.now(dt.UTC)
    seen: set = set()

    def watch() -> None:
        while not stop.wait(poll_s()):
            try:
                runs = _ended_runs(deployment, since)
            except Exception:  # noqa: BLE001 (the server restarting costs a line's delay, never the serve)
                continue
            for run in reversed(runs):
                if run.id not in seen:
                    seen.add(run.id)
                    say(describe(run))

    threading.Thread(target=watch, name="rubricflow-serve-lines", daemon=True).start()
    return stop
