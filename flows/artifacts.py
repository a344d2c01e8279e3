"""Markdown summaries that each flow run leaves as a Prefect artifact (what the UI shows per run)."""

from __future__ import annotations

import re

from prefect.artifacts import create_markdown_artifact, create_table_artifact

from rubricflow.tasks.presentation.tables import md_table, md_text

# A finished run as tasks/pipeline/score.run_report reads it: summary row, labels, criteria.
Report = tuple[list[dict], list[dict], list[dict]]


def artifact_key(*parts: str) -> str:
    """Prefect keys allow lowercase letters, digits and dashes only."""
    return re.sub(r"[^a-z0-9-]+", "-", "-".join(parts).lower()).strip("-")[:100]


def publish(markdown: str, key: str, description: str) -> None:
    create_markdown_artifact(markdown=markdown, key=key, description=description)


def publish_run_table(report: Report, key: str) -> None:
    """The run's criteria table as the CLI prints it, as a Prefect table artifact (sortable in the
    UI), one row per criterion with the run's counts beside it."""
    run, _, criteria = report
    r = run[0]
    run_id = r["run_id"]
    head = {
        k: r[k] for k in ("run_id", "corpus_id", "rubric", "model", "status", "ok_cells", "failed_cells", "coverage")
    }
    rows = [head | {k: v for k, v in c.items() if k not in head} for c in criteria] or [head]
    create_table_artifact(table=rows, key=key, description=f"rubricflow run {run_id}: criteria")


RUN_EVENT_FIGURES = (
    "run_id", "corpus_id", "rubric", "model", "status", "planned_cells", "ok_cells", "failed_cells",
    "calls", "prompt_tokens", "completion_tokens", "coverage", "wall_s",
)  # fmt: skip


def announce_completed(report: Report) -> None:
    """The Prefect event `rubricflow.run.completed`, the run's figures as its payload, so an
    automation can act on a finished run (resource: rubricflow.run.RUN_ID; related: its corpus)."""
    from prefect.events import emit_event

    run = report[0][0]
    run_id = run["run_id"]
    emit_event(
        event="rubricflow.run.completed",
        resource={"prefect.resource.id": f"rubricflow.run.{run_id}", "prefect.resource.name": run_id},
        related=[{"prefect.resource.id": f"rubricflow.corpus.{run['corpus_id']}", "prefect.resource.role": "corpus"}],
        payload={k: run.get(k) for k in RUN_EVENT_FIGURES},
    )


def run_markdown(report: Report) -> str:
    run, labels, criteria = report
    r = run[0]
    run_id = r["run_id"]
    return (
        f"# Run {run_id}\n\nrubric **{md_text(r['rubric'])}** ({r['rubric_hash'][:12]}), model {md_text(r['model'])}, "
        f"corpus {md_text(r['corpus_id'])}, status **{r['status']}**\n\n"
        + md_table(
            run,
            [
                "planned_cells",
                "skipped_cells",
                "landed_cells",
                "ok_cells",
                "failed_cells",
                "errors",
                "calls",
                "retries",
                "prompt_tokens",
                "completion_tokens",
                "coverage",
                "wall_s",
            ],
        )
        + "\n## Labels\n\n"
        + md_table(labels)
        + "\n## Criteria\n\n"
        + md_table(criteria)
    )
