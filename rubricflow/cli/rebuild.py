"""`rubricflow rebuild`: recompute the materialised analytics from the raw rows."""

from __future__ import annotations

from pathlib import Path

from rubricflow.errors import InputError

from .common import WarehouseOpt, out, warehouse_path


def rebuild(warehouse: Path | None = WarehouseOpt) -> None:
    """Recompute every materialised analytics table (criterion, node and text scores, disqualifier
    hits) from the raw judgments, texts and labels. Scoring keeps them current by itself; this is
    for a warehouse whose tables you doubt, or one edited by hand."""
    from rubricflow.warehouse import analytics, db

    path = warehouse_path(warehouse)
    if not path.is_file():
        raise InputError(f"no warehouse at {path}; run `rubricflow ingest` / `rubricflow score` first")
    with db.writer(path, check_analytics=False) as con:
        seconds = analytics.rebuild(con)
        counts = con.execute(analytics.COUNTS).fetchone() or (0, 0, 0, 0)
    out.print(
        f"rebuilt the analytics of {path} in {seconds:.1f} s: {counts[0]:,} texts in {counts[1]:,} judgment sets, "
        f"{counts[2]:,} criterion scores, {counts[3]:,} text scores"
    )
