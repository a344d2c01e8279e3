"""`rubricflow rubric validate` and `rubric convert`: the commands that read rubric files in any
supported format (and folders of them)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from rich.table import Table

from rubricflow.errors import CheckFailed, InputError

from .common import err, out
from .rubric import LibraryOpt, library_of, print_issues

if TYPE_CHECKING:
    from rubricflow.rubrics.model import Rubric


def validate(
    refs: list[str] = typer.Argument(
        None, help="Rubric files, folders of them, or library names; none = the whole library."
    ),
    library: list[Path] | None = LibraryOpt,
    strict: bool = typer.Option(False, help="Treat warnings as errors."),
) -> None:
    """Compile rubrics; exit 1 when any has errors (or warnings, with --strict)."""
    from rubricflow.rubrics.compiler import compile_rubric
    from rubricflow.rubrics.formats import RubricImportError, load_rubrics
    from rubricflow.rubrics.library import LibraryError, resolve

    targets: list[tuple[str, Rubric | None]] = []
    if not refs:
        targets = [(str(e.path), e.rubric) for e in library_of(library).entries()]
    for ref in rubric_refs(refs or []):
        path = Path(ref)
        try:
            rubrics = load_rubrics(path) if path.is_file() else [resolve(ref, library_of(library))]
        except (RubricImportError, LibraryError) as exc:
            err.print(f"[red]refused[/] {escape(str(exc))}", highlight=False)
            targets.append((ref, None))
            continue
        targets += [(f"{ref}#{r.metadata.id}" if len(rubrics) > 1 else ref, r) for r in rubrics]
    table = Table(title="validation")
    for col in ("rubric", "result", "errors", "warnings", "profile", "hash"):
        table.add_column(col, overflow="fold")
    failed = 0
    findings: list[tuple[str, list]] = []
    for source, rubric in targets:
        if rubric is None:
            failed += 1
            table.add_row(escape(source), "[red]refused[/]", "-", "-", "-", "-")
            continue
        bundle, issues = compile_rubric(rubric)
        errors = [i for i in issues if i.severity == "error"]
        warnings = [i for i in issues if i.severity == "warning"]
        bad = bool(errors) or (strict and bool(warnings))
        failed += bad
        table.add_row(
            escape(source),
            "[red]FAIL[/]" if bad else "[green]ok[/]",
            str(len(errors)),
            str(len(warnings)),
            bundle.profile if bundle else "-",
            bundle.short_hash if bundle else "-",
        )
        if errors or (strict and warnings):
            print_issues(source, issues)
        findings.append((source, issues))
        for i in issues:  # one plain line per problem (and per pattern kept for the slower engine) on stderr
            if i.severity == "error" or strict or i.code == "W_REGEX_BACKTRACKING":
                err.print(f"{source}: {i.path}: {i.code}: {i.message}", highlight=False, markup=False, soft_wrap=True)
    out.print(table)
    for source, issues in findings:
        print_findings(source, issues)
    if failed:
        err.print(f"[red]{failed} of {len(targets)} rubrics failed[/]")
        raise typer.Exit(1)


def rubric_refs(refs: list[str]) -> list[str]:
    """The refs with each folder replaced by its rubric files; a folder with none is refused, as a
    folder that expanded to nothing made `validate` and `doctor` check nothing and exit 0."""
    from rubricflow.rubrics.formats import RUBRIC_SUFFIXES, expand_folders

    expanded: list[str] = []
    for ref in refs:
        found = expand_folders([ref])
        if not found:
            raise InputError(f"{ref}: no rubric files in this folder (it looks for {', '.join(RUBRIC_SUFFIXES)})")
        expanded += found
    return expanded


def print_findings(source: str, issues) -> None:
    """Every finding, error or warning, with what it means and a one-line YAML fix."""
    from rubricflow.rubrics.findings import explain

    for i in issues:
        means, fix = explain(i.code)
        out.print(
            f"{source}: {i.severity} {i.code} at {i.path}: {i.message}", markup=False, highlight=False, soft_wrap=True
        )
        out.print(f"    means: {means}", markup=False, highlight=False, soft_wrap=True)
        if fix:
            out.print(f"    fix:   {fix}", markup=False, highlight=False, soft_wrap=True)


def convert(
    src: Path,
    to: str = typer.Option("yaml", help="yaml, json or xml."),
    out_path: Path | None = typer.Option(None, "--out", "-o", help="File to write (one rubric)."),
    out_dir: Path | None = typer.Option(None, "--out-dir", help="Folder to write each rubric into."),
) -> None:
    """Import any supported file and write it as native YAML/JSON or the XML spec."""
    from rubricflow.rubrics.compiler import compile_rubric
    from rubricflow.rubrics.formats import dump, load_rubrics

    rubrics = load_rubrics(src)
    texts = [(r, dump(r, to)) for r in rubrics]
    for r, _ in texts:
        bundle, issues = compile_rubric(r)
        if bundle is None:
            print_issues(str(src), issues)
            raise CheckFailed(f"{src}: {r.metadata.id} does not compile; nothing written")
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        for r, text in texts:
            target = out_dir / f"{r.metadata.id}.{to}"
            target.write_text(text, encoding="utf-8")
            err.print(f"wrote {escape(str(target))}")
    elif out_path is not None:
        if len(texts) != 1:
            raise InputError(f"{src} holds {len(texts)} rubrics; use --out-dir")
        out_path.write_text(texts[0][1], encoding="utf-8")
        err.print(f"wrote {escape(str(out_path))}")
    else:
        for _, text in texts:
            out.print(text, markup=False, highlight=False, end="")
