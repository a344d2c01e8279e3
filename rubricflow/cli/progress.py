"""The live progress bar of scoring runs: one bar per run (calls/s, tokens, errors, ETA), fed by
the flows' progress events (`rubricflow.tasks.runtime.progress`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from .common import err


@contextmanager
def scoring_progress() -> Iterator[None]:
    """Show a bar for every scoring run started inside the block."""
    from rubricflow.tasks.runtime.progress import listening

    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]:>6.1f} calls/s  {task.fields[tokens]:>9,} tokens  {task.fields[errors]} errors"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err,
        transient=False,
    )
    state: dict[str, Any] = {"task": None, "tokens": 0, "errors": 0, "calls": 0, "t0": time.monotonic()}

    def on_event(event: str, payload: Any) -> None:
        if event == "estimate":
            line = payload["estimate"].describe(payload["model"])
            if payload["budget"] is not None:
                line += f"; budget ${payload['budget']:,.4f}"
                if payload["estimate"].usd is not None and payload["estimate"].usd > payload["budget"]:
                    line += " (the estimate exceeds it: the run stops when the budget is spent)"
            err.print(line, highlight=False, markup=False)
        elif event == "evolve":
            err.print(
                f"round {payload['round']}: a candidate ({payload['candidate'][:12]}) reworks {payload['criterion']}",
                highlight=False,
                markup=False,
            )
        elif event == "note":
            err.print(f"note: {payload}", highlight=False, markup=False)
        elif event == "shard" and state["task"] is not None:  # shards judged in other processes
            progress.update(state["task"], advance=payload.cells)
        elif event == "plan":
            state.update(tokens=0, errors=0, calls=0, t0=time.monotonic())
            state["task"] = progress.add_task(
                escape(payload["rubric"]), total=payload["cells"], rate=0.0, tokens=0, errors=0
            )
        elif event == "cell" and state["task"] is not None:
            state["calls"] += payload["attempts"]
            state["tokens"] += (payload["prompt_tokens"] or 0) + (payload["completion_tokens"] or 0)
            state["errors"] += payload["status"] != "ok"
            rate = state["calls"] / max(1e-6, time.monotonic() - state["t0"])
            progress.update(state["task"], advance=1, rate=rate, tokens=state["tokens"], errors=state["errors"])

    with listening(on_event), progress:
        yield
