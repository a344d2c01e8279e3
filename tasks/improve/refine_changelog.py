"""Where `rubric refine` writes the refined version and its changelog (beside the original, never over
a file), and the changelog itself: each property before and after, every round tried, the diff."""

from __future__ import annotations

import json
from pathlib import Path

from rubricflow.errors import InputError
from rubricflow.rubrics.algebra import diff
from rubricflow.tasks.improve import lattice
from rubricflow.tasks.improve.refine import Refinement


def output_paths(folder: Path, rubric_id: str, version: str) -> tuple[Path, Path]:
    """The new version's file and its changelog; an InputError if either exists (never overwritten)."""
    rubric_path = folder / f"{rubric_id}-{version}.yaml"
    changelog = folder / f"{rubric_id}-{version}.changelog.md"
    for path in (rubric_path, changelog):
        if path.exists():
            raise InputError(f"{path} exists; refine never overwrites: move it, or pass --output-dir")
    return rubric_path, changelog


def changelog(result: Refinement, judge: str, proposer: str) -> str:
    start, end = result.start.metadata, result.rubric.metadata
    lines = [
        f"# {end.id}: {start.version} -> {end.version}",
        "",
        f"Refined by `rubric refine`: meta-evaluated by one validator rubric per lattice property (judge {judge}), "
        f"mutations proposed by {proposer}.",
        "",
        "| property | before | after |",
        "|---|---|---|",
    ]
    lines += [
        f"| {p} | {result.start_measures[p].value}/{lattice.LEVELS} | {result.measures[p].value}/{lattice.LEVELS} |"
        for p in result.start_measures  # the properties measured (--properties), in lattice order
    ]
    if result.stopped:
        lines += ["", f"Stopped early: {result.stopped}; running it again goes on from the journal."]
    lines += ["", "## Rounds", ""]
    for n, r in enumerate(result.rounds, 1):
        ops = ", ".join(m.get("op", "?") for m in r.mutations) or "none"
        lines.append(f"{n}. target **{r.target}** ({ops}): {r.outcome}")
        if r.chose:
            lines.append(f"   - the model {r.chose}")
        if r.outcome == "accepted":
            lines.append(f"   - mutations: `{json.dumps(r.mutations)}`")
    lines += ["", "## Changes", ""]
    lines += [f"- {c}" for c in diff(result.start, result.rubric)] or ["- none"]
    return "\n".join(lines) + "\n"
