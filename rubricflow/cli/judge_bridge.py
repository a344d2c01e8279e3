"""`rubricflow judge bridge`: carry a corpus's series from one judge to another by re-judging a small
stratified bridge sample (and the nightly canary) with the new judge instead of the whole history."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape

from rubricflow.errors import CheckFailed

from .common import WarehouseOpt, err, judge_settings, out, print_rows, reading, warehouse_path
from .judge_options import judge_options, run_settings, typed

app = typer.Typer(help="Judge succession: bridge a series from one judge to another.", no_args_is_help=True)


@app.callback()
def judge() -> None:
    """Judge succession: bridge a series from one judge to another."""


class NotStitchable(CheckFailed):
    """The new judge's scores do not map onto the old judge's series (exit 1)."""


@app.command()
@judge_options(exclude=("budget_usd",))
def bridge(
    old: str = typer.Option(..., "--from", help="The old judge: a judge hash prefix (`rubricflow runs`) or a model."),
    new: str = typer.Option(..., "--to", help="The new judge's model."),
    corpus: str = typer.Option(..., "--corpus", "-c"),
    rubric: str = typer.Option(..., "--rubric", "-r", help="The rubric the old judge scored (file or library name)."),
    budget: int | None = typer.Option(None, "--budget", help="Bridge texts to re-judge (default: 5% of the corpus)."),
    canary: int = typer.Option(20, help="The nightly canary's size: its texts are re-judged too, to test the mapping."),
    base_url: str | None = typer.Option(None, help="The new judge's OpenAI-compatible endpoint."),
    sample_seed: int = typer.Option(0, help="The bridge sample's seed."),
    as_json: bool = typer.Option(False, "--json", help="Print the verdict as JSON."),
    warehouse: Path | None = WarehouseOpt,
    judge: dict | None = None,
) -> None:
    """Judge a bridge sample (stratified over the old judge's scores and nights, plus the canary) with
    the new judge, fit per criterion a mapping of the old judge's unit scale onto the new one's (linear,
    isotonic or quantile equating, chosen by held-out error), stitch the corpus mean onto the new scale
    with a bootstrap band, and say whether the series can be stitched: refused (exit 1) when the new
    judge reorders texts or the mapping fails on the canary."""
    from rubricflow.tasks.stats import succession

    from .flow_start import start_flows

    path = warehouse_path(warehouse)
    settings = judge_settings(new, base_url, need_endpoint=True, **(judge or {}))
    with reading(path) as con:
        chosen = succession.plan(con, corpus, rubric, old, budget, canary, sample_seed)
    (err if as_json else out).print(
        f"bridge: {len(chosen.bridge)} of {len(chosen.texts)} texts ({len(chosen.bridge) / len(chosen.texts):.1%}) "
        f"and {len(chosen.canary)} canary texts, re-judged by {escape(new)}"
    )
    start_flows()
    from rubricflow.flows.score import score_corpus

    texts = sorted(set(chosen.bridge) | set(chosen.canary))
    summary = score_corpus(corpus, rubric, str(path), typed(settings), run_settings(None), texts=texts)
    with reading(path) as con:
        verdict = succession.fit(con, chosen, summary["judge_hash"])
    show(verdict, chosen, summary["judge_hash"], as_json)
    if not verdict.stitchable:
        raise NotStitchable("not stitchable: " + "; ".join(verdict.refusals))


def show(verdict, chosen, new_hash: str, as_json: bool) -> None:
    if as_json:
        record = {"old_judge": chosen.old_judge, "new_judge": new_hash, "bridge_texts": len(chosen.bridge)}
        print(
            json.dumps(
                {
                    **record,
                    "stitchable": verdict.stitchable,
                    "refusals": verdict.refusals,
                    "criteria": verdict.criteria,
                },
                indent=2,
            )
        )
        return
    print_rows(
        f"judge {chosen.old_judge[:10]} -> {new_hash[:10]}: per criterion, old unit scale onto the new (90% bands)",
        [
            {
                "criterion": c["criterion"],
                "mapping": c["mapping"],
                "held-out error": f"{c['held_out_error'][c['mapping']]:.4f}",
                "rank agreement": f"{c['rank_agreement']:.2f}",
                "old mean": f"{c['old_mean']:.4f}",
                "stitched mean": f"{c['stitched_mean']:.4f}",
                "band": f"[{c['band'][0]:.4f}, {c['band'][1]:.4f}]",
            }
            for c in verdict.criteria
        ],
    )
    if verdict.stitchable:
        out.print("stitchable: the series carries over onto the new judge's scale with the bands above")
