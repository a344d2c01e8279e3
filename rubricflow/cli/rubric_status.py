"""`rubricflow rubric status`: usage per rubric version and the calibration gate; `rubric lattice`: its codes explained."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from rubricflow.errors import CheckFailed

from .common import WarehouseOpt, out, print_rows, reading


def status(
    min_correlation: float = typer.Option(
        0.7, min=-1.0, max=1.0, help="The calibration threshold of a rubric that states none of its own."
    ),
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """Per rubric version in the warehouse: runs, judge calls, cells scored, last use, and its latest
    calibration against the humans: the latest `calibrate` run of the version (one corpus, one judge
    setup, both shown), the mean of the Pearson r it printed per criterion (each on at least 10 texts).
    A rubric whose latest calibration falls under its threshold (metadata.provenance.calibration_threshold,
    else --min-correlation) is flagged, and the command exits 1."""
    from rubricflow.tasks.pipeline.rubric_status import describe, flagged, judge_of
    from rubricflow.tasks.pipeline.rubric_status import status as read_status

    with reading(warehouse) as con:
        rows = read_status(con, min_correlation)
    print_rows(
        "rubric versions: usage and calibration gate",
        [
            {
                "rubric": f"{r['rubric_id']}@{r['version']}",
                "hash": r["rubric_hash"][:12],
                "runs": r["runs"],
                "judge calls": r["calls"],
                "cells scored": r["ok_cells"],
                "last used": r["last_used"],
                "calibration r": r["pearson"],
                "criteria": r["criteria"],
                "calibrated on": r["calibration_corpus"],
                "by judge": judge_of(r),
                "threshold": r["threshold"],
                "gate": "FLAGGED" if r["flagged"] else "ok" if r["pearson"] is not None else "not calibrated",
            }
            for r in rows
        ],
    )
    low = flagged(rows)
    if low:
        raise CheckFailed("calibration gate: " + "; ".join(describe(r) for r in low))
    out.print(escape(f"{len(rows)} rubric versions; none under its calibration threshold"))


def lattice() -> None:
    """Explain the lattice codes the compiler reports."""
    from rubricflow.rubrics.compiler import LATTICE

    table = Table(title="rubric lattice")
    table.add_column("code")
    table.add_column("meaning")
    for code, meaning in LATTICE.items():
        table.add_row(code, meaning)
    out.print(table)
