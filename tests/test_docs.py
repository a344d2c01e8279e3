"""The docs match the code: every command has its entry in the command reference, and the site
builds with MkDocs in strict mode (a broken link or a page left out of the navigation fails)."""

import shutil
import subprocess

import pytest
import typer.main

from rubricflow.cli import app

from .conftest import ROOT


def commands(group, prefix: str = "") -> list[str]:
    found = []
    for name, sub in sorted(group.commands.items()):
        found.append(f"{prefix}{name}")
        if hasattr(sub, "commands"):
            found += commands(sub, f"{prefix}{name} ")
    return found


def test_every_command_is_in_the_command_reference():
    reference = (ROOT / "docs" / "cli.md").read_text()
    missing = [c for c in commands(typer.main.get_command(app)) if f"`rubricflow {c}`" not in reference]
    assert not missing, f"docs/cli.md lacks {missing}"


@pytest.mark.skipif(shutil.which("mkdocs") is None, reason="mkdocs is in the dev extra")
def test_the_docs_build_in_strict_mode(tmp_path):
    done = subprocess.run(
        ["mkdocs", "build", "--strict", "-d", str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "cli" / "index.html").is_file()
