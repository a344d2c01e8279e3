"""`rubricflow doctor`: which importer read a rubric file, which of its fields it used and which
it ignored."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from .common import err, out


def doctor(files: list[Path] = typer.Argument(..., help="Rubric files (or folders of them) in any format.")) -> None:
    """Say how each file was read: the importer (format) that took it, the rubrics it made, every
    field the importer read and how it uses it, the fields it leaves alone and why (e.g. a promptfoo
    config's `providers`: the judge is rubricflow's), and any field it ignores; exit 1 when a file
    is refused."""
    from rubricflow.rubrics.documents import RubricImportError
    from rubricflow.rubrics.explain import explain

    from .rubric_files import rubric_refs

    refused = 0
    for ref in rubric_refs([str(f) for f in files]):
        try:
            found = explain(Path(ref))
        except RubricImportError as exc:
            refused += 1
            err.print(f"[red]refused[/] {escape(str(exc))}", highlight=False)
            continue
        out.print(f"[bold]{escape(ref)}[/]", highlight=False)
        out.print(f"  read by: the {escape(found.importer)} importer", highlight=False)
        for r in found.rubrics:
            out.print(f"  rubric: {escape(r.metadata.id)} {r.metadata.version} ({len(r.criteria)} criteria)")
        if not found.tracked:
            why = (
                "rubricflow's own schema reads every field (an unknown one is an error)"
                if found.importer == "native"
                else "a text format, read as a whole (not field by field)"
            )
            out.print(f"  fields: {why}", highlight=False)
            continue
        _fields(found)
    if refused:
        raise typer.Exit(1)


def _fields(found) -> None:
    """Every field of the file: read (grouped by how the importer uses them), left alone (and why), ignored."""
    by_how: dict[str, list[str]] = {}
    for path, how in found.how.items():
        by_how.setdefault(how, []).append(path)
    out.print(f"  fields read ({len(found.used)}):{'' if found.used else ' -'}", highlight=False)
    for how, paths in by_how.items():
        out.print(f"    {escape(', '.join(paths))}: {escape(how)}", highlight=False)
    out.print(f"  fields left alone ({len(found.left)}):{'' if found.left else ' -'}", highlight=False)
    for path, why in found.left.items():
        out.print(f"    {escape(path)}: {escape(why)}", highlight=False)
    out.print(f"  fields ignored ({len(found.ignored)}): {escape(', '.join(found.ignored)) or '-'}", highlight=False)
