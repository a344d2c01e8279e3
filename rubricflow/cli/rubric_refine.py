"""`rubricflow rubric refine`: raise a rubric's weak lattice properties with model-proposed mutations,
each judged by the property validators, and write the refined version beside the original."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from .common import judge_settings, out, print_rows
from .judge_options import judge_options
from .rubric import LibraryOpt, resolve_ref
from .rubric_authoring import ONE_CALL

JUDGMENT_TOKENS = 1024  # a validator's answer is one level and a rationale


@judge_options(exclude=(*ONE_CALL, "strategy", "max_tokens"))
def refine(
    ref: str = typer.Argument(..., help="The rubric to refine (a file or a library name)."),
    base_url: str | None = typer.Option(None, help="Endpoint (default: $OPENAI_BASE_URL, else the offline judge)."),
    model: str | None = typer.Option(None, help="The model that judges the properties and proposes mutations."),
    tolerance: float = typer.Option(
        0.1, min=0.0, max=1.0, help="How far (unit score) another property may fall when the target rises."
    ),
    max_rounds: int = typer.Option(8, min=1, help="At most this many accepted changes."),
    output_dir: Path | None = typer.Option(
        None, "--output-dir", help="Where the new version goes (default: beside the rubric file, else here)."
    ),
    max_tokens: int = typer.Option(
        4096, min=16, help=f"Room for a proposal; a judgment gets at most {JUDGMENT_TOKENS} of it."
    ),
    properties: str | None = typer.Option(
        None, help="Measure and target only these lattice properties (comma-separated; default: all eight)."
    ),
    max_calls: int | None = typer.Option(
        None, min=1, help="Buy at most this many model calls (judgments and proposals; journaled ones are free)."
    ),
    tries: int = typer.Option(
        1, min=1, max=5, help="Proposals per property per round before the next property (each a new prompt)."
    ),
    choose: bool = typer.Option(
        False,
        "--choose",
        help="Offer rule-made operations (merges, anchors, a ritual, its restatement, disqualifiers), "
        "numbered, and let the model only choose among them (a small model); free proposals elsewhere.",
    ),
    library: list[Path] | None = LibraryOpt,
    judge: dict | None = None,
) -> None:
    """Meta-evaluate RUBRIC with one validator rubric per lattice property (mission, anchors, schema,
    mechanical, disqualifiers, ritual, mirror, economy), ask for mutations aimed at the weakest,
    re-evaluate, and keep a change only if its target property rises and no other falls by more
    than --tolerance; stop when nothing rises. Writes ID-VERSION.yaml and ID-VERSION.changelog.md
    (never over a file). Every judgment and proposal is journaled: run it again to resume, unpaid.
    With --max-calls it stops when the budget is spent and keeps what was accepted by then. Anchors,
    schema, mechanical, disqualifiers, ritual, mirror and economy are counted from the rubric (the seed's
    predicates), the mission judged."""
    from rubricflow.rubrics.compiler import compile_or_raise
    from rubricflow.rubrics.formats import dump_yaml
    from rubricflow.tasks.improve import lattice
    from rubricflow.tasks.improve.goldens import endpoint
    from rubricflow.tasks.improve.refine import Calls, Journal, Tries
    from rubricflow.tasks.improve.refine import refine as run_refine
    from rubricflow.tasks.improve.refine_changelog import changelog, output_paths

    from .rubric_authoring import _offline

    rubric = resolve_ref(ref, library)
    compile_or_raise(rubric, ref)
    folder = output_dir or (Path(ref).parent if Path(ref).is_file() else Path("."))
    journal = Journal(folder / f".{rubric.metadata.id}-{rubric.metadata.version}.refine.jsonl")
    judging = judge_settings(model, base_url, strategy="per_criterion", **(judge or {}))
    chosen = lattice.chosen(properties)
    with endpoint({**judging, "max_tokens": max_tokens}, _offline) as config:
        result = run_refine(
            rubric,
            config.model_copy(update={"max_tokens": min(max_tokens, JUDGMENT_TOKENS)}),
            config,
            journal,
            tolerance,
            max_rounds,
            lambda line: out.print(escape(line)),
            chosen,
            Calls(max_calls),
            Tries(tries, choose),
        )
    print_rows(
        f"{rubric.metadata.id}: lattice properties (0-{lattice.LEVELS}) before and after",
        [
            {"property": p, "before": m.value, "after": result.measures[p].value}
            for p, m in result.start_measures.items()
        ],
    )
    if not result.accepted:
        out.print(f"nothing improved in {len(result.rounds)} tries; no new version written (journal {journal.path})")
        return
    bundle = compile_or_raise(result.rubric, "the refined rubric")
    rubric_path, log_path = output_paths(folder, rubric.metadata.id, result.rubric.metadata.version)
    rubric_path.write_text(dump_yaml(result.rubric), encoding="utf-8")
    log_path.write_text(changelog(result, config.model, config.model), encoding="utf-8")
    out.print(escape(f"wrote {rubric_path} ({bundle.hash[:12]}), {len(result.accepted)} changes accepted"))
    out.print(escape(f"changelog {log_path}"))
