"""The wheel's package list, derived from the folders (a list kept by hand missed one and the wheel
could not score). pyproject.toml's [tool.setuptools.package-dir] is the one source: it maps each of
the repository's top-level folders to a subpackage of `rubricflow`; every folder with an __init__.py
under one of them is a package."""

import tomllib
from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).resolve().parent
PACKAGE_DIR = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]


def packages() -> list[str]:
    """Every package under every mapped folder; a folder mapped on its own is not listed twice."""
    found = set(PACKAGE_DIR)
    for package, folder in PACKAGE_DIR.items():
        found.update(f"{package}.{sub}" for sub in find_packages(str(ROOT / folder)))
    return sorted(found)


setup(packages=packages())
