"""Seed 002 (the Forge rubric library): its own User Story example, read verbatim from the seed,
keeps its id, artifact type and nested scoring, gets a verdict, and the seed's validation rules
and initial rubrics hold."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.formats import RubricImportError, dump_yaml, load_rubric
from rubricflow.rubrics.importers.forge import SCORING_FIELDS
from rubricflow.rubrics.library import Library, LibraryError
from rubricflow.rubrics.scoring import verdict

from ..conftest import EXE, SHARED

SEED = (SHARED.parent / "seeds" / "002_b26660f2a63faab6.txt").read_text(encoding="utf-8")


def fenced_yaml_after(heading: str) -> str:
    """The first ```yaml block after `heading`, exactly as the seed writes it."""
    after = SEED[SEED.index(heading) :]
    return re.search(r"```yaml\n(.*?)```", after, re.S).group(1)


EXAMPLE = fenced_yaml_after("### Example Rubric: User Story Quality")


@pytest.fixture
def example(tmp_path):
    path = tmp_path / "user_story_quality_v1.yaml"
    path.write_text(EXAMPLE, encoding="utf-8")
    return path


def test_the_seeds_example_keeps_id_artifact_type_and_nested_scoring(example):
    r = load_rubric(example)
    assert r.metadata.id == "user-story-quality-v1" and r.metadata.provenance["rubric_id"] == "user_story_quality_v1"
    assert r.metadata.artifact_type == "jira_tickets" and r.metadata.title == "User Story Quality"
    assert (r.scoring.pass_threshold, r.scoring.essential_minimum) == (0.625, 0.5)  # 3.5 and 3.0 on 1-5
    assert [c.id for c in r.criteria] == ["clarity", "testability"]
    assert [d.id for d in r.disqualifiers] == ["no_assumptions", "no_vague_language"]
    assert compile_or_raise(r).profile == "scoring"


def test_the_seeds_example_gets_a_verdict(example):
    r = load_rubric(example)
    good = verdict(r, {"clarity": 4, "testability": 4})
    assert good.score == pytest.approx(0.75) and good.passed is True
    assert verdict(r, {"clarity": 2, "testability": 5}).passed is False  # an essential criterion under 3.0
    assert verdict(r, {"clarity": 3, "testability": 3}).passed is False  # 0.5 under the pass threshold 0.625


def test_the_seeds_scoring_block_is_what_is_read():
    schema = fenced_yaml_after("### Rubric Schema")
    nested = re.search(r"\nscoring:\n((?:  .*\n)+)", schema).group(1)
    assert tuple(re.findall(r"^  (\w+):", nested, re.M)) == SCORING_FIELDS


def test_look_up_by_artifact_type(example):
    library = Library([example.parent])
    assert [e.id for e in library.find(artifact_type="jira_tickets")] == ["user-story-quality-v1"]
    assert library.find(artifact_type="prd") == []


def test_the_seeds_initial_rubrics_ship_with_their_artifact_types_and_criteria():
    table = SEED[SEED.index("### Initial Rubrics to Implement") : SEED.index("### Example Rubric")]
    rows = re.findall(r"\| `(\w+)` \| (\w+) \| (\d+) \(([^)]*)\) \|", table)
    assert len(rows) == 3
    library = Library()
    for rubric_id, artifact_type, count, names in rows:
        found = library.find(artifact_type=artifact_type)
        entry = next(e for e in found if e.rubric.metadata.provenance.get("rubric_id") == rubric_id)
        assert [c.id for c in entry.rubric.criteria] == [n.strip() for n in names.split(",")]
        assert len(entry.rubric.criteria) == int(count)
        assert verdict(entry.rubric, {c.id: 5 for c in entry.rubric.criteria}).passed is True


def refused(tmp_path, old: str, new: str) -> tuple[object, str]:
    """The seed's example with `old` made `new`, written and loaded: the file and the one error."""
    assert old in EXAMPLE
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(RubricImportError) as err:
        load_rubric(bad)
    return bad, str(err.value)


@pytest.mark.parametrize(
    "change, field",
    [
        (('      4: "Clear to most readers"\n', ""), "criteria[0].anchors"),
        (('      score_5: "GIVEN', '      score_4: "GIVEN'), "criteria[1].examples.score_5"),
        (("scoring:\n", 'calibration_dataset: "not a uri at all"\nscoring:\n'), "metadata.calibration_dataset"),
        (("  pass_threshold: 3.5", "  pass_threshold: 7"), "scoring.pass_threshold"),
        (('    weight: "essential"', '    weight: "critical"'), "criteria[0].weight: 'critical' is not one of"),
        (("    threshold: 3.5\n", ""), "criteria[1].threshold: the Forge schema requires one per criterion (RL-05)"),
        (('    weight: "essential"\n', ""), "criteria[0].weight: the Forge schema requires one per criterion (RL-06)"),
        (('artifact_type: "jira_tickets"\n', ""), "field artifact_type: the Forge schema requires one"),
        (('version: "1.0.0"', 'version: "1.0"'), "field version: '1.0' is not MAJOR.MINOR.PATCH (RL-04)"),
    ],
)
def test_the_seeds_validation_rules_name_file_and_field(tmp_path, change, field):
    bad, said = refused(tmp_path, *change)
    assert str(bad) in said and field in said


SCHEMA = fenced_yaml_after("### Rubric Schema")


@pytest.mark.parametrize(
    "change, field, schema_says",
    [
        (('    weight: "essential"', "    weight: 3"), "criteria[0].weight", "weight: enum (essential | important)"),
        (('    weight: "essential"', "    weight: 2.0"), "criteria[0].weight", "weight: enum (essential | important)"),
        (('name: "User Story Quality"\n', ""), "name", "name: string (required)\nversion"),
        (('name: "User Story Quality"', 'name: ""'), "name", "name: string (required)\nversion"),
        (
            ('    description: "The user story is clear and unambiguous"\n', ""),
            "criteria[0].description",
            "    description: string (required)",
        ),
        (
            ('  - name: "testability"\n    description:', "  - description:"),
            "criteria[1].name",
            "  - name: string (required)",
        ),
        (
            ('      2: "Partially clear but missing key context"', "      2: null"),
            "criteria[0].anchors.2",
            "2: string (required)",
        ),
        (
            ('      3: "Understandable but could be misinterpreted"', '      3: ""'),
            "criteria[0].anchors.3",
            "3: string (required",
        ),
        (("    threshold: 3.0", "    threshold: true"), "criteria[0].threshold", "threshold: number (required"),
        (
            ('      score_3: "User can login to the system"', '      score_9: "x"'),
            "criteria[0].examples.score_9",
            "score_3:",
        ),
        (
            ('      score_3: "User can login to the system"', "      score_3: null"),
            "criteria[0].examples.score_3",
            "score_3:",
        ),
    ],
)
def test_the_seeds_schema_types_are_one_line_errors_naming_file_and_field(tmp_path, change, field, schema_says):
    """The schema's `weight: enum (essential | important)`, its required strings (a rubric's and a
    criterion's name and description, every anchor), a numeric threshold and the scores examples
    are given at. Before, `weight: 3` weighed 3, `2: null` became the anchor text 'None', `3: ""`,
    a missing name or description and `threshold: true` (1.0) were read, `score_9` was an example."""
    assert schema_says in SCHEMA
    bad, said = refused(tmp_path, *change)
    assert said.startswith(f"{bad}: field {field}: ") and "\n" not in said


def test_a_forge_style_file_without_rubric_id_may_still_weigh_a_criterion_by_number(tmp_path):
    """The enum is the seed's schema (a file with `rubric_id`); rubricflow's looser Forge-style files
    (no `rubric_id`, as tests/data/forge_code_review.yaml) keep their numeric weights."""
    loose = EXAMPLE.replace('rubric_id: "user_story_quality_v1"\n', "").replace(
        '    weight: "essential"', "    weight: 3", 1
    )
    path = tmp_path / "loose.yaml"
    path.write_text(loose, encoding="utf-8")
    assert load_rubric(path).criteria[0].weight == 3.0


def test_a_calibration_dataset_uri_is_kept(tmp_path):
    path = tmp_path / "calibrated.yaml"
    uri = "https://example.org/labels/user-stories.jsonl"
    path.write_text(EXAMPLE.replace("scoring:\n", f"calibration_dataset: {uri}\nscoring:\n"), encoding="utf-8")
    assert load_rubric(path).metadata.calibration_dataset == uri


def test_doctor_says_every_field_of_the_seeds_example_is_read(example):
    from rubricflow.rubrics.explain import explain

    found = explain(example)
    assert found.ignored == [] and {"rubric_id", "artifact_type", "scoring.pass_threshold"} <= set(found.used)


def test_the_seeds_example_judged_by_the_offline_judge_gets_its_passed(example):
    """#36 Done-when: the seed's example loads, compiles, renders and is judged over HTTP, and the
    verdict it lands has `passed` set (NULL before nested scoring was read); a story in the vague
    words of its own disqualifier is disqualified."""
    from rubricflow.tasks.improve.goldens import judge_text
    from rubricflow.tasks.judging.config import JudgeConfig
    from rubricflow.tasks.standins.judge_server import RunningServer

    bundle = compile_or_raise(load_rubric(example), str(example))
    story = "As a shopper, I want to save my cart so that I can buy later. Given a saved cart, then I see it."
    with RunningServer() as server:
        config = JudgeConfig(base_url=server.base_url, strategy="holistic")
        good = judge_text(bundle, config, "story", story, input="")
        vague = judge_text(bundle, config, "vague", "Make checkout fast and user-friendly, etc.", input="")
    assert not good.errors and good.verdict.passed is True and good.verdict.coverage == 1.0
    assert {j.criterion_id for j in good.judgments if j.status == "scored"} == {"clarity", "testability"}
    assert vague.verdict.passed is False and vague.verdict.disqualified == ("no_vague_language",)


def test_the_seeds_example_beside_the_built_in_of_its_id_and_version_is_refused_naming_both(example):
    """The seed's User Story example has the id and version of the shipped built-in, with other
    content: a library holding both is refused, naming both files and what to do. (The advice was
    "give one of them another version"; RL-08 refuses a second Forge rubric_id whatever its version.)"""
    from rubricflow.rubrics.library import BUILTIN, LibraryError

    built_in = BUILTIN / "user_story_quality_v1.yaml"
    with pytest.raises(LibraryError) as refused:
        Library([BUILTIN, example.parent])
    said = str(refused.value)
    assert str(built_in) in said and str(example) in said and "\n" not in said
    assert said.startswith("duplicate rubric id user-story-quality-v1") and "give one its own rubric_id" in said


def forge_library(tmp_path, *changes: tuple[str, str]):
    """A library folder holding the seed's example and, per change, a copy with `old` made `new`."""
    folder = tmp_path / "library"
    folder.mkdir()
    (folder / "a.yaml").write_text(EXAMPLE, encoding="utf-8")
    for i, (old, new) in enumerate(changes):
        assert old in EXAMPLE
        (folder / f"b{i}.yaml").write_text(EXAMPLE.replace(old, new, 1), encoding="utf-8")
    return folder


def test_rl08_a_second_file_with_the_same_rubric_id_is_refused_whatever_its_version(tmp_path):
    """RL-08 "Library MUST prevent duplicate rubric IDs": "Attempt to add rubric with existing ID, verify
    rejection", PASS if rejected. Versions 1.0.0 and 1.1.0 of `user_story_quality_v1` were both kept, and
    the id then named whichever was newer."""
    assert "| RL-08 | Library MUST prevent duplicate rubric IDs | Collision test |" in SEED
    assert "| **How to verify** | Attempt to add rubric with existing ID, verify rejection |" in SEED
    folder = forge_library(tmp_path, ('version: "1.0.0"', 'version: "1.1.0"'))
    with pytest.raises(LibraryError) as refused:
        Library([folder])
    said = str(refused.value)
    assert said.startswith("duplicate rubric id user-story-quality-v1: ") and "\n" not in said
    assert f"{folder / 'a.yaml'} (rubric_id 'user_story_quality_v1', v1.0.0)" in said
    assert f"{folder / 'b0.yaml'} (rubric_id 'user_story_quality_v1', v1.1.0)" in said


@pytest.mark.parametrize("version", ["1.0.0", "2.0.0"])
def test_rl01_two_rubric_ids_that_kebab_case_alike_never_collide(tmp_path, version):
    """RL-01 "Rubrics MUST have unique IDs across the library", and "Always reference by ID": the ids
    `user_story_quality_v1` and `user-story-quality-v1` are both the library's user-story-quality-v1, so
    one could not be named by its own id (get('user_story_quality_v1') returned the other file, the
    newer). Refused, naming both files; a file keeps resolving by its own id when alone."""
    assert "| RL-01 | Rubrics MUST have unique IDs across the library | Uniqueness check |" in SEED
    assert "- **Don't embed rubrics in contracts** - Always reference by ID" in SEED
    other = ('rubric_id: "user_story_quality_v1"', 'rubric_id: "user-story-quality-v1"')
    folder = forge_library(tmp_path, other, ('version: "1.0.0"', f'version: "{version}"'))
    (folder / "b1.yaml").unlink()
    (folder / "b0.yaml").write_text(
        EXAMPLE.replace(*other).replace('version: "1.0.0"', f'version: "{version}"'), encoding="utf-8"
    )
    with pytest.raises(LibraryError) as refused:
        Library([folder])
    said = str(refused.value)
    assert "\n" not in said and str(folder / "a.yaml") in said and str(folder / "b0.yaml") in said
    assert "'user_story_quality_v1'" in said and "'user-story-quality-v1'" in said
    (folder / "a.yaml").unlink()
    assert Library([folder]).get("user-story-quality-v1").path == folder / "b0.yaml"


def test_a_forge_id_as_written_names_its_own_file_beside_a_native_namesake(tmp_path, example):
    """A native rubric of the library id user-story-quality-v1 at a newer version (rubricflow's own
    id@version library, which stays as it is) does not take the Forge file's written id."""
    native = tmp_path / "native"
    native.mkdir()
    rubric = load_rubric(example)
    newer = rubric.model_copy(
        update={"metadata": rubric.metadata.model_copy(update={"version": "2.0.0", "provenance": {}})}
    )
    (native / "user-story-quality-v1.yaml").write_text(dump_yaml(newer), encoding="utf-8")
    library = Library([example, native])
    assert library.get("user_story_quality_v1").path == example
    assert library.get("user_story_quality_v1@1.0.0").path == example
    assert library.get("user-story-quality-v1").version == "2.0.0"  # the library name: its newest version


def test_rl10_search_for_jira_tickets_returns_the_user_story_rubric(example):
    """RL-10: "Search for "jira_tickets" returns relevant rubrics", FAIL if no results: the search text
    is matched against the artifact type too (it found nothing), and TEXT may be left out with --type
    (it was required, and `search "" --type` is refused as an empty argument)."""
    assert '| **How to verify** | Search for "jira_tickets" returns relevant rubrics |' in SEED
    assert [e.id for e in Library([example.parent]).find("jira_tickets")] == ["user-story-quality-v1"]
    env = {k: v for k, v in os.environ.items() if k != "RUBRICFLOW_LIBRARY"} | {"COLUMNS": "250"}
    for args in (["jira_tickets"], ["--type", "jira_tickets"]):
        done = subprocess.run([EXE, "rubric", "search", *args], capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "1 rubrics" in done.stdout and "user_story_quality_v1.yaml" in done.stdout
    done = subprocess.run([EXE, "rubric", "search"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2 and "give TEXT to search for, --type ARTIFACT_TYPE or --tag TAG" in done.stderr


def test_a_threshold_written_as_a_string_is_refused_in_one_line(tmp_path):
    """The schema: `threshold: number (required, 1.0-5.0)`; float() read the string "3.5" as 3.5."""
    assert "    threshold: number (required, 1.0-5.0)" in SCHEMA
    bad, said = refused(tmp_path, "    threshold: 3.5", '    threshold: "3.5"')
    assert said == f"{bad}: field criteria[1].threshold: '3.5' is not a number (a quoted string: write it unquoted)"
