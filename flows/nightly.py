"""The nightly job: bring the corpus up to date, score it with each rubric (only new or changed
texts and changed rubrics cost calls), re-judge a canary set, record the night, compare it with
the night before, and fail loudly when coverage drops under the threshold."""

# No `from __future__ import annotations` here: a deployment's run builds the flow's parameter model
# from the annotations, and there a string `JudgeConfig` cannot be resolved (every night failed).
import datetime as dt

from prefect import flow, get_run_logger
from prefect.states import Completed

from rubricflow.errors import CheckFailed
from rubricflow.flows.artifacts import artifact_key, publish
from rubricflow.flows.deploy_params import refuse_unset
from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.night_events import announce_night
from rubricflow.flows.score import score_corpus
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.run_options import RunOptions
from rubricflow.tasks.pipeline.nightly import load_canary, record_night, record_source_digest, source_changed
from rubricflow.tasks.pipeline.rubric_status import describe, flagged_runs
from rubricflow.tasks.presentation.tables import md_table, md_text


class CoverageError(CheckFailed):
    """Coverage under the threshold: the night's flow run fails (after its summary is recorded)."""


class CalibrationGateError(CheckFailed):
    """A rubric scored tonight whose latest calibration is under its threshold (Forge's weekly gate)."""


@flow(name="nightly-scoring", log_prints=True)
def nightly_scoring(
    source: str,
    corpus_id: str,
    rubrics: list[str],
    warehouse_path: str,
    judge: JudgeConfig = JudgeConfig(),
    min_coverage: float = 0.95,
    canary_size: int = 20,
    night: str | None = None,
    options: RunOptions = RunOptions(),
    min_correlation: float = 0.7,
    max_canary_drift: float = 0.1,
) -> list[dict]:
    """`judge` (never the API key) and `options` apply to every rubric's run. `night` defaults to today's UTC date.
    `min_correlation`: the calibration threshold of a rubric that states none of its own.
    Coverage under `min_coverage` and canary drift over `max_canary_drift` are announced as Prefect
    events (flows/night_events.py); only the first fails the night."""
    refuse_unset(source=source, corpus_id=corpus_id, rubrics=rubrics, warehouse_path=warehouse_path, judge=judge)
    logger = get_run_logger()
    night = night or dt.datetime.now(dt.UTC).date().isoformat()
    changed, digest = source_changed(source, warehouse_path, corpus_id)
    if changed:
        ingest_flow(source, warehouse_path, corpus_id, announce=False)  # scored below: one run per rubric
        record_source_digest(warehouse_path, corpus_id, digest)
    else:
        logger.info("source %s unchanged since the last ingest: not re-ingested", source)
    nights, run_ids = [], []
    for rubric in rubrics:
        run = score_corpus(corpus_id, rubric, warehouse_path, judge, options)
        canary_run = None
        if canary_size > 0:
            canary = load_canary(warehouse_path, corpus_id, rubric, night, canary_size)
            canary_run = score_corpus(canary, rubric, warehouse_path, judge, options)
        nights.append(record_night(warehouse_path, night, corpus_id, run, canary_run))
        run_ids.append(run["run_id"])
        announce_night(nights[-1], corpus_id, run["run_id"], min_coverage, max_canary_drift)
    gate = [describe(r) for r in flagged_runs(warehouse_path, run_ids, min_correlation)]
    publish(
        f"# Night {md_text(night)}: {md_text(corpus_id)}\n\n"
        + md_table(nights)
        + "".join(f"\n\nCalibration gate: {md_text(line)}" for line in gate),
        artifact_key("nightly", corpus_id),
        f"rubricflow nightly scoring of {corpus_id} on {night}",
    )
    low = [n for n in nights if n["coverage"] is None or n["coverage"] < min_coverage]
    if low:
        raise CoverageError(
            "coverage dropped: "
            + "; ".join(
                f"{n['rubric']}: coverage {n['coverage'] or 0:.1%} < {min_coverage:.1%} "
                f"(previous night {_pct(n['prev_coverage'])}, errors {n['failed_cells']})"
                for n in low
            )
        )
    if gate:
        raise CalibrationGateError("calibration gate: " + "; ".join(gate))
    # the caller gets `nights`; the state message is the night in one line (what `rubricflow serve` prints)
    return Completed(message=night_line(night, corpus_id, nights), data=nights)  # type: ignore[return-value]


def night_line(night: str, corpus_id: str, nights: list[dict]) -> str:
    """The night in one line (the flow run's state message, what `rubricflow serve` prints)."""
    return f"night {night} of {corpus_id}: " + "; ".join(
        f"{n['rubric']} coverage {_pct(n['coverage'])}, {n['scored_texts']}/{n['texts']} texts, "
        f"{n['judged_cells']} judged, {n['failed_cells']} failed, canary drift "
        + ("n/a" if n["canary_drift"] is None else f"{n['canary_drift']:.3f}")
        for n in nights
    )


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1%}"
