"""Read back the Prefect events a flow emitted, from the Prefect server it reported to (events are
sent in the background: wait for them)."""

import time


def wait_for_event(name: str, resource_id: str, timeout_s: float = 60):
    from prefect.client.orchestration import get_client
    from prefect.events.filters import EventFilter, EventNameFilter, EventResourceFilter

    wanted = EventFilter(event=EventNameFilter(name=[name]), resource=EventResourceFilter(id=[resource_id]))
    deadline = time.monotonic() + timeout_s
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            found = client.read_events(filter=wanted, limit=5).events
            if found:
                return found[0]
            time.sleep(0.5)
    raise AssertionError(f"no {name} event for {resource_id} reached the Prefect server")
