"""`rubricflow improve evolve`: rounds of reflection-proposed mutations kept by their held-out figures,
on one objective (agreement) or several (agreement, consistency, discrimination) with weights."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from rubricflow.errors import InputError

from .common import WarehouseOpt, out, print_rows, warehouse_path
from .judge_options import judge_options, typed


def parse_target(labels: str) -> tuple[list[str], str]:
    raters, _, criterion = labels.partition(":")
    return [r for r in raters.split(",") if r], criterion or "overall"


def _pairs(option: str, items: list[str]) -> dict[str, float]:
    """NAME=NUMBER options as a mapping; a malformed one is a usage error naming it."""
    found = {}
    for item in items:
        name, _, number = item.partition("=")
        try:
            found[name.strip()] = float(number)
        except ValueError:
            raise InputError(f"{option} {item!r}: expected NAME=NUMBER, e.g. agreement=0.02") from None
    return found


@judge_options(exclude=("seed",))  # --seed is the split's here
def evolve(
    corpus: str = typer.Option(..., "--corpus", "-c"),
    rubric: str = typer.Option(..., "--rubric", "-r", help="The starting rubric (a file or a library name)."),
    labels: str = typer.Option("human:overall", help="What to agree with: RATER[,RATER...][:CRITERION]."),
    base_url: str | None = typer.Option(None, help="The judge's endpoint (default: $OPENAI_BASE_URL)."),
    model: str | None = typer.Option(None, help="The judge model."),
    reflect_base_url: str | None = typer.Option(None, help="The reflection model's endpoint (default: the judge's)."),
    reflect_model: str | None = typer.Option(None, help="The reflection model (default: the judge model)."),
    shard_size: int = typer.Option(2000, min=1, help="Cells per shard: what a killed run loses at most."),
    max_rounds: int = typer.Option(3, min=1),
    max_calls: int | None = typer.Option(
        None, min=1, help="Stop before a round once the judge calls spent reach this."
    ),
    seed: int = typer.Option(0, help="Of the train / validation / test split by text."),
    validation: float = typer.Option(
        0.2, min=0.05, max=0.45, help="Share of the labelled texts rounds are accepted on."
    ),
    test: float = typer.Option(0.2, min=0.05, max=0.45, help="Share of the labelled texts read once, at the end."),
    objective: list[str] = typer.Option(
        [], "--objective", help="NAME=WEIGHT, repeatable: agreement, consistency, discrimination (default agreement=1)."
    ),
    select: str = typer.Option("weighted", help="weighted (the weighted objectives rise) or pareto (not dominated)."),
    tolerance: list[str] = typer.Option(
        [], "--tolerance", help="NAME=FALL, repeatable: how far an objective may fall."
    ),
    minibatch: int = typer.Option(12, min=1, help="Texts shown to the reflection model per round."),
    invariants: bool = typer.Option(
        False, "--invariants", help="Only text and weights evolve; other proposals refused."
    ),
    gate: bool = typer.Option(
        False, "--gate", help="The lattice validator rubrics judge each proposal before scoring."
    ),
    co_evolve: bool = typer.Option(
        False,
        "--co-evolve",
        help="Rounds take turns: the rubric, the gate (with --gate), the reflection template, the tolerances.",
    ),
    output_dir: Path | None = typer.Option(None, help="Where candidates and the best version go (default: evolve-ID)."),
    warehouse: Path | None = WarehouseOpt,
    judge: dict | None = None,
) -> None:
    """Rounds of: find the criterion that agrees least with the humans (training texts), ask a
    reflection model for mutations, judge the candidate (only its changed criteria cost calls),
    keep it if its validation figures improve: Pearson r by default; with --objective, every objective
    named, weighted or Pareto (--select), none falling beyond its --tolerance. The test texts are read
    once, at the end, for the start, the best and the Pareto front. With --co-evolve, every other round
    mutates a meta-component of the search instead (kept unless it would have refused an accepted round;
    no judge calls), written to OUTPUT/co-evolved.json. Every round is recorded in the warehouse
    (`evolution_rounds`, `evolution_components`); the same command again resumes an interrupted evolution."""
    from rubricflow.rubrics.library import resolve
    from rubricflow.tasks.improve.objectives import Objectives

    from .common import judge_settings
    from .flow_start import start_flows
    from .progress import scoring_progress

    raters, criterion = parse_target(labels)
    settings: dict[str, Any] = {"weights": _pairs("--objective", objective) or {"agreement": 1.0}, "select": select}
    settings["tolerances"] = _pairs("--tolerance", tolerance)
    Objectives(**settings)  # checked before any flow starts
    options = {"minibatch": minibatch, "invariants": invariants, "gate": gate, "co_evolve": co_evolve}
    judged_by = typed(judge_settings(model, base_url, need_endpoint=True, **(judge or {})))
    reflection = typed(judge_settings(reflect_model, reflect_base_url))
    folder = output_dir or Path(f"evolve-{resolve(rubric).metadata.id}")
    start_flows()
    from rubricflow.flows.evolve import evolve_flow

    where = (corpus, rubric, str(warehouse_path(warehouse)), raters, criterion, judged_by, reflection, max_rounds)
    with scoring_progress():
        result = evolve_flow(
            *where, max_calls, seed, validation, test, str(folder), shard_size, settings=settings, options=options
        )
    _report(result, rubric, corpus)


def _report(result: dict, rubric: str, corpus: str) -> None:
    rows = _round_rows(result["rounds"])
    print_rows(
        f"evolution {result['evolution_id']} of {rubric} on {corpus}: {result['training_texts']} training, "
        f"{result['validation_texts']} validation, {result['test_texts']} test texts",
        rows,
    )
    print_rows(
        "agreement with the humans (Pearson r): rounds were accepted on validation; test was read once, now",
        [
            {"version": "start", "validation": result["validation_start"], "test": result["test_start"]},
            {"version": "best", "validation": result["validation_best"], "test": result["test_best"]},
        ],
    )
    figures = result["objectives"]
    print_rows(
        f"objectives ({figures['select']}, weights {figures['weights']}): validation and test (read once, now)",
        [
            {"version": v, "split": split, **figures[split][v]}
            for v in ("start", "best")
            for split in ("validation", "test")
        ],
    )
    print_rows(
        "Pareto front of the versions scored (validation objectives; test read once, not selected on)",
        [
            {
                "version": p["version"][:12],
                **{f"val {k}": x for k, x in p["validation"].items()},
                **{f"test {k}": x for k, x in p["test"].items()},
            }
            for p in result["front"]
        ],
    )
    if "co_evolution" in result:
        _report_meta(result["co_evolution"])
    refused = sum(r["status"] == "refused" for r in result["rounds"])
    out.print(
        escape(
            f"{result['calls']} judge calls in {len(rows)} rounds, {result['calls_this_run']} of them in this run "
            f"(rounds recorded earlier are replayed); {refused} reflection answers refused; the starting "
            f"version cost {result['first_run_calls']} calls now; best version: {result['best_file']}"
        )
    )


def _round_rows(rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per round; `bound` is what re-judging only the changed criteria should cost."""
    rows = []
    for r in rounds:
        bound = (
            (r["changed_criteria"] / r["total_criteria"] * r["full_rescore_calls"]) if r.get("total_criteria") else None
        )
        rows.append(
            {
                "round": r["round"],
                "criterion": r["criterion"],
                "status": r["status"],
                "validation r before": r["metric_before"],
                "after": r["metric_after"],
                "judge calls": r["calls"],
                "bound": bound,
                "full re-score": r["full_rescore_calls"],
                "mutations": ", ".join(m["op"] for m in json.loads(r["mutations"] or "[]")) or r["reason"],
            }
        )
    return rows


def _report_meta(co: dict) -> None:
    """The meta rounds of a co-evolution and the meta-components it ended with."""
    print_rows(
        "meta-components (no judge calls; kept unless they would have refused an accepted round)",
        [
            {
                "round": r["round"],
                "component": r["component"],
                "status": r["status"],
                "value": _change(r),
                "why": r["reason"],
            }
            for r in co["rounds"]
        ],
    )
    out.print(
        escape(
            f"evolved: gate {json.dumps(co['gate_rubric'])}, tolerances {json.dumps(co['acceptance'])}, "
            f"reflection template of {len(co['reflection_template'])} characters; all three in {co['file']}"
        )
    )


def _change(meta_round: dict) -> str:
    """The value proposed; a template as the words it added to the one in force."""
    before, value = meta_round["value_before"], meta_round["value"]
    if isinstance(value, str) and isinstance(before, str) and value.startswith(before):
        return "... + " + value[len(before) :].strip()
    return json.dumps(value)
