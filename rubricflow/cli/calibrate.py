"""`rubricflow labels` (import human or external labels) and `rubricflow calibrate` (agreement)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from rubricflow.errors import CheckFailed

from .common import WarehouseOpt, err, out, print_rows, reading, warehouse_path, write_report

if TYPE_CHECKING:
    from rubricflow.tasks.stats.calibration import Calibration


def labels(
    path: Path = typer.Argument(
        ...,
        help="CSV, JSONL or Parquet, long (text_id, criterion, score[, rater]) or wide (an id and one "
        "numeric column per criterion[, rater]); a hand-graded PaperBench tree (expected_result.json); "
        "or a UniEval-style release's folder (Topical-Chat's; SummEval's or SFHOT's with `reference`): its texts too.",
    ),
    corpus: str = typer.Option(..., "--corpus", "-c"),
    text_id: str | None = typer.Option(None, help="Graded tree: the submission's text id (default: file stem)."),
    rater: str | None = typer.Option(
        None,
        help="The rater's name where the file names none (default: human; a graded tree: grader). With it, a "
        "wide file's `rater` (or annotator...) column of numbers is read as the criterion of that name the corpus "
        "knows (a rubric that scored it, or its labels).",
    ),
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """Import human (or another judge's) labels into the warehouse. A graded tree's grades become
    labels of every node, and each internal node's grade is checked against the rubric's
    aggregation of the leaf grades (exit 1 when one disagrees)."""
    from rubricflow.rubrics.importers.paperbench import is_graded_tree
    from rubricflow.tasks.loaders.labels import import_graded_tree, import_labels, import_topical_chat

    if path.is_dir():
        import_topical_chat(path, corpus, warehouse_path(warehouse))
        out.print(
            escape(
                f"corpus {corpus}: the UniEval-style release in {path} (texts; raters human and, where given, unieval)"
            )
        )
        return
    if path.suffix.lower() == ".json" and path.is_file() and is_graded_tree(_json_or_none(path)):
        n, rubric_hash, check = import_graded_tree(path, corpus, warehouse_path(warehouse), text_id, rater or "grader")
        print_rows(
            f"graded tree {path.name} (rubric {rubric_hash[:12]}): internal nodes, grade vs aggregate of leaf grades",
            [
                {
                    "node": c["node_id"],
                    "weight": c["weight"],
                    "graded": c["graded"],
                    "aggregated": c["aggregated"],
                    "agrees": "yes" if c["agrees"] else "NO",
                }
                for c in check
            ],
        )
        wrong = [c["node_id"] for c in check if not c["agrees"]]
        out.print(
            escape(
                f"{n} labels for corpus {corpus} from {path}; {len(check) - len(wrong)} of {len(check)} "
                "internal nodes agree with the tree's aggregation"
            )
        )
        if wrong:
            raise CheckFailed(
                f"{len(wrong)} internal nodes disagree with the aggregate of their leaves: {', '.join(wrong[:5])}"
            )
        return
    n, raters, criteria, notes = import_labels(path, corpus, warehouse_path(warehouse), rater)
    said = f"raters: {', '.join(raters)}; criteria: {', '.join(criteria)}"
    out.print(escape(f"{n} labels for corpus {corpus} from {path} ({said})"))
    for note in notes:  # what of the file was not read: a column, the --rater given
        err.print(f"warning: {escape(note)}", highlight=False, soft_wrap=True)


def _json_or_none(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def calibrate(
    corpus: str = typer.Option("topical-chat", "--corpus", "-c"),
    judge: str | None = typer.Option(
        None, help="Label rater whose scores are checked (default: the corpus's own judgments; ignored with --rubric)."
    ),
    human: list[str] | None = typer.Option(None, help="Reference raters (repeatable; default: every other rater)."),
    rubric: str | None = typer.Option(None, help="Check this rubric's warehouse judgments instead of a label rater."),
    model: str | None = typer.Option(None, help="With --rubric: the judge model whose judgments to check."),
    judge_hash: str | None = typer.Option(
        None,
        help="With --rubric: the judge setup (a judge hash prefix, "
        "as listed when several scored it: other temperature, seed...).",
    ),
    score: str = typer.Option(
        "sampled",
        help="With --rubric: the judge's sampled scores, or `weighted`: "
        "its logprob-weighted ones (G-Eval; endpoints that return logprobs).",
    ),
    step: float = typer.Option(1.0, help="Category width for kappas and confusion matrices."),
    confusion: bool = typer.Option(False, help="Print the confusion matrices."),
    topical_chat: Path | None = typer.Option(None, help="Import the Topical-Chat release from this folder first."),
    report: Path | None = typer.Option(None, help="Also write the HTML report here."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON (one record per criterion)."),
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """Agreement of a judge with human labels, per criterion: Pearson, Spearman, Kendall tau-b
    (sample level, pooled), Cohen's and quadratic weighted kappa, Fleiss' kappa and Krippendorff's
    alpha among the humans, and the human-vs-human baseline the judge should be held to."""
    from rubricflow.tasks.loaders.labels import import_topical_chat
    from rubricflow.tasks.stats.calibration import calibration, record
    from rubricflow.warehouse import db

    path = warehouse_path(warehouse)
    if topical_chat is not None:
        import_topical_chat(topical_chat, corpus, path)
    with reading(path) as con:
        result = calibration(con, corpus, judge, human, rubric, model, step, score, judge_hash)
    with db.writer(path) as con:  # kept: the `calibrations` table holds every run of this command
        record(con, result)
    if as_json:
        print(json.dumps(result.as_records(), indent=2))
        return
    _print_agreement(result, corpus, step)
    if confusion:
        for r in result.rows:
            print_rows(
                f"{r.criterion_id}: judge (rows) x humans (columns)",
                [
                    {"judge": lv, **{str(c): n for c, n in zip(r.levels, row, strict=True)}}
                    for lv, row in zip(r.levels, r.confusion, strict=True)
                ],
            )
    if report:
        from rubricflow.tasks.presentation.report import calibration_report

        write_report(report, calibration_report(result))


def _print_agreement(result: Calibration, corpus: str, step: float) -> None:
    """The correlations, then the kappas beside the human baseline, then any notes."""
    from rubricflow.tasks.presentation.tables import show

    print_rows(
        f"{result.judge} vs {', '.join(result.humans)} on {corpus} (sample level, pooled)",
        [
            {
                "criterion": r.criterion_id,
                "n": r.n,
                "Pearson": show(r.pearson, ".6f"),
                "Spearman": show(r.spearman, ".6f"),
                "Kendall tau-b": show(r.kendall_tau_b, ".6f"),
            }
            for r in result.rows
        ],
    )
    print_rows(
        f"kappas (categories of width {step:g}, halves rounded up) and the human baseline",
        [
            {
                "criterion ": r.criterion_id,
                "Cohen kappa": r.cohen_kappa,
                "QWK": r.qwk,
                "humans": r.humans,
                "Fleiss kappa": r.fleiss_kappa,
                "Fleiss n": r.fleiss_texts,
                "alpha humans": r.alpha_humans,
                "alpha +judge": r.alpha_with_judge,
                "human r": r.human_pearson,
                "human QWK": r.human_qwk,
            }
            for r in result.rows
        ],
    )
    for r in result.rows:
        if r.note:
            out.print(escape(f"note: {r.criterion_id}: {r.note}"))
    if result.unmatched:
        left = ", ".join(f"{c!r} ({n})" for c, n in result.unmatched.items())
        out.print(escape(f"note: labels on criteria {result.judge} never scored, left out: {left}"))
    if result.unpaired:
        left = ", ".join(f"{c!r} ({n})" for c, n in result.unpaired.items())
        out.print(escape(f"note: criteria with under 2 texts scored by both, left out (texts both scored): {left}"))
    out.print(
        "Fleiss n: the texts every human rated (Fleiss' kappa needs a full table; the other figures use all pairs)"
    )
