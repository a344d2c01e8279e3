"""Every compiler finding is explained with a one-line YAML fix, `rubric validate` prints them for
warnings too, and a value cut at a comma inside an inline mapping is named as such."""

import re

import pytest
import yaml
from typer.testing import CliRunner

from rubricflow.cli import app
from rubricflow.rubrics.findings import FINDINGS
from rubricflow.rubrics.formats import RubricImportError, loads_rubrics

from ..conftest import ROOT


def emitted_codes() -> set[str]:
    source = (ROOT / "rubrics" / "compiler.py").read_text()
    return set(re.findall(r'"((?:[NS]\d|E|W)_[A-Z_]+)"', source))


def test_every_code_the_compiler_emits_is_explained_with_a_fix_that_parses():
    codes = emitted_codes()
    assert {"S5_NO_RITUAL", "S1_UNANCHORED", "E_UNKNOWN_PATTERN", "W_UNUSED_PATTERN"} <= codes
    assert codes <= set(FINDINGS), f"explain {sorted(codes - set(FINDINGS))} in rubrics/findings.py"
    for means, fix in FINDINGS.values():
        assert means and "\n" not in fix
        yaml.safe_load(fix)  # one line of valid YAML


def test_validate_lists_every_warning_with_its_meaning_and_fix(tmp_path):
    path = tmp_path / "bare.yaml"
    path.write_text(
        "metadata: {id: bare, version: 1.0.0}\ngoal: Judge replies.\n"
        "criteria:\n  - id: correct\n    description: Right or not.\n    scale: {kind: numeric, min: 0, max: 10}\n"
    )
    result = CliRunner().invoke(app, ["rubric", "validate", str(path)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for code in ("S1_UNANCHORED", "S4_NO_DISQUALIFIERS", "S5_NO_RITUAL"):
        means, fix = FINDINGS[code]
        assert f"warning {code} at " in result.output
        assert f"means: {means}" in result.output and f"fix:   {fix}" in result.output


def test_a_key_with_spaces_gets_the_comma_hint_and_a_plain_typo_does_not():
    cut = (
        "metadata: {id: c, version: 1.0.0}\ncriteria:\n  - id: correct\n    scale:\n      kind: ordinal\n"
        "      anchors:\n        - {value: 1, description: Wrong, or unclear.}\n        - {value: 5, description: Right.}\n"
    )
    with pytest.raises(
        RubricImportError, match=r"'or unclear\.' has spaces: a comma inside \{\.\.\.\} starts a new key"
    ):
        loads_rubrics(cut, "cut.yaml")
    typo = "metadata: {id: c, version: 1.0.0}\ncriteria:\n  - id: correct\n    wieght: 2\n    scale: {kind: binary}\n"
    with pytest.raises(RubricImportError) as caught:
        loads_rubrics(typo, "typo.yaml")
    assert "wieght: Extra inputs are not permitted" in str(caught.value) and "comma" not in str(caught.value)


def test_the_docs_write_anchors_as_block_mappings():
    for page in (ROOT / "docs").glob("*.md"):
        assert not re.search(r"^\s*- \{value: .*description:", page.read_text(), re.M), page.name
