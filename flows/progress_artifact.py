"""A scoring run's progress as a Prefect progress artifact, updated while the run judges, so a
long run shows how far it is in the Prefect UI (not only in the terminal that started it).

The run's progress events (`tasks/runtime/progress`) only count cells here: they come from the
judge's event loop thread, where no call to the Prefect API may wait. A daemon thread of the run
sends the count every `RUBRICFLOW_PROGRESS_EVERY_S` seconds (default 5) and once at the end."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast
from uuid import UUID

from prefect.artifacts import create_progress_artifact

from rubricflow.settings import settings
from rubricflow.tasks.runtime.progress import listening


def every_s() -> float:
    return float(settings().progress_every_s or 5.0)


class _Counter:
    def __init__(self, cells: int) -> None:
        self.cells = max(cells, 1)
        self.done = 0

    def on_event(self, event: str, payload: Any) -> None:
        if event == "cell":  # judged in this process (or brought back from a cluster's worker)
            self.done += 1
        elif event == "shard":  # judged in another process, counted when its shard is loaded
            self.done += payload.cells

    @property
    def percent(self) -> float:
        return round(min(100.0, 100.0 * self.done / self.cells), 1)


def _send(artifact_id: UUID, percent: float) -> None:
    """One update; a Prefect API that does not answer costs the display, never the run."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import ArtifactUpdate

    try:
        with get_client(sync_client=True) as client:
            client.update_artifact(artifact_id=artifact_id, artifact=ArtifactUpdate(data=percent))
    except Exception as exc:  # noqa: BLE001 (httpx's and Prefect's errors alike)
        logging.getLogger(__name__).debug("progress artifact not updated: %s", exc)


@contextmanager
def run_progress(key: str, cells: int, description: str) -> Iterator[None]:
    """A progress artifact `key` for the block: 0% at its start, the share of `cells` judged every
    few seconds, 100% when the block ends without an error."""
    if cells <= 0:
        yield
        return
    counter = _Counter(cells)
    # called from the flow's own thread, where no event loop runs: Prefect's sync form, which returns the id
    artifact_id = cast(UUID, create_progress_artifact(0.0, key=key, description=description))
    stop = threading.Event()

    def report() -> None:
        sent = 0.0
        while not stop.wait(every_s()):
            if counter.percent != sent:
                sent = counter.percent
                _send(artifact_id, sent)

    thread = threading.Thread(target=report, name="rubricflow-progress-artifact", daemon=True)
    thread.start()
    try:
        with listening(counter.on_event):
            yield
        counter.done = counter.cells
    finally:
        stop.set()
        thread.join()
        _send(artifact_id, counter.percent)
