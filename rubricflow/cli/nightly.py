"""`rubricflow nightly` (one night now) and `rubricflow serve` (the nightly job on a cron schedule)."""

from __future__ import annotations

from pathlib import Path

import typer

from rubricflow.errors import InputError
from rubricflow.settings import settings

from .common import (
    WarehouseOpt,
    judge_settings,
    out,
    print_rows,
    warehouse_path,
)
from .flow_start import start_flows
from .judge_options import judge_options

SourceOpt = typer.Option(..., "--source", help="The corpus file or folder, re-read every night.")
CorpusOpt = typer.Option(..., "--corpus", "-c", help="Corpus id.")
RubricOpt = typer.Option(..., "--rubric", "-r", help="Rubric file or library name (repeatable).")
MinCoverageOpt = typer.Option(0.95, help="Fail the night when a rubric's coverage is under this.")
CanaryOpt = typer.Option(20, help="Corpus texts re-judged every night with the goldens (0: no canary).")
MaxDriftOpt = typer.Option(
    0.1,
    min=0.0,
    help="Emit the Prefect event rubricflow.drift.detected when the canary's mean absolute score change "
    "since the previous night is over this (the night still succeeds).",
)


def night_parameters(
    source: Path,
    corpus: str,
    rubric: list[str],
    model: str | None,
    base_url: str | None,
    min_coverage: float,
    canary: int,
    warehouse: Path | None,
    judge: dict | None,
    max_canary_drift: float = 0.1,
) -> dict:
    """The nightly flow's parameters (what a deployment stores: never the API key)."""
    return {
        "source": str(source.resolve()),
        "corpus_id": corpus,
        "rubrics": list(rubric),
        "warehouse_path": str(warehouse_path(warehouse).resolve()),
        "judge": judge_settings(model, base_url, **(judge or {})),
        "min_coverage": min_coverage,
        "canary_size": canary,
        "max_canary_drift": max_canary_drift,
    }


@judge_options()
def nightly(
    source: Path = SourceOpt,
    corpus: str = CorpusOpt,
    rubric: list[str] = RubricOpt,
    model: str | None = typer.Option(None),
    base_url: str | None = typer.Option(None),
    min_coverage: float = MinCoverageOpt,
    canary: int = CanaryOpt,
    max_canary_drift: float = MaxDriftOpt,
    night: str | None = typer.Option(None, help="Night label (default: today, UTC)."),
    warehouse: Path | None = WarehouseOpt,
    judge: dict | None = None,
) -> None:
    """One night now: ingest if the source changed, score new or changed work, re-judge the canary,
    compare with the previous night; exit 1 when coverage is under --min-coverage."""
    params = night_parameters(
        source,
        corpus,
        rubric,
        model,
        base_url,
        min_coverage,
        canary,
        warehouse,
        judge,
        max_canary_drift,
    )
    start_flows()
    from rubricflow.flows.nightly import nightly_scoring

    from .progress import scoring_progress

    with scoring_progress():
        result = nightly_scoring(**params, night=night)
    print_rows("night", result)


@judge_options()
def serve(
    source: Path = SourceOpt,
    corpus: str = CorpusOpt,
    rubric: list[str] = RubricOpt,
    cron: str = typer.Option("0 2 * * *", help="When to run (cron, UTC)."),
    model: str | None = typer.Option(None),
    base_url: str | None = typer.Option(None),
    min_coverage: float = MinCoverageOpt,
    canary: int = CanaryOpt,
    max_canary_drift: float = MaxDriftOpt,
    warehouse: Path | None = WarehouseOpt,
    judge: dict | None = None,
) -> None:
    """Run the nightly job on this machine on a cron schedule (Prefect `flow.serve`; Ctrl-C stops)."""
    if not settings().prefect.api_url:
        raise InputError(
            "serve needs a Prefect server for its scheduler (the ephemeral one cannot schedule): run "
            "`prefect server start` in another shell, then `export PREFECT_API_URL=http://127.0.0.1:4200/api`; "
            "or run one night now with `rubricflow nightly`"
        )
    from rubricflow.flows.nightly import nightly_scoring

    params = night_parameters(
        source,
        corpus,
        rubric,
        model,
        base_url,
        min_coverage,
        canary,
        warehouse,
        judge,
        max_canary_drift,
    )
    out.print(
        f"serving nightly scoring of {corpus} on cron '{cron}' (UTC); Ctrl-C stops; one line per night follows",
        highlight=False,
        markup=False,
    )
    from .serve_lines import print_each_night

    print_each_night(f"nightly-{corpus}", lambda line: out.print(line, highlight=False, markup=False, soft_wrap=True))
    nightly_scoring.serve(name=f"nightly-{corpus}", cron=cron, parameters=params)
