"""`rubricflow rubric test`: run each rubric's goldens through the judge; exit 1 if any fails."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from rubricflow.errors import CheckFailed, InputError

from .common import judge_settings, out, print_rows
from .judge_options import judge_options


@judge_options()
def rubric_test(
    refs: list[str] | None = typer.Argument(None, help="Rubric files or library names; none = the whole library."),
    base_url: str | None = typer.Option(
        None, help="Judge endpoint (default: $OPENAI_BASE_URL, else the offline judge)."
    ),
    model: str | None = typer.Option(None, help="Judge model."),
    cases: Path | None = typer.Option(
        None,
        help="A red-team calibration-cases JSON file (rubric, source, allowed_judgements, cases): its rubric is "
        "tested with each case as a golden expecting its judgement.",
    ),
    judge: dict | None = None,
) -> None:
    """Run each rubric's goldens through the judge; exits 1 if any golden fails."""
    from rubricflow.rubrics.compiler import compile_or_raise
    from rubricflow.rubrics.library import Library, resolve
    from rubricflow.tasks.improve.calibration_cases import load_cases
    from rubricflow.tasks.improve.goldens import check_goldens

    if cases is not None and refs:
        raise InputError("--cases names its own rubric: give no rubric beside it")
    bundles = (
        [compile_or_raise(load_cases(cases), source=str(cases))]
        if cases is not None
        else [compile_or_raise(resolve(r), source=r) for r in refs]
        if refs
        else [compile_or_raise(e.rubric, source=str(e.path)) for e in Library().entries()]
    )
    failures = total = 0

    def offline(url: str) -> None:
        out.print(f"judging goldens with the OFFLINE judge (a deterministic stand-in) on {url}")

    for bundle, results in check_goldens(
        bundles,
        judge_settings(model, base_url, **(judge or {})),
        offline,
    ):
        name = escape(f"{bundle.id}@{bundle.version}")
        if not bundle.rubric.goldens:
            out.print(f"{name}: no goldens")
            continue
        total += len(results)
        failures += sum(not r.ok for r in results)
        print_rows(
            f"{name}: {sum(r.ok for r in results)}/{len(results)} goldens pass",
            [
                {
                    "golden": r.name,
                    "expected": r.expected or "",
                    "got": r.got or "",
                    "score": r.score,
                    "label": r.label,
                    "result": "PASS" if r.ok else "FAIL",
                    "why": r.error or "; ".join(r.mismatches),
                }
                for r in results
            ],
        )
    out.print(f"{total - failures}/{total} goldens pass")
    if failures:
        raise CheckFailed(f"{failures} of {total} goldens fail")
