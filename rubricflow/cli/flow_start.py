"""Prefect set up for a command that runs a flow: pointed at the local server every command shares
(or the user's own), its settings read from this process's environment, and its console quiet about
rubricflow's own errors, which the CLI says in one line.

Imported only by the commands that run a flow: the others never import Prefect.
"""

from __future__ import annotations

from .common import debugging, said_in_one_line

INTERRUPT_CRASH = "Crash detected! Execution was aborted by an interrupt signal"  # Prefect's, at Ctrl-C


class _RestatesOurError:
    """A console log filter: drops Prefect's records of a flow or task that failed with one of
    rubricflow's own errors (60 lines of traceback), since the CLI prints that error as one line;
    and the "Finished in state Failed(... exception CorpusError: ...)" line Prefect logs after such a
    record (without the exception attached, so it is known by the error's kind seen just before)."""

    def __init__(self) -> None:
        self.kinds: set[str] = set()  # kinds of the errors dropped so far

    def filter(self, record) -> bool:
        if record.exc_info and (said_in_one_line(record.exc_info[1]) or _interrupt(record.exc_info[1])):
            self.kinds.add(type(record.exc_info[1]).__name__)
            return False
        if record.getMessage().startswith(INTERRUPT_CRASH):  # the CLI's own line says it (and what was kept)
            return False
        message = record.getMessage() if self.kinds else ""
        return not (
            message.startswith("Finished in state Failed") and any(f"exception {k}: " in message for k in self.kinds)
        )


def _interrupt(exc: BaseException | None) -> bool:
    """Ctrl-C: the CLI says it in one line (rubricflow.cli.main); Prefect logged its traceback."""
    import asyncio

    return isinstance(exc, KeyboardInterrupt | asyncio.CancelledError)


class _ShutdownNotes:
    """A console log filter: drops Prefect's "Still processing items: N items remaining" notes, which
    its events worker logs while it drains at exit on a loaded machine; nothing a user can act on,
    and after an error they pushed the one-line error off its own line."""

    def filter(self, record) -> bool:
        return not record.getMessage().startswith("Still processing items")


def start_flows() -> None:
    """Call before a command imports or runs a flow. Prefect is pointed at the local Prefect
    server every command shares (started on first use: see tasks/runtime/prefect_server.py), unless the
    user set PREFECT_API_URL; its console shows no traceback for rubricflow's own errors unless
    --debug (the Prefect database keeps them all)."""
    import logging

    from rubricflow.tasks.runtime.prefect_server import note_user, use_shared_server

    shared = use_shared_server()
    if shared:
        note_user()
    import prefect.main  # noqa: F401  (configures Prefect's logging, which the filter is added to)

    _settings_from_environment(no_heartbeats=bool(shared))
    from rubricflow.tasks.judging import telemetry

    telemetry.tracer()  # its provider set before Prefect's flow-run span starts: rubricflow's spans are its children
    if debugging():
        return
    for handler in logging.getLogger().handlers:  # Prefect's console handler; its EventsWorker logs to it too
        for kind in (_RestatesOurError, _ShutdownNotes):
            if not any(isinstance(f, kind) for f in handler.filters):
                handler.addFilter(kind())


def _settings_from_environment(no_heartbeats: bool) -> None:
    """Prefect's settings read again from this process's environment: a command in the warm worker
    runs with Prefect imported under the worker's environment, which holds no secrets (a user's
    PREFECT_API_AUTH_STRING or PREFECT_API_KEY was not sent: 401 from their server). Set as the
    process-global settings, never as an entered context: the API is called from a script, then
    inside `asyncio.run`, threads and Jupyter cells, each its own `contextvars` context, and a
    context entered in one could not be closed in the next (Prefect's "<Token var=<ContextVar
    name='settings'>> was created in a different Context")."""
    import prefect.context

    prefect.context.refresh_global_settings_context()
    if no_heartbeats:  # flow heartbeats feed crash detection services the shared server does not
        # run; ending their thread costs up to a second per flow
        from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY

        read = prefect.context.GLOBAL_SETTINGS_CONTEXT
        settings = read.settings.copy_with_update(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None})
        prefect.context.GLOBAL_SETTINGS_CONTEXT = prefect.context.SettingsContext(
            profile=read.profile, settings=settings
        )
