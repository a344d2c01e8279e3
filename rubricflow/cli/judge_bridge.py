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
    human: str | None = typer.Option(
        None, help="A rater whose labels both judges are equated to (its labelled texts are re-judged too)."
    ),
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
        chosen = succession.plan(con, corpus, rubric, old, budget, canary, sample_seed, human)
    (err if as_json else out).print(
        f"bridge: {len(chosen.bridge)} of {len(chosen.texts)} texts ({len(chosen.bridge) / len(chosen.texts):.1%}) "
        f"and {len(chosen.canary)} canary and {len(chosen.labelled)} labelled texts, re-judged by {escape(new)}"
    )
    start_flows()
    from rubricflow.flows.score import score_corpus

    summary = score_corpus(corpus, rubric, str(path), typed(settings), run_settings(None), texts=chosen.to_judge())
    from rubricflow.warehouse import db

    with reading(path) as con:
        verdict = succession.fit(con, chosen, summary["judge_hash"])
    with db.writer(path) as con:
        succession.record(con, chosen, summary["judge_hash"], verdict)
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
                    "score": verdict.score,
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
                **_humans(c.get("humans")),
            }
            for c in ([verdict.score] if verdict.score else []) + verdict.criteria
        ],
    )
    if verdict.stitchable:
        out.print("stitchable: the series carries over onto the new judge's scale with the bands above")


def _humans(equated: dict | None) -> dict:
    """Both judges equated to the humans: each one's error against them and the human mean (PPI)."""
    if not equated:
        return {}
    old, new = equated["old"], equated["new"]
    return {
        "error vs humans old / new": f"{old['error_against_humans']:.3f} / {new['error_against_humans']:.3f}",
        "human mean via old": f"{old['human_mean']:.3f} [{old['interval'][0]:.3f}, {old['interval'][1]:.3f}]",
        "via new": f"{new['human_mean']:.3f} [{new['interval'][0]:.3f}, {new['interval'][1]:.3f}]",
    }


@app.command()
def series(
    corpus: str = typer.Option(..., "--corpus", "-c"),
    rubric: str = typer.Option(..., "--rubric", "-r", help="The rubric version (file, library name or hash prefix)."),
    as_json: bool = typer.Option(False, "--json", help="Print the nights as JSON."),
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """The nightly series across a judge change: each night's mean text score under its own judge and,
    where a stitchable `judge bridge` leads from that judge to another, restated on the new judge's
    scale with the bridge's band."""
    from rubricflow.tasks.stats import succession
    from rubricflow.tasks.stats.compare import judgment_sets

    with reading(warehouse_path(warehouse)) as con:
        rubric_hash = judgment_sets(con, corpus, rubric, None, True, "series")[0][0]
        nights = succession.series(con, corpus, rubric_hash)
    if as_json:
        print(json.dumps(nights, indent=2, default=str))
        return
    print_rows(
        f"{corpus}: nightly mean text score, nights of a bridged judge restated on its successor's scale",
        [
            {
                "night": n["night"],
                "judge": n["judge"][:10],
                "mean": f"{n['mean']:.4f}" if n["mean"] is not None else "",
                "on judge": (n["new_judge"] or "")[:10],
                "restated": f"{n['restated']:.4f}" if n.get("restated") is not None else "",
                "band": f"[{n['band'][0]:.4f}, {n['band'][1]:.4f}]" if n.get("band") else "",
            }
            for n in nights
        ],
    )


@app.command("ab")
def restate_ab(
    corpus: str = typer.Option(..., "--corpus", "-c"),
    as_json: bool = typer.Option(False, "--json", help="Print the A/Bs as JSON."),
    warehouse: Path | None = WarehouseOpt,
) -> None:
    """Each A/B `compare` stored on the corpus, re-stated on a new judge's scale where a stitchable
    `judge bridge` leads from each side's judge to the same new judge: the paired text-score difference
    A - B and its decision (A, B or none, 90% t interval) before and after, and whether it flips."""
    from rubricflow.tasks.stats import succession

    with reading(warehouse_path(warehouse)) as con:
        found = succession.restated_abs(con, corpus)
    if as_json:
        print(json.dumps(found, indent=2))
        return
    if not found:
        out.print(f"no A/B stored on corpus {escape(corpus)} with one judge setup a side (`rubricflow compare`)")
        return

    def said(side: dict | None) -> str:
        return f"{side['difference']:+.4f} {side['decision']}" if side else ""

    print_rows(
        f"{corpus}: stored A/Bs re-stated on the new judge's scale (difference A - B, decision)",
        [
            {
                "A": f"{a['a'][0][:10]} / {a['a'][1][:10]}",
                "B": f"{a['b'][0][:10]} / {a['b'][1][:10]}",
                "new judge": (a["new_judge"] or "no bridge")[:10],
                "before": said(a.get("before")),
                "after": said(a.get("after")),
                "flips": "FLIPS" if a.get("flips") else "",
            }
            for a in found
        ],
    )
