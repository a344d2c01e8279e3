"""Where rubricflow's code lives. pyproject.toml's [tool.setuptools.package-dir] is the one source of
the mapping from the repository's top-level folders to subpackages of `rubricflow` (setup.py builds
the wheel's package list from it); installed from a wheel, all of the code is under one folder."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def package_dirs(root: Path) -> dict[str, Path]:
    """Each top-level package and its folder, as pyproject.toml in the source tree `root` maps them."""
    import tomllib

    table = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    return {package: root / folder for package, folder in table.items()}


def code_folders() -> list[Path]:
    """The folders rubricflow's modules are imported from: the mapped folders of a source checkout
    (an editable install), else the installed package's own folder."""
    if (HERE.parent / "pyproject.toml").is_file() and (HERE.parent / "setup.py").is_file():
        return list(package_dirs(HERE.parent).values())
    return [HERE]
