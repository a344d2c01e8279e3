"""One settings object for the RUBRICFLOW_* variables (rubricflow/settings.py): each has a
description, the docs list exactly them, and no module reads one from os.environ past it."""

import re

from rubricflow.layout import package_dirs
from rubricflow.settings import Settings, settings

from .conftest import ROOT


def test_the_docs_table_lists_every_setting_with_its_description():
    text = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    listed = dict(re.findall(r"^\| `RUBRICFLOW_([A-Z0-9_]+)` \| (.+) \|$", text, re.M))
    declared = {n.upper(): f.description for n, f in Settings.model_fields.items()}
    assert all(declared.values()), "a setting without a description"
    assert listed == declared


def test_no_module_reads_a_rubricflow_variable_but_the_settings():
    readers = []
    for folder in package_dirs(ROOT).values():
        for path in folder.rglob("*.py"):
            if re.search(r"(environ\.get|getenv)\(\s*[\"']RUBRICFLOW_", path.read_text(encoding="utf-8")):
                readers.append(str(path.relative_to(ROOT)))
    assert not readers


def test_a_variable_set_after_import_counts(monkeypatch, tmp_path):
    monkeypatch.setenv("RUBRICFLOW_WAREHOUSE", str(tmp_path / "x.duckdb"))
    from rubricflow.warehouse.db import default_path

    assert settings().warehouse == str(tmp_path / "x.duckdb") and default_path() == tmp_path / "x.duckdb"
