"""`rubricflow rubric generate` (draft a rubric from a source document with a model) and `rubricflow
rubric review` (judge a rubric with the built-in meta-rubric, beside the compiler's findings)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from rubricflow.errors import CheckFailed

from .common import judge_settings, out, print_rows
from .judge_options import judge_options
from .rubric import LibraryOpt, print_issues, resolve_ref

META_RUBRIC = "rubric-quality"
# judge options about a scoring run's work (batches, a cluster, a budget), not one model call's
ONE_CALL = ("batch", "batch_poll_s", "batch_timeout_s", "cluster", "limits_url", "budget_usd")


def _offline(url: str) -> None:
    out.print(f"asking the OFFLINE judge (a deterministic stand-in, not a model) on {url}")


@judge_options(exclude=(*ONE_CALL, "max_tokens"))
def generate(
    source: Path | None = typer.Argument(None, help="The source document: a style guide, a policy, a book's rules."),
    rubric_id: str | None = typer.Option(None, "--id", help="The rubric's id (default: from the file name)."),
    base_url: str | None = typer.Option(None, help="Endpoint (default: $OPENAI_BASE_URL, else the offline judge)."),
    model: str | None = typer.Option(None, help="The drafting model."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Where to write it (default: ID.yaml here)."),
    max_tokens: int = typer.Option(4096, help="Room for the draft."),
    force: bool = typer.Option(False, "--force", help="Replace the output file if it exists."),
    kind: str | None = typer.Option(
        None,
        "--kind",
        help="scoring, detection, compliance or constraint: draft with that kind's generator (the seed's "
        "instruction primitives) and hold the draft to its profile.",
    ),
    from_paper: Path | None = typer.Option(
        None, "--from-paper", help="A paper in Markdown: write a PaperBench requirement tree (JSON) instead."
    ),
    venue: str = typer.Option(
        "agent_benchmark",
        "--venue",
        help="With --from-paper: a venue template (seed 003): generic, sc, neurips, nature, agent_benchmark, "
        "paper_audit, one in ./config/paperbench_rubrics/, or a template file's path.",
    ),
    judge: dict | None = None,
) -> None:
    """Ask a model to draft a rubric from SOURCE in the native format, compile it (a draft that does
    not compile, or with --kind is not of that kind, is asked for again once, with the errors), write
    it, and report its lattice profile."""
    from rubricflow.errors import InputError
    from rubricflow.rubrics.formats import dump_yaml
    from rubricflow.tasks.improve.generate import default_id, draft
    from rubricflow.tasks.improve.goldens import endpoint
    from rubricflow.tasks.improve.primitives import KINDS

    if from_paper is not None:
        from .rubric_paper import paper_tree

        return paper_tree(
            from_paper, venue, judge_settings(model, base_url, max_tokens=max_tokens, **(judge or {})), output, force
        )
    if source is None:
        raise InputError("give a SOURCE document, or --from-paper PAPER.md")
    if kind is not None and kind not in KINDS:
        raise InputError(f"--kind {kind!r}: choose one of {', '.join(KINDS)}")
    rubric_id = rubric_id or default_id(source)
    path = output or Path(f"{rubric_id}.yaml")
    if path.exists() and not force:  # checked before the model is asked: nothing is bought to be thrown away
        raise InputError(f"{path} exists; pass --force to replace it, or --output another file")
    with endpoint(judge_settings(model, base_url, max_tokens=max_tokens, **(judge or {})), _offline) as config:
        result = draft(config, source, rubric_id, kind=kind)
    rubric = result.bundle.rubric
    path.write_text(dump_yaml(rubric), encoding="utf-8")
    print_rows(
        f"{rubric.metadata.id}: {len(rubric.criteria)} criteria drafted from {source.name}",
        [
            {"criterion": c.id, "scale": c.scale.describe(), "weight": c.weight, "description": c.description}
            for c in rubric.criteria
        ],
    )
    print_issues(str(path), result.issues)
    out.print(
        escape(
            f"wrote {path} ({result.bundle.hash[:12]}); profile {result.bundle.profile}; "
            f"{sum(i.severity == 'warning' for i in result.issues)} lattice warnings; "
            f"compiled on draft {result.attempts}"
        )
    )


@judge_options(exclude=(*ONE_CALL, "strategy"))
def review(
    ref: str = typer.Argument(..., help="The rubric to review (a file or a library name)."),
    source: Path | None = typer.Option(None, help="The document the rubric was drawn from (for coverage)."),
    base_url: str | None = typer.Option(None, help="Endpoint (default: $OPENAI_BASE_URL, else the offline judge)."),
    model: str | None = typer.Option(None, help="The reviewing model."),
    library: list[Path] | None = LibraryOpt,
    judge: dict | None = None,
) -> None:
    """Judge a rubric with the built-in meta-rubric (observable criteria, anchors per level, overlap,
    weights, coverage of the source, disqualifier precision), with the rubric's YAML as the text, and
    print the meta-judgment beside the compiler's lattice findings. Exits 1 if the rubric does not compile."""
    from rubricflow.rubrics.compiler import compile_or_raise, compile_rubric
    from rubricflow.rubrics.formats import dump_yaml
    from rubricflow.rubrics.library import Library
    from rubricflow.tasks.improve.generate import read_source
    from rubricflow.tasks.improve.goldens import endpoint, judge_text

    rubric = resolve_ref(ref, library)
    bundle, issues = compile_rubric(rubric)
    context = read_source(source) if source else ""
    meta = compile_or_raise(Library().get(META_RUBRIC).rubric)
    settings = judge_settings(model, base_url, strategy="per_criterion", **(judge or {}))
    with endpoint(settings, _offline) as config:
        judged = judge_text(meta, config, f"review-{rubric.metadata.id}", dump_yaml(rubric), context=context)
    print_rows(
        f"{rubric.metadata.id}@{rubric.metadata.version} reviewed with {META_RUBRIC}@{meta.version}",
        [
            {
                "criterion": j.criterion_id,
                "value": j.value,
                "unit score": j.unit_score,
                "rationale": j.rationale if j.status == "scored" else f"unscored: {j.reason}",
            }
            for j in judged.judgments
        ],
    )
    v = judged.verdict
    out.print(
        escape(
            f"meta-judgment: score {v.score if v.score is None else round(v.score, 3)}, "
            f"{'passes' if v.passed else 'fails' if v.passed is not None else 'no verdict'}"
            f"{' (' + v.label + ')' if v.label else ''}"
            + (f"; errors: {'; '.join(judged.errors)}" if judged.errors else "")
        )
    )
    print_issues(f"{ref} (compiler)", issues)
    if bundle is None:
        raise CheckFailed(f"{ref}: does not compile (see the issues above)")
