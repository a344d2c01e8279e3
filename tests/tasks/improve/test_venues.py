"""Seed 003's venue-conditioned templates, as data: the shipped templates are the seed's table (ids,
modes, axes, in order), a new venue is a file on the search path (no code change), its hints reach the
prompt, and a template that breaks the seed's schema is refused naming the file and the field."""

from __future__ import annotations

import re

import pytest

from rubricflow.errors import InputError
from rubricflow.tasks.improve.paper_rubric import messages
from rubricflow.tasks.improve.venues import SHIPPED, load_venue, search_path, venue_ids
from tests.conftest import SHARED

SEED = (SHARED.parent / "seeds" / "003_54567a775465b711.txt").read_text(encoding="utf-8")
PAPER = "# A paper\n\n## Method\nWe train for ten epochs on one GPU.\n"


def seed_table() -> dict[str, tuple[str, list[str]]]:
    table = SEED[SEED.index("### Shipped templates") : SEED.index("### Adding a new venue")]
    rows = re.findall(r"^\| `(\w+)` \| `(\w+)` \| (.+) \|$", table, re.M)
    return {i: (mode, [] if axes.startswith("(") else axes.split(", ")) for i, mode, axes in rows if i != "id"}


def test_the_shipped_templates_are_the_seeds_table():
    table = seed_table()
    assert list(table) == ["generic", "sc", "neurips", "nature"]
    for venue, (mode, axes) in table.items():
        template = load_venue(venue)
        assert template["mode"] == mode and [a["id"] for a in template["top_level_axes"]] == axes
    assert {"agent_benchmark", "paper_audit"} <= set(venue_ids())  # the two modes by name, as before


def test_a_new_venue_is_a_file_on_the_search_path_and_its_hints_reach_the_prompt(tmp_path, monkeypatch):
    assert "No code change is required — the loader picks up new files via" in SEED
    folder = tmp_path / "config" / "paperbench_rubrics"
    folder.mkdir(parents=True)
    (folder / "icml.yaml").write_text(
        "id: icml\nversion: '2026'\nvenue: ICML\ndomain: ML\nmode: paper_audit\n"
        "top_level_axes:\n  - {id: baselines_tuned, name: Baselines tuned, weight: 3, description: Every baseline got a sweep.}\n"
        "prompt_overrides:\n  system_hint: Audit the paper against ICML's reviewer form.\n"
        "  leaf_style: Phrase each leaf as a YES/NO question.\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    assert "icml" in venue_ids()
    system = messages(PAPER, "icml")[0]["content"]
    assert "Venue: ICML (paper_audit). Audit the paper against ICML's reviewer form." in system
    assert "Phrase each leaf as a YES/NO question." in system
    assert "- baselines_tuned: Baselines tuned (weight 3)\n  Every baseline got a sweep." in system
    assert messages(PAPER, str(folder / "icml.yaml")) == messages(PAPER, "icml")  # a template's path works too


@pytest.mark.parametrize(
    "text, field",
    [
        ("id: other\nmode: agent_benchmark\nprompt_overrides: {system_hint: x}\n", "field id: 'other' must match"),
        ("id: bad\nmode: survey\nprompt_overrides: {system_hint: x}\n", "field mode: 'survey' is not one of"),
        ("id: bad\nmode: paper_audit\nprompt_overrides: {system_hint: x}\n", "field top_level_axes: required"),
        ("id: bad\nmode: agent_benchmark\n", "field prompt_overrides.system_hint: required"),
        (
            "id: bad\nmode: paper_audit\ntop_level_axes:\n  - {id: a, name: A, weight: 1, description: x, y}\n"
            "prompt_overrides: {system_hint: x}\n",
            "field top_level_axes[0]: unknown field 'y'",
        ),
    ],
)
def test_a_template_off_the_seeds_schema_is_refused_naming_file_and_field(tmp_path, text, field):
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_venue(str(path))
    assert str(path) in str(err.value) and field in str(err.value)
    with pytest.raises(InputError, match=r"--venue 'journal': no such template; choose one of agent_benchmark"):
        load_venue("journal")


def _template(folder, venue: str, hint: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{venue}.yaml").write_text(
        f"id: {venue}\nmode: agent_benchmark\nprompt_overrides: {{system_hint: {hint}}}\n", encoding="utf-8"
    )


def test_the_search_path_is_the_seeds_first_match_wins(tmp_path, monkeypatch):
    """Seed 003's discovery order: `$ARI_PAPERBENCH_RUBRIC_DIR`, `<cwd>/ari-core/config/paperbench_rubrics/`,
    `<cwd>/config/paperbench_rubrics/`, then the shipped ones; the first two were not searched."""
    order = re.findall(r"^\d\. `([^`]+)`", SEED[SEED.index("First match wins:") :], re.M)
    assert order == [
        "$ARI_PAPERBENCH_RUBRIC_DIR",
        "<cwd>/ari-core/config/paperbench_rubrics/",
        "<cwd>/config/paperbench_rubrics/",
    ]
    env, ari, local = (
        tmp_path / "env",
        tmp_path / "ari-core/config/paperbench_rubrics",
        tmp_path / "config/paperbench_rubrics",
    )
    for folder, where in ((env, "env"), (ari, "ari-core"), (local, "config")):
        _template(folder, "shared", f"from {where}")
        _template(folder, f"only_{where.replace('-', '_')}", f"from {where}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARI_PAPERBENCH_RUBRIC_DIR", str(env))
    assert search_path() == [env, ari, local, SHIPPED]
    assert load_venue("shared")["prompt_overrides"]["system_hint"] == "from env"
    assert load_venue("only_ari_core")["prompt_overrides"]["system_hint"] == "from ari-core"
    assert load_venue("only_config")["prompt_overrides"]["system_hint"] == "from config"
    monkeypatch.delenv("ARI_PAPERBENCH_RUBRIC_DIR")
    assert search_path() == [ari, local, SHIPPED]
    assert load_venue("shared")["prompt_overrides"]["system_hint"] == "from ari-core"


@pytest.mark.parametrize(
    "axis, field",
    [
        (
            "{id: a, weight: 1, description: d}",
            "field top_level_axes[0].name: a non-empty string is required, found None",
        ),
        ("{id: a, name: A, weight: 1}", "field top_level_axes[0].description: a non-empty string is required"),
        ("{id: a, name: '', weight: 1, description: d}", "field top_level_axes[0].name: a non-empty string"),
        (
            "{id: a, name: A, weight: true, description: d}",
            "field top_level_axes[0].weight: a positive integer is required, found True",
        ),
        (
            "{id: a, name: A, weight: 0, description: d}",
            "field top_level_axes[0].weight: a positive integer is required, found 0",
        ),
        ("{id: a, name: A, weight: 1.5, description: d}", "field top_level_axes[0].weight: a positive integer"),
    ],
)
def test_an_axis_needs_a_name_a_description_and_a_positive_integer_weight(tmp_path, axis, field):
    """Seed 003's axis: `name: <human-readable name>`, `weight: <positive integer>`, `description:
    <one-paragraph requirement ...>`. An axis without name or description, or with `weight: true`, passed."""
    assert "    weight: <positive integer>" in SEED and "    name: <human-readable name>" in SEED
    path = tmp_path / "bad.yaml"
    path.write_text(
        f"id: bad\nmode: paper_audit\ntop_level_axes:\n  - {axis}\nprompt_overrides: {{system_hint: x}}\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as err:
        load_venue(str(path))
    assert str(err.value).startswith(f"{path}: {field}") and "\n" not in str(err.value)
