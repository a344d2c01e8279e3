"""`rubricflow compare`: A/B two rubric versions (or two judges) on one corpus."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape

from rubricflow.errors import InputError
from rubricflow.settings import endpoint
from rubricflow.tasks.stats import compare_defaults

from .common import (
    WarehouseOpt,
    clip,
    err,
    judge_settings,
    out,
    print_rows,
    warehouse_path,
    write_report,
)
from .flow_start import start_flows
from .judge_options import judge_options, typed


@judge_options(exclude=("seed",))  # --seed is the sequential order's
def compare(
    corpus: str = typer.Option(..., "--corpus", "-c", help="Corpus id."),
    a: str = typer.Option(
        ..., "--a", help="Side A: rubric file or library name, or (with --no-score) id, id@version or hash prefix."
    ),
    b: str | None = typer.Option(
        None, "--b", help="Side B (default: the same rubric as A, e.g. with another --model-b)."
    ),
    model: list[str] | None = typer.Option(
        None, help="Judge model for both sides (repeatable: a panel, one comparison per judge)."
    ),
    model_a: str | None = typer.Option(None, help="Judge model for side A."),
    model_b: str | None = typer.Option(None, help="Judge model for side B."),
    base_url: str | None = typer.Option(None, help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)."),
    no_score: bool = typer.Option(False, "--no-score", help="Compare landed judgments only; judge nothing."),
    judge_hash_a: str | None = typer.Option(
        None, help="With --no-score: side A's judge setup, a judge hash prefix (as listed when several scored it)."
    ),
    judge_hash_b: str | None = typer.Option(None, help="With --no-score: side B's judge setup, a judge hash prefix."),
    allow_mixed: bool = typer.Option(False, help="Allow a side to span several rubric versions or judges."),
    top: int = typer.Option(compare_defaults.TOP, help="How many of the texts that moved most to list."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write every statistic as JSON here."),
    report: Path | None = typer.Option(None, help="Also write the HTML report here."),
    warehouse: Path | None = WarehouseOpt,
    sequential: bool = typer.Option(
        False,
        "--sequential",
        help="Judge texts in a seeded random order, a batch at a time, and stop as soon as an anytime-valid "
        "confidence sequence for B - A decides (see docs/analysis.md).",
    ),
    alpha: float = typer.Option(0.05, help="--sequential: the chance the sequence ever misses the true difference."),
    equivalence: float | None = typer.Option(
        None, help="--sequential: stop as 'equivalent' once B - A lies within +-this (e.g. 0.02)."
    ),
    figure: str = typer.Option("score", help="--sequential: score (mean text score) or pass (pass rate)."),
    batch_size: int = typer.Option(100, help="--sequential: texts judged between two looks."),
    seed: int = typer.Option(0, help="--sequential: the seed of the text order (same seed: a continuation)."),
    human: str | None = typer.Option(
        None,
        "--human",
        help="Also each side's figures corrected by this rater's labels, and which side agrees better with them (estimate).",
    ),
    judge: dict | None = None,
) -> None:
    """A/B two rubric versions (or two judges) on one corpus: judges only the missing cells, then
    prints score deltas with a bootstrap interval, correlations, per-criterion agreement, flips,
    McNemar, disqualifier/pattern rate changes and the texts that moved most. With --sequential it
    judges texts in a seeded random order, a batch at a time, and stops as soon as an anytime-valid
    confidence sequence for B - A decides (a winner, equivalence, or the corpus runs out)."""
    if not no_score and not base_url and not endpoint("OPENAI_BASE_URL") and not (model_a or model_b or model):
        raise InputError(
            "no judge endpoint: pass --base-url (or set OPENAI_BASE_URL), or --no-score to compare landed judgments"
        )
    if (judge_hash_a or judge_hash_b) and not no_score:
        raise InputError("--judge-hash-a/--judge-hash-b pick landed judgments: pass them with --no-score")
    panel: list[str | None] = [*model] if model else [None]
    if len(panel) > 1 and (model_a or model_b or json_out or report):
        raise InputError(
            "several --model values compare A and B once per judge; --model-a/--model-b, --json and "
            "--report take one judge"
        )

    if sequential and (no_score or len(panel) > 1 or report):
        raise InputError("--sequential judges as it goes: one judge per side, and no --no-score or --report")
    pairs = [[judge_settings(m, base_url, **(judge or {})) for m in (model_a or one, model_b or one)] for one in panel]
    refs, prefixes = (a, b or a), (judge_hash_a, judge_hash_b)
    from rubricflow.tasks.stats.compare import refuse_self_comparisons  # before Prefect starts or a call is bought

    typed_pairs = [(typed(x), typed(y)) for x, y in pairs]
    refuse_self_comparisons(str(warehouse_path(warehouse)), corpus, refs, typed_pairs, no_score, allow_mixed, prefixes)
    if sequential:
        options = {"alpha": alpha, "equivalence": equivalence, "figure": figure, "batch_size": batch_size, "seed": seed}
        return sequential_compare(corpus, *refs, pairs[0], options, warehouse, json_out)
    start_flows()
    from rubricflow.flows.compare import compare_flow

    from .progress import scoring_progress

    for judges in pairs:
        with scoring_progress():
            result = compare_flow(
                corpus,
                *refs,
                str(warehouse_path(warehouse)),
                typed(judges[0]),
                typed(judges[1]),
                score=not no_score,
                allow_mixed=allow_mixed,
                top=top,
                judge_hash_a=judge_hash_a,
                judge_hash_b=judge_hash_b,
            )
        print_comparison(result)
        if human:
            from .estimate import human_figures

            human_figures(result, human, warehouse)
    if json_out:
        json_out.write_text(result.to_json(), encoding="utf-8")
        err.print(f"wrote {escape(str(json_out))}")
    if report:
        from rubricflow.tasks.presentation.report import comparison_report

        write_report(report, comparison_report(result))


def sequential_compare(
    corpus: str, a: str, b: str, judges: list[dict], options: dict, warehouse: Path | None, json_out: Path | None
) -> None:
    """`compare --sequential`: run the sequential flow and print its decision."""
    from rubricflow.flows.sequential import check_options

    check_options(options["alpha"], options["equivalence"], options["figure"], options["batch_size"])
    start_flows()
    from rubricflow.flows.sequential import sequential_compare_flow

    from .progress import scoring_progress

    with scoring_progress():
        r = sequential_compare_flow(corpus, a, b, str(warehouse_path(warehouse)), judges[0], judges[1], **options)
    said = {"A": "A wins", "B": "B wins", "equivalent": "equivalent", "undecided": "undecided: the corpus ran out"}
    out.print(
        f"\nsequential A/B on {r['corpus']} ({r['figure']}, alpha {r['alpha']}): {said[r['decision']]}; "
        f"B - A in [{r['lower']:.4f}, {r['upper']:.4f}] (mean {r['estimate'] if r['estimate'] is None else round(r['estimate'], 4)})",
        markup=False,
    )
    spent, rest = (f", ${r['usd_judged']:.4f}", f" (${r['rest_usd']:.4f})") if r["rest_usd"] is not None else ("", "")
    out.print(
        f"texts judged {r['texts_judged']} of {r['texts_total']} ({r['texts_paired']} paired), "
        f"{r['cells_judged']} calls{spent}; the rest would have cost {r['rest_cells']} calls{rest}",
        markup=False,
    )
    if json_out:
        json_out.write_text(json.dumps(r, indent=2), encoding="utf-8")
        err.print(f"wrote {escape(str(json_out))}")


def _figure(value: float | None) -> str:
    """A summary figure; None (undefined: too few texts, or a side that gave every text one score) as n/a."""
    from rubricflow.tasks.presentation.tables import show

    return "n/a" if value is None else show(value)


def print_comparison(c) -> None:
    from rubricflow.tasks.presentation.tables import show

    s = c.summary
    ci = s["mean_delta_ci"]
    out.print(
        f"\n[bold]A/B on {escape(c.corpus)}[/]: A = {escape(c.rubric_a)} ({c.a[0][0][:12]}, judge {c.a[0][1][:8]})  "
        f"B = {escape(c.rubric_b)} ({c.b[0][0][:12]}, judge {c.b[0][1][:8]})"
    )
    out.print(
        f"texts paired {s['texts_paired']} of {s['texts_both_sides']}; mean A {show(s['mean_a'])}, "
        f"B {show(s['mean_b'])}; delta B-A {show(s['mean_delta'])} "
        f"(95% paired bootstrap {show(ci) if ci else 'n/a'})",
        markup=False,
    )
    from rubricflow.tasks.stats.agreement import MIN_CORRELATION_TEXTS

    few = s["texts_paired"] < MIN_CORRELATION_TEXTS
    out.print(
        f"Pearson {_figure(s['pearson'])}  Spearman {_figure(s['spearman'])}  "
        f"Kendall tau-b {_figure(s['kendall_tau_b'])}"
        + (f" ({s['texts_paired']} texts paired: correlations need {MIN_CORRELATION_TEXTS})" if few else "")
        + "; "
        f"pass->fail {s['pass_to_fail']}, fail->pass {s['fail_to_pass']}, label changes {s['label_changes']}; "
        f"disqualified A {show(s['dq_rate_a'])} -> B {show(s['dq_rate_b'])}",
        markup=False,
    )
    if c.added_criteria or c.removed_criteria:
        out.print(
            f"criteria only in B: {', '.join(c.added_criteria) or '-'}; only in A: {', '.join(c.removed_criteria) or '-'}",
            markup=False,
        )
    print_rows(
        "criteria (matched by id; * = wording changed between versions)",
        [
            {
                "criterion": r["criterion_id"] + (" *" if r["changed"] else ""),
                "n": r["n"],
                "delta": r["mean_delta"],
                "95% CI": r["mean_delta_ci"],
                "exact": r["exact_agreement"],
                "within one": r["within_one"],
                "QWK": r["qwk"],
                "pass->fail": r["pass_to_fail"],
                "fail->pass": r["fail_to_pass"],
                "McNemar p": r["mcnemar_p"],
            }
            for r in c.criteria
        ],
    )
    print_rows("label flips (A -> B)", c.flips)
    print_rows("disqualifier and pattern rates", c.rates)
    print_rows(
        "texts that moved most",
        [
            {
                **{k: r[k] for k in ("text_id", "score_a", "score_b", "delta")},
                "why A": clip(r["rationale_a"]),
                "why B": clip(r["rationale_b"]),
            }
            for r in c.movers
        ],
    )
