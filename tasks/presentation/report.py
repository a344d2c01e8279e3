"""Self-contained HTML reports (`rubricflow report run | compare | calibration`): one file, plots
embedded as PNG data URIs, no script and no network. Every value from the warehouse is escaped:
texts and rationales are data, never markup."""

from __future__ import annotations

import base64
import datetime as dt
import html
import io

import matplotlib

matplotlib.use("Agg")  # no display here; must precede pyplot
matplotlib.rcParams["text.parse_math"] = False  # titles from rubrics are shown as written: a `$` is no math
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from rubricflow.tasks.presentation.tables import criterion_rows, run_rows, show  # noqa: E402
from rubricflow.tasks.stats.calibration import Calibration  # noqa: E402
from rubricflow.tasks.stats.compare import Comparison  # noqa: E402

STYLE = """body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;
text-align:right;vertical-align:top}th{background:#f3f3f3}td.t{text-align:left;max-width:420px}
img{max-width:100%;border:1px solid #eee;margin:.5em 0}.grid{display:flex;flex-wrap:wrap;gap:10px}
.grid img{width:48%}"""


def _figure(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return f'<img alt="plot" src="data:image/png;base64,{base64.b64encode(buffer.getvalue()).decode()}">'


def _table(rows: list[dict]) -> str:
    if not rows:
        return "<p><i>none</i></p>"
    head = "".join(f"<th>{html.escape(str(k))}</th>" for k in rows[0])
    body = "".join(
        "<tr>"
        + "".join(f'<td class="{"t" if isinstance(v, str) else ""}">{html.escape(show(v))}</td>' for v in r.values())
        + "</tr>"
        for r in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _page(title: str, *sections: str) -> str:
    made = dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
        f"<p>rubricflow report, {made}</p>{''.join(sections)}</body></html>\n"
    )


def _heatmap(matrix, rows: list[str], cols: list[str], title: str, xlabel: str, ylabel: str) -> str:
    matrix = np.asarray(matrix)
    fig, ax = plt.subplots(figsize=(1.2 + 0.7 * len(cols), 1.0 + 0.5 * len(rows)))
    ax.imshow(matrix, cmap="Blues")
    ax.set_xticks(range(len(cols)), cols, rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), rows)
    for (i, j), n in np.ndenumerate(matrix):
        ax.text(j, i, str(n), ha="center", va="center", color="white" if n > matrix.max() / 2 else "black")
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    return _figure(fig)


SUMMARY_FIELDS = (
    "texts_paired",
    "mean_a",
    "mean_b",
    "mean_delta",
    "mean_delta_ci",
    "pearson",
    "spearman",
    "kendall_tau_b",
    "pass_to_fail",
    "fail_to_pass",
    "dq_rate_a",
    "dq_rate_b",
)


def _distribution_plot(c: Comparison) -> str:
    bins = np.array([h["bin_start"] for h in c.histogram])
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.bar(bins + 0.0125, [h["texts_a"] for h in c.histogram], width=0.022, label=f"A {c.rubric_a}")
    ax.bar(bins + 0.0375, [h["texts_b"] for h in c.histogram], width=0.022, label=f"B {c.rubric_b}")
    ax.set(title="Score distribution", xlabel="text score", ylabel="texts", xlim=(0, 1))
    ax.legend()
    return _figure(fig)


def _delta_plot(c: Comparison) -> str:
    crit = [r for r in c.criteria if r["mean_delta_ci"]]
    fig, ax = plt.subplots(figsize=(6, 0.9 + 0.35 * max(1, len(crit))))
    ys = np.arange(len(crit))
    means = np.array([r["mean_delta"] for r in crit])
    # a constant delta has an interval of width 0, which float rounding can make a hair negative
    lo = np.clip(means - np.array([r["mean_delta_ci"][0] for r in crit]), 0, None)
    hi = np.clip(np.array([r["mean_delta_ci"][1] for r in crit]) - means, 0, None)
    ax.errorbar(means, ys, xerr=[lo, hi], fmt="o", capsize=3)
    ax.axvline(0, color="#999", lw=1)
    ax.set_yticks(ys, [r["criterion_id"] + (" *" if r["changed"] else "") for r in crit])
    ax.set(title="Per-criterion mean delta (B - A) with 95% bootstrap CI", xlabel="unit-score delta")
    return _figure(fig)


def _flip_plot(c: Comparison) -> str:
    labels = sorted({f["label_a"] for f in c.flips} | {f["label_b"] for f in c.flips})
    matrix = [
        [sum(f["texts"] for f in c.flips if f["label_a"] == a and f["label_b"] == b) for b in labels] for a in labels
    ]
    return _heatmap(matrix, labels, labels, "Label flips", "label under B", "label under A")


def _correlation(value: float | None) -> str:
    """A correlation in a plot's title: undefined (NaN, or None: too few texts, constant scores) as n/a."""
    return show(value) or "n/a"


def _scatter_plot(c: Comparison) -> str:
    fig, ax = plt.subplots(figsize=(4.2, 4.2))
    if c.scatter:
        xa, xb = zip(*c.scatter, strict=True)
        ax.scatter(xa, xb, s=8, alpha=0.4)
    ax.plot([0, 1], [0, 1], color="#999", lw=1)
    ax.set(title=f"Text scores (Pearson {_correlation(c.summary['pearson'])})", xlabel="A", ylabel="B")
    return _figure(fig)


def comparison_report(c: Comparison) -> str:
    summary = {k: c.summary[k] for k in SUMMARY_FIELDS}
    criteria = criterion_rows(c)
    return _page(
        f"A/B: {c.rubric_a} vs {c.rubric_b} on {c.corpus}",
        f"<p>A: rubric {html.escape(c.a[0][0][:12])}, judge {html.escape(c.a[0][1][:12])}; "
        f"B: rubric {html.escape(c.b[0][0][:12])}, judge {html.escape(c.b[0][1][:12])}</p>",
        "<h2>Summary</h2>",
        _table([summary]),
        f'<div class="grid">{_distribution_plot(c)}{_scatter_plot(c)}</div>',
        "<h2>Criteria</h2><p>Matched by id; (changed) marks a criterion whose definition differs between the versions. "
        f"Only in B: {html.escape(', '.join(c.added_criteria) or '-')}; only in A: {html.escape(', '.join(c.removed_criteria) or '-')}.</p>",
        _table(criteria),
        _delta_plot(c),
        "<h2>Label flips</h2>",
        _flip_plot(c),
        "<h2>Disqualifier and pattern rates</h2>",
        _table(c.rates),
        "<h2>Texts that moved most</h2>",
        _table(c.movers),
    )


def calibration_report(cal: Calibration) -> str:
    rows = cal.rows
    cols = min(3, len(rows))
    grid_rows = (len(rows) + cols - 1) // cols
    fig, axes = plt.subplots(grid_rows, cols, figsize=(4 * cols, 3.6 * grid_rows), squeeze=False, layout="constrained")
    for ax, r in zip(axes.flat, rows, strict=False):
        ax.scatter(r.human_scores, r.judge_scores, s=8, alpha=0.4)
        ax.set(title=f"{r.criterion_id} (r={_correlation(r.pearson)})", xlabel="human consensus", ylabel=cal.judge)
    for ax in list(axes.flat)[len(rows) :]:
        ax.axis("off")
    scatter = _figure(fig)
    matrices = "".join(
        _heatmap(
            r.confusion,
            [str(v) for v in r.levels],
            [str(v) for v in r.levels],
            f"{r.criterion_id}: confusion",
            "humans' category",
            "judge's category",
        )
        for r in rows
    )
    table = [
        {
            "criterion": r.criterion_id,
            "n": r.n,
            "Pearson": r.pearson,
            "Spearman": r.spearman,
            "Kendall tau-b": r.kendall_tau_b,
            "Cohen kappa": r.cohen_kappa,
            "QWK": r.qwk,
            "humans": r.humans,
            "Fleiss kappa": r.fleiss_kappa,
            "alpha humans": r.alpha_humans,
            "alpha +judge": r.alpha_with_judge,
            "human r": r.human_pearson,
            "human QWK": r.human_qwk,
        }
        for r in rows
    ]
    return _page(
        f"Calibration: {cal.judge} vs {', '.join(cal.humans)} on {cal.corpus}",
        "<h2>Agreement per criterion</h2>",
        _table(table),
        f"<p>Kappas and confusion matrices use categories of width {cal.step:g}. "
        "Human r / QWK: each human against the mean of the other humans (the baseline). Fleiss, alpha and the "
        "baseline need at least two human raters (blank otherwise).</p>",
        "<h2>Judge vs humans</h2>",
        scatter,
        "<h2>Confusion matrices</h2>",
        f'<div class="grid">{matrices}</div>',
    )


def run_report(con, run_id: str) -> str:
    run, labels, criteria, scores = run_rows(con, run_id)
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.hist([v for v in scores if v is not None], bins=20, range=(0, 1))
    ax.set(title="Text scores", xlabel="score", ylabel="texts")
    hist = _figure(fig)
    fig, ax = plt.subplots(figsize=(6, 0.9 + 0.35 * max(1, len(criteria))))
    ax.barh([r["criterion_id"] for r in criteria], [r["mean_unit_score"] or 0 for r in criteria])
    ax.set(title="Mean unit score per criterion", xlim=(0, 1))
    bars = _figure(fig)
    r = run[0]
    return _page(
        f"Run {run_id}: {r['rubric']} on {r['corpus_id']}",
        f"<p>model {html.escape(str(r['model']))}, status {html.escape(str(r['status']))}</p>",
        _table(run),
        f'<div class="grid">{hist}{bars}</div>',
        "<h2>Labels</h2>",
        _table(labels),
        "<h2>Criteria</h2><p>sample_stddev and flip_rate show repeat-sampling consistency (runs with --samples > 1).</p>",
        _table(criteria),
    )


def pairwise_html(con, corpus: str, rubric_hash: str, title: str, limit: int = 200) -> str:
    """Pairwise judging: per judge and criterion, consistency after the swap and position bias (with
    a plot), win rates and Bradley-Terry rankings when pairs name systems, and the pairs where the
    orders or the judges disagree, with both rationales (escaped: they are model output)."""
    from rubricflow.tasks.stats.pairwise_stats import bradley_terry, pairwise_report
    from rubricflow.warehouse import db

    summary = pairwise_report(con, corpus, rubric_hash)
    fig, ax = plt.subplots(figsize=(6, 0.9 + 0.35 * max(1, len(summary))))
    names = [f"{r['judge']} {r['criterion_id']}" for r in summary]
    ax.barh(names, [r["position_bias"] or 0 for r in summary], label="position bias")
    ax.barh(names, [r["consistency"] or 0 for r in summary], alpha=0.5, label="consistent after swap")
    ax.set(title="Position bias and consistency", xlim=(0, 1))
    ax.legend(loc="lower right", fontsize=8)
    rankings = []
    for judge_hash in dict.fromkeys(r["judge_hash"] for r in summary):
        outcomes = db.fetch(con, "pair_outcomes.sql", corpus=corpus, rubric=rubric_hash, judge=judge_hash)
        for criterion in sorted({o["criterion_id"] for o in outcomes}):
            rankings += [
                {"judge": judge_hash[:8], "criterion": criterion, **r}
                for r in bradley_terry(
                    [(o["system_a"], o["system_b"], o["verdict"]) for o in outcomes if o["criterion_id"] == criterion]
                )
            ]
    return _page(
        title,
        f"<p>corpus {html.escape(corpus)}; each pair judged in both orders; an order-inconsistent "
        "pair counts as a tie.</p>",
        _table([{k: v for k, v in r.items() if k != "judge_hash"} for r in summary]),
        _figure(fig),
        "<h2>Win rates</h2>",
        _table(db.fetch(con, "pair_win_table.sql", corpus=corpus, rubric=rubric_hash)),
        "<h2>Ranking (Bradley-Terry, Elo scale, 95% bootstrap interval)</h2>",
        _table(rankings),
        f"<h2>Pairs where the orders or the judges disagree (first {limit})</h2>",
        _table(db.fetch(con, "pair_disagreements.sql", corpus=corpus, rubric=rubric_hash, limit=limit)),
    )


def evolution_report(con, evolution_id: str) -> str:
    """An `improve evolve` history: validation agreement per round (accepted, rejected, refused), the
    judge calls each candidate cost beside the bound (changed criteria / all x a full re-score)."""
    import json

    from rubricflow.warehouse import db

    rounds = db.fetch(con, "evolution_rounds.sql", evolution=evolution_id)
    numbers = [r["round"] for r in rounds]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6), layout="constrained")
    best = [r["metric_before"] for r in rounds[:1]]
    for r in rounds:
        best.append(r["metric_after"] if r["status"] == "accepted" else best[-1])
    left.step([0, *numbers], best, where="post", color="#444", label="best version")
    colours = {"accepted": "tab:green", "rejected": "tab:red"}
    for status, colour in colours.items():
        points = [
            (r["round"], r["metric_after"]) for r in rounds if r["status"] == status and r["metric_after"] is not None
        ]
        if points:
            left.scatter(*zip(*points, strict=True), color=colour, label=f"candidate {status}", zorder=3)
    refused = [r["round"] for r in rounds if r["status"] == "refused"]
    if refused:
        left.scatter(
            refused, [best[n - 1] for n in refused], marker="x", color="grey", label="answer refused", zorder=3
        )
    left.set(
        title="Validation agreement (Pearson r)",
        xlabel="round (0: the starting version)",
        ylabel="r",
        xticks=[0, *numbers],
    )
    left.legend(fontsize=8)
    bounds = [
        (r["changed_criteria"] / r["total_criteria"] * r["full_rescore_calls"]) if r["total_criteria"] else 0
        for r in rounds
    ]
    right.bar([n - 0.2 for n in numbers], [r["calls"] or 0 for r in rounds], width=0.4, label="judge calls")
    right.bar([n + 0.2 for n in numbers], bounds, width=0.4, label="bound: changed / all x full re-score")
    right.set(title="Calls spent per round", xlabel="round", ylabel="calls", xticks=numbers)
    right.legend(fontsize=8, loc="lower right")
    table = [
        {
            "round": r["round"],
            "criterion": r["criterion_id"],
            "status": r["status"],
            "r before": r["metric_before"],
            "r after": r["metric_after"],
            "calls": r["calls"],
            "bound": bound,
            "full re-score": r["full_rescore_calls"],
            "mutations": ", ".join(m["op"] for m in json.loads(r["mutations"] or "[]")) or r["reason"] or "",
        }
        for r, bound in zip(rounds, bounds, strict=True)
    ]
    return _page(f"Evolution {evolution_id}", _figure(fig), "<h2>Rounds</h2>", _table(table))
