"""`rubricflow labels ...`: import labels (`labels import FILE`, also `labels FILE` as before) and plan
which texts to label (`labels plan`)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from typer.core import TyperGroup

from . import calibrate
from .common import WarehouseOpt, err, reading, warehouse_path


class ImportByDefault(TyperGroup):
    """`rubricflow labels FILE ...` (a name that is no subcommand) means `rubricflow labels import FILE ...`."""

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["import", *args]
        return super().resolve_command(ctx, args)


app = typer.Typer(
    cls=ImportByDefault,
    no_args_is_help=True,
    help="Human labels: import them (`labels import FILE`, or `labels FILE`) and plan which texts to label.",
)
app.command("import")(calibrate.labels)


@app.command()
def plan(
    corpus: str = typer.Option(..., "--corpus", "-c"),
    rubric: str = typer.Option(..., "--rubric", "-r", help="The rubric (id, id@version or a hash prefix)."),
    budget: int = typer.Option(..., help="How many texts to label."),
    seed: int = typer.Option(0, help="Seed of the random choice (the same seed, the same plan)."),
    active: bool = typer.Option(
        False, help="Choose uncertain texts more often (panel disagreement, near a pass threshold, logprob spread)."
    ),
    model: str | None = typer.Option(None, help="The judge model, when several scored the rubric."),
    judge_hash: str | None = typer.Option(None, help="The judge setup (a judge hash prefix), when several did."),
    out_file: Path | None = typer.Option(None, "--out", help="Also write the chosen text ids here, one a line."),
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """Choose --budget texts to label, uniformly or actively, and record each judged text's inclusion
    probability in the warehouse (`label_plans`), so that `estimate` weights the labels and stays
    unbiased. Prints the chosen text ids in labelling order."""
    from rubricflow.tasks.stats.estimate import resolve_side
    from rubricflow.tasks.stats.labelling_plan import make_plan
    from rubricflow.warehouse import db

    path = warehouse_path(warehouse)
    with reading(path) as con:
        side = resolve_side(con, corpus, "A", (rubric, model, judge_hash))
    with db.writer(path) as con:
        made = make_plan(con, corpus, side.rubric_hash, side.judge_hash, budget, seed, active)
    if out_file:
        out_file.write_text("".join(f"{t}\n" for t in made.chosen), encoding="utf-8")
    for text_id in made.chosen:
        print(text_id)
    err.print(escape(f"plan {made.plan_id}: {len(made.chosen)} of {len(made.texts)} judged texts ({made.mode})"))
