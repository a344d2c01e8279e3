"""The `rubricflow` command."""

from __future__ import annotations

import typer

from rubrics.cli import app as rubric_app

app = typer.Typer(help="rubricflow: rubric-driven LLM judging of large text corpora.", no_args_is_help=True)
app.add_typer(rubric_app, name="rubric")


@app.callback()
def _root() -> None:
    """rubricflow: rubric-driven LLM judging of large text corpora."""


def main() -> None:
    app()
