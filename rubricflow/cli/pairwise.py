"""`rubricflow pairwise`: judge every pair of a pair corpus by a rubric, in both orders."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from rubricflow.errors import CheckFailed, InputError

from .common import (
    WarehouseOpt,
    judge_settings,
    out,
    print_rows,
    warehouse_path,
)

if TYPE_CHECKING:
    from rubricflow.rubrics.compiler import Bundle

from .judge_options import judge_options, run_options, run_settings


@judge_options()
@run_options(exclude=("skip_disqualified",))
def pairwise(
    corpus: str = typer.Option(..., "--corpus", "-c", help="A pair corpus (see `rubricflow ingest`)."),
    rubric: list[str] = typer.Option(..., "--rubric", "-r", help="Rubric file or library name (repeatable)."),
    model: list[str] | None = typer.Option(None, help="Judge model (repeatable: a panel)."),
    base_url: str | None = typer.Option(None, help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)."),
    warehouse: Path | None = WarehouseOpt,
    judge: dict | None = None,
    options: dict | None = None,
) -> None:
    """Which of two responses is better, criterion by criterion: every pair is judged in both orders
    (A-B and B-A, two cells of their own) with the rubric's pairwise form (verdicts a, b, tie);
    prints consistency after the swap, the position-bias rate and agreement with human labels.
    The verdicts are the `pair_verdicts` view; `pairwise_summary` and `pair_win_rates` aggregate them."""
    from rubricflow.tasks.stats.pairwise_stats import pairwise_report
    from rubricflow.warehouse import db

    from .score import run_panel, run_score

    path = warehouse_path(warehouse)
    judges = [
        judge_settings(one, base_url, need_endpoint=True, **(judge or {}))
        for one in (model or [None])  # type: ignore[list-item]  # None: the default model
    ]
    check_pair_corpus(path, corpus)  # before any call: scoring a plain corpus buys calls no verdict comes of
    forms = [_pair_form(ref, path) for ref in rubric]  # every -r compiled before the first call
    unjudged = []
    for target, bundle in forms:
        if len(judges) == 1:
            run_score(corpus, str(target), path, judges[0], run_settings(options))
        else:
            run_panel(corpus, str(target), path, judges, run_settings(options))
        with db.reader(path) as con:
            rows = pairwise_report(con, corpus, bundle.hash)
        if not rows:
            unjudged.append(bundle.id)
            continue
        _print_report(f"{bundle.id} on {corpus}: both orders per pair", rows)
        for judge_hash in dict.fromkeys(r["judge_hash"] for r in rows):
            _print_rankings(path, corpus, bundle.hash, judge_hash)
    out.print(
        "rule: an order-inconsistent pair counts as a tie; position bias = share of pairs whose verdict "
        "names the same slot in both orders"
    )
    if unjudged:  # the calls were made and no verdict came of them: not a success
        raise CheckFailed(f"no pair verdicts of {', '.join(unjudged)} on corpus {corpus}: see the run's errors")


def check_pair_corpus(warehouse: Path, corpus: str) -> None:
    """Refuse a corpus whose texts are not all pairs in both orders (tasks/loaders/pairs.py), as
    best-of refuses one without candidate sets: its cells would be bought and yield no verdict."""
    from rubricflow.warehouse import db

    with db.reader(warehouse) as con:
        [found] = db.fetch(con, "pair_corpus_check.sql", corpus=corpus)
    if not found["texts"] or found["plain"]:
        raise InputError(
            f"corpus {corpus}: not a pair corpus ({found['plain']} of {found['texts']} texts are no pair; every row "
            "needs prompt, response_a and response_b)"
        )


def _pair_form(ref: str, warehouse: Path) -> tuple[Path, Bundle]:
    """The rubric's pairwise form, compiled and kept as a file beside the warehouse (runs name it)."""
    from rubricflow.rubrics.compiler import compile_or_raise
    from rubricflow.rubrics.formats import dump
    from rubricflow.rubrics.library import Library, default_roots, resolve
    from rubricflow.rubrics.pairwise import pairwise_rubric

    pair_form = pairwise_rubric(resolve(ref, Library(default_roots(None)) if not Path(ref).is_file() else None))
    bundle = compile_or_raise(pair_form, source=ref)
    target = warehouse.parent / "rubrics" / f"{pair_form.metadata.id}@{pair_form.metadata.version}.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(dump(pair_form, "yaml"), encoding="utf-8")
    return target, bundle


def _print_report(title: str, rows: list[dict[str, Any]]) -> None:
    print_rows(
        title,
        [
            {
                "judge": r["judge"],
                "criterion": r["criterion_id"],
                "pairs": r["pairs"],
                "consistent": r["consistency"],
                "position bias": r["position_bias"],
                "a / b / tie": f"{r['a_share']:.2f} / {r['b_share']:.2f} / {r['tie_share']:.2f}",
                "labelled": r["labelled"],
                "accuracy": r["accuracy"],
                "acc. no ties": r["accuracy_no_ties"],
                "kappa": r["kappa"],
            }
            for r in rows
        ],
    )


def _print_rankings(path: Path, corpus: str, rubric_hash: str, judge_hash: str) -> None:
    """One Bradley-Terry ranking of the systems per criterion, from this judge's verdicts."""
    from rubricflow.tasks.stats.pairwise_stats import bradley_terry
    from rubricflow.warehouse import db

    with db.reader(path) as con:
        outcomes = db.fetch(con, "pair_outcomes.sql", corpus=corpus, rubric=rubric_hash, judge=judge_hash)
    for criterion in sorted({o["criterion_id"] for o in outcomes}):
        ranking = bradley_terry(
            [(o["system_a"], o["system_b"], o["verdict"]) for o in outcomes if o["criterion_id"] == criterion]
        )
        print_rows(
            f"ranking by {criterion} (Bradley-Terry, Elo scale, 95% bootstrap interval; judge {judge_hash[:8]})",
            [
                {
                    "system": r["system"],
                    "rating": f"{r['rating']:+.0f}",
                    "interval": f"[{r['low']:+.0f}, {r['high']:+.0f}]",
                    "comparisons": r["comparisons"],
                }
                for r in ranking
            ],
        )
