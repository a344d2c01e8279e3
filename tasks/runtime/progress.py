"""Progress events of a run, for whoever listens (the CLI's progress bar, a notebook).

The flows emit events ("estimate", "plan", "cell", "shard") with `notify`; a caller subscribes for
the length of a block with `listening(callback)`. Nothing listens by default, so a flow run by
Prefect's worker emits into nothing. Events come from the judge's event loop thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

Listener = Callable[[str, Any], None]
_listeners: list[Listener] = []


@contextmanager
def listening(callback: Listener) -> Iterator[None]:
    """Call `callback(event, payload)` for every event emitted inside the block."""
    _listeners.append(callback)
    try:
        yield
    finally:
        _listeners.remove(callback)


def notify(event: str, payload: Any) -> None:
    for callback in list(_listeners):
        callback(event, payload)
