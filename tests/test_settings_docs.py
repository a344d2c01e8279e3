"""One settings tree (rubricflow/settings.py) reads the environment: each variable has a
description, docs/settings.md is generated from the tree, and no other module reads a variable
past it except the secrets scrubber and the CLI's entry point (tests/test_structure.py)."""

import re

from rubricflow.layout import package_dirs
from rubricflow.settings import GROUPS, settings
from rubricflow.settings_page import page

from .conftest import ROOT


def test_the_committed_settings_page_is_the_generated_one():
    committed = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert committed == page(), "run: python -m rubricflow.settings_page > docs/settings.md"


def test_every_setting_has_a_description_and_is_on_the_page():
    text = page()
    for prefix, group in GROUPS.items():
        for name, field in group.model_fields.items():
            assert field.description, f"{prefix}{name.upper()} has no description"
            assert f"| `{prefix}{name.upper()}` | {field.description} |" in text


def test_every_provider_variable_is_in_the_tree():
    """A provider's endpoint variable is a field of the tree (settings.endpoint refuses any other);
    its keys are listed on the page."""
    from rubricflow.tasks.judging.providers import key_variables, providers

    fields = {n.upper() for n in GROUPS[""].model_fields}
    for p in providers().values():
        assert p.base_url_variable in fields
        assert getattr(p, "endpoint_variable", "OPENAI_BASE_URL") in fields
    assert all(f"| `{v}` |" in page() for v in key_variables())


def test_no_module_reads_a_rubricflow_variable_but_the_settings():
    readers = []
    for folder in package_dirs(ROOT).values():
        for path in folder.rglob("*.py"):
            if re.search(r"(environ\.get|getenv)\(\s*[\"']RUBRICFLOW_", path.read_text(encoding="utf-8")):
                readers.append(str(path.relative_to(ROOT)))
    assert not readers


def test_a_variable_set_after_import_counts(monkeypatch, tmp_path):
    monkeypatch.setenv("RUBRICFLOW_WAREHOUSE", str(tmp_path / "x.duckdb"))
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    from rubricflow.tasks.judging.config import JudgeConfig
    from rubricflow.warehouse.db import default_path

    assert settings().warehouse == str(tmp_path / "x.duckdb") and default_path() == tmp_path / "x.duckdb"
    assert settings().prefect.api_url == "http://127.0.0.1:9/api"
    assert JudgeConfig().resolved_base_url() == "http://127.0.0.1:9/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8/v1")
    assert JudgeConfig().resolved_base_url() == "http://127.0.0.1:8/v1"
