"""`rubricflow score --cascade`: run the judge cascade flow and print its split and cost."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

from rubricflow.errors import CheckFailed

from .common import out, print_rows
from .flow_start import start_flows


def run_cascade(corpus: str, rubric: str, warehouse: Path, judge: dict, spec: str, levels: dict) -> dict:
    """Run the cascade with the live progress bar; a text left without its deciding judge's score
    (a failed strong cell, or the budget spent) makes the command exit 1 after printing: run it again
    to retry them. Texts left to a human are named with the labelling page's address. `levels`:
    agreement, delta, calibration, human_below (the cascade flow's options)."""
    from rubricflow.flows.cascade import parse_cascade

    cheap, strong = parse_cascade(spec)
    start_flows()
    from rubricflow.flows.cascade import cascade_flow

    from .progress import scoring_progress

    with scoring_progress():
        r = cascade_flow(corpus, rubric, str(warehouse), judge, cheap, strong, **levels)
    threshold = "none certified: every text escalated" if r["threshold"] is None else f"{r['threshold']:.4f}"
    out.print(
        f"\ncascade {r['cascade_id']} on {corpus}: cheap {cheap}, strong {strong}; confidence threshold {threshold} "
        f"(agreement >= {levels['agreement']} with probability >= {1 - levels['delta']}, from {r['calibration_texts']} calibration texts; "
        f"confidence from {r['confidence']}); "
        f"{r['escalated']} of {r['texts'] - r['calibration_texts']} other texts escalated",
        markup=False,
    )
    print_rows("decided by", r["split"])
    print_rows("cost against strong-only", [r["costs"]] if r["costs"] else [])
    if r["costs"]:
        out.print(cost_against_strong_only(r["costs"]), markup=False)
    if any(r["calibration_unjudged"].values()):
        left = r["calibration_unjudged"]
        out.print(
            f"calibration: {left['cheap']} texts without a cheap confidence (escalated wherever they occur), "
            f"{left['strong']} without a strong score (counted as disagreements, not dropped)",
            markup=False,
        )
    if r["pending_human"]:
        page = urlencode({"corpus": corpus, "rubric": r["rubric_hash"][:12], "judge": r["strong_judge"][:12]})
        out.print(
            f"{r['pending_human']} texts wait for a human label (the strong judge's confidence below "
            f"{levels['human_below']}): label them in `rubricflow view` at /label?{page} "
            "(or `rubricflow labels import`); their labels then decide them",
            markup=False,
        )
    if r["unscored"]:
        raise CheckFailed(
            f"{r['unscored']} texts have no score from the judge that decides them (a failed strong call, or "
            "--budget spent): run the same command again to retry them"
        )
    return r


def cost_against_strong_only(costs: dict) -> str:
    """The cascade's cost as a share of judging every text with the strong judge: in dollars where both
    models have prices, else in calls; the cheap judge's re-asks are calls like any other."""
    strong_only, cheap, strong = costs.get("strong_only_usd"), costs.get("cheap_usd"), costs.get("strong_usd")
    if strong_only and cheap is not None and strong is not None:
        return f"cascade ${cheap + strong:.4f} = {(cheap + strong) / strong_only:.3f} of strong-only ${strong_only:.4f}"
    calls = (
        f"{costs['cheap_calls']} cheap calls (re-asks included) + {costs['strong_calls']} strong calls against "
        f"{costs['strong_only_calls']:.0f} strong-only calls"
    )
    if strong_only == 0 and cheap is not None:
        return f"{calls}; $0 at these models' prices"
    return f"{calls}; a model without a price (give it in a RUBRICFLOW_PRICES table): the dollars are unknown"
