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


def doc_command_lines() -> list[tuple[str, str]]:
    """(page, line) for every `rubricflow ...` line of a shell block in the README and the docs."""
    import re

    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for block in re.findall(r"```(?:bash|sh|shell|console)\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            for line in block.replace("\\\n", " ").splitlines():
                if line.strip().removeprefix("$ ").startswith("rubricflow "):
                    found.append((page.name, line.strip().removeprefix("$ ")))
    return found


def test_every_command_line_in_the_docs_names_a_command_and_options_it_has():
    """A docs example with a renamed option or command, or a repository file that is not there, fails
    on a fresh clone; this finds it without running it (each command's own options, read from the CLI
    itself)."""
    import shlex

    from rubricflow.cli.labelling import ImportByDefault

    root, wrong = typer.main.get_command(app), []
    lines = doc_command_lines()
    for page, line in lines:
        words, command = shlex.split(line, comments=True)[1:], root
        while hasattr(command, "commands") and words and not words[0].startswith("-"):
            name = words[0] if words[0] in command.commands or not isinstance(command, ImportByDefault) else "import"
            if name not in command.commands:
                wrong.append(f"{page}: {line}: no command {words[0]!r}")
                break
            words, command = words[1:] if name == words[0] else words, command.commands[name]
        known = {o for p in getattr(command, "params", []) for o in (*p.opts, *p.secondary_opts)} | {"--help"}
        for word in words:
            if word in ("|", "&", "&&", ";", ">"):
                break
            if word.startswith("-") and word != "-" and word.split("=")[0] not in known:
                wrong.append(f"{page}: {line}: no option {word.split('=')[0]}")
            elif "/" in word and not word.startswith(("http", "../", "/", "warehouse/")) and "=" not in word:
                if not (ROOT / word).exists():  # a repository path a clone lacks (the tour's data/replies.jsonl)
                    wrong.append(f"{page}: {line}: no file {word} in the repository")
    assert len(lines) > 50 and not wrong, wrong


RUBRIC_OPTIONS = ("-r", "--rubric", "--a", "--b", "--rubric-b")


def test_every_rubric_the_docs_score_on_the_replies_corpus_finds_its_inputs_there():
    """The docs' commands on the replies corpus (examples/replies.jsonl, ingested as `replies` by the
    tour) paired `helpfulness` and `groundedness`, which require an `input` and a `context` column,
    with a file that had neither: each such command failed as written. Every rubric a docs line names
    on `-c replies` must find its required inputs in every row of the file."""
    import json
    import shlex

    from rubricflow.rubrics.library import resolve

    rows = [json.loads(line) for line in (ROOT / "examples" / "replies.jsonl").read_text().splitlines()]
    missing = []
    for page, line in doc_command_lines():
        words = shlex.split(line, comments=True)
        if not any(a in ("-c", "--corpus") and b == "replies" for a, b in zip(words, words[1:], strict=False)):
            continue
        for option, ref in zip(words, words[1:], strict=False):
            if option in RUBRIC_OPTIONS and not ref.startswith("-"):
                required = [f.name for f in resolve(ref.split("@")[0]).inputs if f.required]
                missing += [f"{page}: {line}: {ref} needs {n!r}" for n in required if not all(r.get(n) for r in rows)]
    assert not missing, missing
