"""The nightly job's Prefect events: `rubricflow.coverage.dropped` when a rubric's coverage is under
the night's threshold, `rubricflow.drift.detected` when the canary moved more than allowed since the
previous night. Each carries the night's figures as its payload, so an automation (a page, a ticket,
a re-run) acts on them without reading the warehouse. Resource: `rubricflow.corpus.<corpus>`;
related: the run (role `run`)."""

from __future__ import annotations

from typing import Any

NIGHT_FIGURES = (
    "night", "rubric", "texts", "scored_texts", "mean_score", "score_shift", "coverage", "prev_coverage",
    "judged_cells", "failed_cells", "error_rate", "canary_drift", "canary_texts_compared", "prev_night",
)  # fmt: skip


def _emit(event: str, corpus_id: str, run_id: str, payload: dict[str, Any]) -> None:
    from prefect.events import emit_event

    emit_event(
        event=event,
        resource={"prefect.resource.id": f"rubricflow.corpus.{corpus_id}", "prefect.resource.name": corpus_id},
        related=[{"prefect.resource.id": f"rubricflow.run.{run_id}", "prefect.resource.role": "run"}],
        payload=payload,
    )


def announce_night(night: dict, corpus_id: str, run_id: str, min_coverage: float, max_canary_drift: float) -> None:
    """Emit the events a recorded night calls for (none for a good night)."""
    figures = {"corpus_id": corpus_id, "run_id": run_id} | {k: night.get(k) for k in NIGHT_FIGURES}
    if night["coverage"] is None or night["coverage"] < min_coverage:
        _emit("rubricflow.coverage.dropped", corpus_id, run_id, figures | {"min_coverage": min_coverage})
    drift = night.get("canary_drift")
    if drift is not None and drift > max_canary_drift:
        _emit("rubricflow.drift.detected", corpus_id, run_id, figures | {"max_canary_drift": max_canary_drift})
