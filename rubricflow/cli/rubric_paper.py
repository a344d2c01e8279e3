"""`rubricflow rubric generate --from-paper`: a PaperBench requirement tree from a paper."""

from __future__ import annotations

import json
from pathlib import Path

from rich.markup import escape

from rubricflow.errors import InputError

from .common import out


def paper_tree(paper: Path, venue: str, judge: dict, output: Path | None, force: bool) -> None:
    """Write the tree (PAPER-STEM.rubric.json here unless --output), its path printed, with how many
    rounds it took and how many leaves are flagged."""
    from rubricflow.tasks.improve.goldens import endpoint
    from rubricflow.tasks.improve.paper_rubric import generate

    path = output or Path(f"{paper.stem}.rubric.json")
    if path.exists() and not force:  # checked before the model is asked
        raise InputError(f"{path} exists; pass --force to replace it, or --output another file")
    with endpoint(judge, _offline) as config:
        result = generate(config, paper, venue)
    path.write_text(json.dumps(result.envelope, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    out.print(
        escape(
            f"wrote {path}: {result.leaves} leaves, {result.flagged} flagged (quote not in the paper), "
            f"{result.rounds} round(s); valid against the PaperBench schema (venue {venue})"
        )
    )


def _offline(url: str) -> None:
    out.print(f"asking the OFFLINE judge (a deterministic stand-in, not a model) on {url}")
