"""`rubricflow labels ...`: import labels (`labels import FILE`, also `labels FILE` as before) and plan
which texts to label (`labels plan`)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from typer.core import TyperGroup

from .calibrate import labels as import_labels
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
app.command("import")(import_labels)


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
    if out_file is not None:
        refuse_unwritable(out_file)  # before the plan is recorded: a plan whose ids went nowhere is not made
    with reading(path) as con:
        side = resolve_side(con, corpus, "A", (rubric, model, judge_hash))
    with db.writer(path) as con:
        made = make_plan(con, corpus, side.rubric_hash, side.judge_hash, budget, seed, active)
    if out_file:
        out_file.write_text("".join(f"{t}\n" for t in made.chosen), encoding="utf-8")
    for text_id in made.chosen:
        print(text_id)
    err.print(escape(f"plan {made.plan_id}: {len(made.chosen)} of {len(made.texts)} judged texts ({made.mode})"))


def refuse_unwritable(out_file: Path) -> None:
    """An --out that cannot be written (a folder, a missing or read-only folder) refused in one line."""
    import os

    from rubricflow.errors import InputError

    if out_file.is_dir():
        raise InputError(f"--out {out_file} is a folder: name a file to write the chosen text ids to")
    if not out_file.parent.is_dir():
        raise InputError(f"--out {out_file}: no folder {out_file.parent}")
    if not os.access(out_file.parent, os.W_OK) or (out_file.exists() and not os.access(out_file, os.W_OK)):
        raise InputError(f"--out {out_file}: not writable")


def _queue(con, corpus: str, rubric: str, model: str | None, judge_hash: str | None):
    """(the side, its criteria with their scale points, the queue's text ids) of a rubric on a corpus."""
    from rubricflow.tasks.presentation.labelling import scale_points
    from rubricflow.tasks.stats.estimate import resolve_side
    from rubricflow.warehouse import db

    side = resolve_side(con, corpus, "A", (rubric, model, judge_hash))
    criteria = [{**r, "points": scale_points(r)} for r in db.fetch(con, "label_criteria.sql", rubric=side.rubric_hash)]
    queue = db.fetch_tuples(con, "label_queue.sql", corpus=corpus, rubric=side.rubric_hash, judge_hash=side.judge_hash)
    return side, criteria, [r[0] for r in queue]


@app.command("export-ls")
def export_ls(
    corpus: str = typer.Option(..., "--corpus", "-c"),
    rubric: str = typer.Option(..., "--rubric", "-r", help="The rubric (id, id@version or a hash prefix)."),
    out_file: Path = typer.Option(..., "--out", help="The Label Studio tasks (JSON) to write."),
    config: Path | None = typer.Option(None, help="Also write Label Studio's labelling config (XML) here."),
    model: str | None = typer.Option(None, help="The judge model, when several scored the rubric."),
    judge_hash: str | None = typer.Option(None, help="The judge setup (a judge hash prefix), when several did."),
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """Write the labelling queue (the newest plan's chosen texts, or every judged text) as Label
    Studio tasks, and with --config the labelling config: one single choice a criterion, its
    choices the scale's points. Import the annotations back with `labels import-ls`."""
    import json

    from rubricflow.tasks.presentation import label_studio
    from rubricflow.warehouse import db

    with reading(warehouse_path(warehouse)) as con:
        _, criteria, queue = _queue(con, corpus, rubric, model, judge_hash)
        found = {r["text_id"]: r for r in db.fetch(con, "label_studio_texts.sql", corpus=corpus, ids=queue)}
    out_file.write_text(json.dumps(label_studio.tasks([found[t] for t in queue]), indent=1), encoding="utf-8")
    if config:
        config.write_text(label_studio.config([c for c in criteria if c["points"]]), encoding="utf-8")
    err.print(escape(f"{len(queue)} Label Studio tasks written to {out_file}"))


@app.command("import-ls")
def import_ls(
    path: Path = typer.Argument(..., help="Label Studio's JSON export of the tasks `labels export-ls` wrote."),
    corpus: str = typer.Option(..., "--corpus", "-c"),
    rubric: str = typer.Option(..., "--rubric", "-r", help="The rubric whose criteria the controls name."),
    rater: str | None = typer.Option(None, help="Store every answer under this rater (default: each annotator)."),
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """Import a Label Studio JSON export as labels: each annotation's answers (a choice, rating or
    number that is a point of the criterion's scale) under its annotator's name (email, or
    label-studio-ID), or --rater; skipped (cancelled) annotations are left out."""
    import polars as pl

    from rubricflow.errors import InputError
    from rubricflow.tasks.presentation import label_studio
    from rubricflow.tasks.presentation.labelling import scale_points
    from rubricflow.tasks.stats.compare import judgment_sets
    from rubricflow.warehouse import db, steps

    target = warehouse_path(warehouse)
    with reading(target) as con:  # the rubric version only: any judge that scored it will do
        versions = {r[0] for r in judgment_sets(con, corpus, rubric, None, True, "labels")}
        if len(versions) > 1:
            raise InputError(f"{rubric!r} names {len(versions)} rubric versions on {corpus!r}: name one (id@version)")
        rubric_hash = versions.pop()
        criteria = [{**r, "points": scale_points(r)} for r in db.fetch(con, "label_criteria.sql", rubric=rubric_hash)]
    rows = label_studio.labels(path, {c["criterion_id"]: c["points"] for c in criteria if c["points"]}, rater)
    if not rows:
        err.print(escape(f"{path}: no answered annotation; nothing stored"))
        raise typer.Exit(1)
    with db.writer(target) as con:
        steps.load_labels(con, corpus, pl.DataFrame(rows), str(path))
    raters = sorted({r["rater"] for r in rows})
    err.print(escape(f"{len(rows)} labels from {path} stored for corpus {corpus} (raters: {', '.join(raters)})"))
