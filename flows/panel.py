"""A judge panel as one flow run: the same corpus and rubric scored by several judge setups, each
a scoring subflow (its own judge hash, cells, run and resume), so a panel is one thing to start,
watch and re-run in Prefect."""

# No `from __future__ import annotations` here: a deployment's run builds the flow's parameter model
# from the annotations, and there a string `JudgeConfig` cannot be resolved (every night failed).
from prefect import flow

from rubricflow.flows.score import score_corpus
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.run_options import RunOptions


@flow(name="judge-panel", log_prints=True)
def panel_flow(
    corpus_id: str,
    rubric: str,
    warehouse_path: str,
    judges: list[JudgeConfig],
    options: RunOptions = RunOptions(),
) -> list[dict]:
    """One scoring subflow per judge, in turn; returns each run's summary."""
    return [score_corpus(corpus_id, rubric, warehouse_path, judge, options) for judge in judges]
