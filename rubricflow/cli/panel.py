"""`rubricflow panel`: how far a panel of judges (several models scoring one rubric) agree."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from .common import WarehouseOpt, out, print_rows, reading


def panel(
    corpus: str = typer.Option(..., "--corpus", "-c", help="Corpus id."),
    rubric: str = typer.Option(..., "--rubric", "-r", help="Rubric (one version) the judges scored."),
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """Agreement among every judge setup that scored the rubric on the corpus, per criterion:
    Krippendorff's alpha over all judges, mean pairwise Cohen's kappa, mean and lowest pairwise
    quadratic weighted kappa (one category per step of the criterion's scale: a 0-10 scale in
    halves has 21), and the share of texts the judges split on. The pooled scores are the
    `panel_scores` view."""
    from rubricflow.tasks.stats.panel import panel_agreement

    with reading(warehouse) as con:
        judges, rows = panel_agreement(con, corpus, rubric)
    out.print(escape(f"panel of {len(judges)} judges on {corpus}: {', '.join(judges)}"))
    print_rows(
        "agreement among the judges",
        [
            {
                "criterion": r.criterion_id,
                "judges": r.judges,
                "texts": r.texts,
                "alpha": r.alpha,
                "mean kappa": r.mean_kappa,
                "mean QWK": r.mean_qwk,
                "lowest QWK": r.min_qwk,
                "split": r.split_share,
            }
            for r in rows
        ],
    )
    out.print('pooled scores per text: rubricflow query "SELECT * FROM panel_scores" (mean, median, spread, majority)')
