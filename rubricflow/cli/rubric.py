"""`rubricflow rubric ...`: list, search, show, render and diff (validate and convert: rubric_files; the lattice: rubric_status)."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import typer
from rich.markup import escape
from rich.table import Table

from rubricflow.errors import CheckFailed, InputError

from .common import clip, err, out

# The rubric code is imported inside each command, so `rubricflow --help` does not pay for it.
app = typer.Typer(help="Work with rubrics: files or names from the library.", no_args_is_help=True)
STRATEGIES = ("per_criterion", "grouped", "holistic")  # as rubricflow.rubrics.render names them

LibraryOpt = typer.Option(
    None, "--library", "-L", help="Extra library folder (repeatable); RUBRICFLOW_LIBRARY also adds folders."
)


def plain(*cells: str) -> list[str]:
    """Table cells from rubric text, shown as written (a `[/]` or `[bold]` in a title is not markup)."""
    return [escape(str(c)) for c in cells]


def library_of(extra: list[Path] | None):
    from rubricflow.rubrics.library import Library, default_roots

    library = Library(default_roots(extra))
    for path, why in library.skipped:  # said, not fatal: the folder's other rubrics stay usable
        err.print(f"skipped {escape(str(path))}: {escape(why.splitlines()[0][:200])}", highlight=False)
    return library


def resolve_ref(ref: str, extra: list[Path] | None):
    from rubricflow.rubrics.library import resolve

    return resolve(ref, library_of(extra) if not Path(ref).is_file() else None)


@app.command("list")
def list_(
    library: list[Path] | None = LibraryOpt,
    tag: list[str] = typer.Option([], "--tag", help="Only rubrics with this tag (repeatable)."),
    artifact_type: str | None = typer.Option(None, "--type", help="Only rubrics for this artifact type."),
) -> None:
    """List the rubrics in the library."""
    _print_entries(library_of(library).find("", artifact_type, tuple(tag)))


@app.command()
def search(
    text: str = typer.Argument(None, help="Words to find; optional with --type or --tag."),
    library: list[Path] | None = LibraryOpt,
    tag: list[str] = typer.Option([], "--tag"),
    artifact_type: str | None = typer.Option(None, "--type", help="Only rubrics for this artifact type."),
) -> None:
    """Find rubrics whose id, title, description, artifact type or tags mention TEXT (seed 002, RL-10:
    `rubric search jira_tickets`)."""
    if not (text or artifact_type or tag):
        raise InputError("give TEXT to search for, --type ARTIFACT_TYPE or --tag TAG")
    found = library_of(library).find(text or "", artifact_type, tuple(tag))
    if not found:
        asked = ", ".join(f"{k} {v!r}" for k, v in (("text", text), ("type", artifact_type)) if v)
        raise CheckFailed(f"no rubric matches {asked or 'tag ' + ', '.join(tag)}")
    _print_entries(found)


def _print_entries(entries) -> None:
    table = Table(title=f"{len(entries)} rubrics")
    for col in ("id", "version", "title", "type", "criteria", "tags", "file"):
        table.add_column(col, overflow="fold")
    for e in entries:
        m = e.rubric.metadata
        table.add_row(
            *plain(
                m.id, m.version, m.title, m.artifact_type, str(len(e.rubric.criteria)), ", ".join(m.tags), e.path.name
            )
        )
    out.print(table)


@app.command()
def show(ref: str, library: list[Path] | None = LibraryOpt) -> None:
    """Show a rubric: metadata (its provenance too), criteria, disqualifiers, lattice and hash."""
    from rubricflow.rubrics.compiler import compile_rubric
    from rubricflow.rubrics.properties import describe

    rubric = resolve_ref(ref, library)
    bundle, issues = compile_rubric(rubric)
    m = rubric.metadata
    out.print(f"[bold]{escape(m.title or m.id)}[/]  {escape(m.id)} v{escape(m.version)}  ({escape(m.artifact_type)})")
    if m.description:
        out.print(m.description, markup=False)
    if rubric.goal:
        out.print(f"[bold]Goal:[/] {escape(rubric.goal)}")
    if m.provenance:  # where it came from: a source, a license, the grader an eval named (seed 004)
        said = "; ".join(f"{k}: {v}" for k, v in m.provenance.items())
        out.print(f"[bold]Provenance:[/] {escape(said)}")
    table = Table(title="criteria")
    for col in ("id", "title", "scale", "weight", "importance", "patterns", "genre"):
        table.add_column(col, overflow="fold")
    for c in rubric.criteria:
        table.add_row(
            *plain(
                c.id,
                c.title or c.description[:60],
                c.scale.describe(),
                f"{c.weight:g}",
                c.importance,
                ", ".join(c.patterns),
                ", ".join(c.genre),
            )
        )
    out.print(table)
    if rubric.disqualifiers:
        dq = Table(title="disqualifiers")
        for col in ("id", "kind", "fires on", "description"):
            dq.add_column(col, overflow="fold")
        for d in rubric.disqualifiers:
            dq.add_row(*plain(d.id, d.kind, ", ".join(d.patterns) or (d.criterion or "judge"), d.description))
        out.print(dq)
    if rubric.groups:
        groups = Table(title="groups (the scoring tree)")
        for col in ("id", "title", "aggregation", "weight", "children"):
            groups.add_column(col, overflow="fold")
        for g in rubric.groups:
            groups.add_row(*plain(g.id, g.title, g.aggregation, f"{g.weight:g}", ", ".join(g.children)))
        out.print(groups)
    print_issues(ref, issues)
    if bundle is None:
        raise CheckFailed(f"{ref}: does not compile (see the issues above)")
    lattice = " ".join(f"{k}{'✓' if ok else '✗'}" for k, ok in bundle.lattice)
    out.print(f"profile: [bold]{bundle.profile}[/]  lattice: {lattice}  goldens: {len(rubric.goldens)}")
    from rubricflow.rubrics.properties import lattice_nodes

    nodes = " ".join(f"{k}{'✓' if ok else '✗'}" for k, ok in lattice_nodes(rubric).items())
    out.print(f"property lattice (seed 000 4.3): {nodes}")
    if rubric.verdicts or rubric.decision_rules or rubric.mapping_examples:
        space = ", ".join(f"{v.label}" + ("" if v.score is None else f" ({v.score:g})") for v in rubric.verdicts)
        out.print(
            f"verdicts: {escape(space) or '-'}  decision rules: {len(rubric.decision_rules)}  "
            f"mapping examples: {len(rubric.mapping_examples)}"
        )
    out.print(f"properties: {escape(describe(rubric))}", highlight=False)
    out.print(f"hash: {bundle.hash}")


def print_issues(source: str, issues) -> None:
    if not issues:
        return
    table = Table(title=f"{source}: {len(issues)} issues")
    for col in ("severity", "code", "field", "message"):
        table.add_column(col, overflow="fold")
    for i in issues:
        style = "red" if i.severity == "error" else "yellow"
        table.add_row(f"[{style}]{i.severity}[/]", *plain(i.code, i.path, i.message))
    out.print(table)


@app.command()
def render(
    ref: str,
    library: list[Path] | None = LibraryOpt,
    strategy: str | None = typer.Option(
        None, help=f"One of {', '.join(STRATEGIES)} (default: the rubric's execution_strategy, else holistic)."
    ),
    genre: str | None = typer.Option(None, help="Render for texts of this genre."),
    unit: str | None = typer.Option(None, help="Only this call unit (criterion or group id)."),
    schema: bool = typer.Option(True, help="Also print the output JSON Schema."),
    surface: list[str] | None = typer.Option(
        None,
        help="Override the rubric's surface policy, KEY=VALUE (repeatable): input_codec=xml|markdown, "
        "criterion_focus=full|focused, enforce_key_order=true, default_labels=true, confidence=true, rationale=false.",
    ),
    spec: bool = typer.Option(False, help="Print the whole rubric as one <LLM_JUDGE_SPEC> XML document instead."),
    output_mode: str = typer.Option("auto", help="The prompt as sent in this mode; auto: the one a run tries first."),
) -> None:
    """Print the judge's system prompt (and output schema) for each call unit, with the unit's
    fingerprint: the hash of what is sent (the text aside) that keys its cells in the warehouse."""
    import json

    from rubricflow.rubrics.render import render, render_rubric_xml, with_surface
    from rubricflow.tasks.judging.config import JudgeConfig
    from rubricflow.tasks.judging.request_shape import answer_shape
    from rubricflow.tasks.judging.verdict_tools import check, output_modes

    rubric = with_surface(resolve_ref(ref, library), surface or [])
    if spec:
        out.print(render_rubric_xml(rubric, genre), markup=False, highlight=False)
        return
    strategy = strategy or rubric.surface.execution_strategy or "holistic"  # as a run would judge it
    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    units = render(rubric, strategy).of_genre(genre)
    if unit:
        units = [u for u in units if u.unit.id == unit]
        if not units:
            raise InputError(f"no call unit {unit!r} for strategy {strategy}")
    if output_mode not in (modes := get_args(JudgeConfig.model_fields["output_mode"].annotation)):
        raise InputError(f"--output-mode {output_mode!r}: choose one of {', '.join(modes)}")
    if output_mode == "verdict_tools":  # as a run refuses it: one pass/fail criterion a call
        check(rubric, [u.unit for u in units])
    for u in units:  # `auto`: the mode a run tries first on an API with every mode (seed 004: waza's tools)
        asked = output_modes(rubric, [u.unit], ("json_schema", "tools"))[0] if output_mode == "auto" else output_mode
        mode, system, shape = answer_shape(rubric, u.system, u.schema, asked)
        out.rule(f"{strategy} unit {u.unit.id} (fingerprint {u.fingerprint[:12]}; output mode {mode})")
        out.print(system, markup=False, highlight=False)
        if mode == "verdict_tools" or schema:
            out.rule("tools (the one the judge calls is its verdict)" if mode == "verdict_tools" else "output schema")
            out.print(json.dumps(shape.get("tools", u.schema), indent=2), markup=False, highlight=False)


@app.command()
def guidance(ref: str, library: list[Path] | None = LibraryOpt) -> None:
    """Print a constraint-profile rubric's guidance block (seed 000: a mission, instructions and examples
    placed in a model's context, never scored): the mission, role, instructions, definitions, examples
    and output format, to paste into a prompt."""
    import sys

    from rubricflow.api_rubric import guidance as block

    sys.stdout.write(block(resolve_ref(ref, library)))  # as written: no wrapping, ready to paste


@app.command("diff")
def diff_(a: str, b: str, library: list[Path] | None = LibraryOpt) -> None:
    """List what changed from rubric A to rubric B (criteria matched by id)."""
    from rubricflow.rubrics import algebra

    ra, rb = resolve_ref(a, library), resolve_ref(b, library)
    changes = algebra.diff(ra, rb)
    if not changes:
        out.print("no differences")
        return
    table = Table(title=f"{len(changes)} changes: {a} -> {b}")
    for col in ("change", "path", "before", "after"):
        table.add_column(col, overflow="fold")
    for c in changes:
        table.add_row(*plain(c.kind, c.path, clip(c.before, 80), clip(c.after, 80)))
    out.print(table)
