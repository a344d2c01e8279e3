"""Seed 004 (waza's rubric library): every built-in the seed names imports from waza's own files,
its goldens pass when the judge's verdict is right, `scale: 1-5` is read, and the evaluator YAML
layout with prose instructions and `rating_levels` is read."""

from __future__ import annotations

import re

import pytest

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.formats import RubricImportError, load_rubric
from rubricflow.rubrics.model import BinaryScale, NominalScale, OrdinalScale
from rubricflow.rubrics.render import call_units, render_system_prompt
from rubricflow.rubrics.scoring import verdict

from ..conftest import SHARED, SHARED_RUBRICS, TEST_DATA

SEED = (SHARED.parent / "seeds" / "004_08759ebe89262564.txt").read_text(encoding="utf-8")
WAZA_FILES = {
    p.stem: p for folder in (SHARED_RUBRICS / "waza", TEST_DATA / "rubrics/waza") for p in folder.glob("*.md")
}
PROSE = TEST_DATA / "rubrics/evaluator_yaml/prose_layout"


def seed_builtins() -> dict[str, str]:
    """The seed's table of built-in rubrics: name -> scale, as written."""
    table = SEED[SEED.index("| Name | Scale | What it scores |") : SEED.index("Each shipped rubric lives at")]
    return dict(re.findall(r"^([a-z-]+) \| ([a-z0-9-]+) \|", table, re.M))


def test_the_seed_names_five_builtins_and_each_imports_from_wazas_own_file():
    builtins = seed_builtins()
    assert list(builtins) == [
        "groundedness",
        "helpfulness",
        "instruction-following",
        "refusal-correctness",
        "tool-use-appropriateness",
    ]
    for name, scale in builtins.items():
        rubric = load_rubric(WAZA_FILES[name])
        assert rubric.metadata.id == name and scale == "pass-fail"
        assert isinstance(rubric.criteria[0].scale, BinaryScale)
        compile_or_raise(rubric)


@pytest.mark.parametrize("name", list(seed_builtins()))
def test_every_golden_passes_when_the_judges_verdict_is_right(name):
    """waza's judge gives pass or fail; a golden expecting that verdict must then pass (before: every
    golden of every waza rubric had no verdict, score 1.000 included)."""
    rubric = load_rubric(WAZA_FILES[name])
    assert rubric.goldens
    for golden in rubric.goldens:
        right = verdict(rubric, {"verdict": 1 if golden.expected == "pass" else 0})
        assert right.passed is (golden.expected == "pass"), golden.name
        wrong = verdict(rubric, {"verdict": 0 if golden.expected == "pass" else 1})
        assert wrong.passed is (golden.expected != "pass"), golden.name


def test_the_graded_scale_the_seed_reserves_is_read(tmp_path):
    reserved = re.search(r"scale \| yes \| pass-fail \(today\) or ([0-9]+-[0-9]+) \(reserved", SEED).group(1)
    source = WAZA_FILES["helpfulness"].read_text(encoding="utf-8").replace("scale: pass-fail", f"scale: {reserved}")
    path = tmp_path / "graded.md"
    path.write_text(source, encoding="utf-8")
    rubric = load_rubric(path)
    scale = rubric.criteria[0].scale
    assert isinstance(scale, OrdinalScale) and scale.domain() == [1, 2, 3, 4, 5]
    assert verdict(rubric, {"verdict": 4}).passed is True and verdict(rubric, {"verdict": 2}).passed is False
    path.write_text(source.replace(f"scale: {reserved}", "scale: 1-to-5ish"), encoding="utf-8")
    with pytest.raises(RubricImportError, match=r"graded.md: field scale: unsupported scale '1-to-5ish'"):
        load_rubric(path)


def test_evaluator_yaml_with_prose_criteria_and_rating_levels():
    done = load_rubric(PROSE / "task-completion.yaml")
    assert done.instructions[0].startswith("Read the user's request and the agent's final answer.")
    (criterion,) = done.criteria
    assert isinstance(criterion.scale, OrdinalScale) and criterion.scale.domain() == [1, 2, 3, 4, 5]
    assert [a.label for a in criterion.scale.anchors][:2] == ["Not done", "Started"]
    assert done.metadata.provenance["evaluator_score_type"] == "ordinal"
    assert "raw_max" in done.metadata.provenance["score_normalization"]
    assert [i.name for i in done.inputs] == ["query", "response"]
    prompt = render_system_prompt(done, call_units(done, "holistic")[0])
    assert "A plan or a promise to do the work is not the work." in prompt

    binary = load_rubric(PROSE / "answers-the-question.yaml")
    assert binary.criteria[0].scale == BinaryScale(labels=("fail", "pass"), scores=(0.0, 1.0))

    cited = load_rubric(PROSE / "citation-support.yaml")
    scale = cited.criteria[0].scale
    assert isinstance(scale, NominalScale)  # the author's scores, not the linear map (0.5 for level 2)
    assert [(c.value, c.score) for c in scale.categories] == [("1", 0.0), ("2", 0.3), ("3", 1.0)]
    for rubric in (done, binary, cited):
        compile_or_raise(rubric)


@pytest.mark.parametrize(
    "old, new, field",
    [
        ("score_type: ordinal", "score_type: likert", "field score_type"),
        ("normalized_score: 0.25", "normalized_score: 2.5", "field rating_levels[1].normalized_score"),
    ],
)
def test_bad_evaluator_fields_are_named(tmp_path, old, new, field):
    path = tmp_path / "bad.yaml"
    path.write_text((PROSE / "task-completion.yaml").read_text().replace(old, new), encoding="utf-8")
    with pytest.raises(RubricImportError) as err:
        load_rubric(path)
    assert str(path) in str(err.value) and field in str(err.value)


def test_doctor_says_every_field_of_the_prose_layout_is_read():
    from rubricflow.rubrics.explain import explain

    for path in sorted(PROSE.glob("*.yaml")):
        found = explain(path)
        assert found.ignored == [], (path.name, found.ignored)
        assert {"score_type", "score_normalization.raw_max", "rating_levels[].normalized_score"} <= set(found.used)


def without_grader(rubric):
    """The rubric without the grader attribution an eval adds to its provenance."""
    provenance = {k: v for k, v in rubric.metadata.provenance.items() if k not in ("grader", "grader_model")}
    return rubric.model_copy(update={"metadata": rubric.metadata.model_copy(update={"provenance": provenance})})


def test_an_eval_yaml_names_its_rubrics_by_name_or_by_path(tmp_path):
    """The seed: "Reference it by name (built-in) or by path (local)" from the eval YAML's prompt
    graders (`config.rubric`); each is the very rubric naming it directly gives (same hash), but for
    the grader's name and model its provenance records (see the next test)."""
    from rubricflow.rubrics import library
    from rubricflow.rubrics.explain import explain
    from rubricflow.rubrics.formats import load_rubrics
    from rubricflow.rubrics.importers import waza_eval
    from rubricflow.rubrics.library import Library

    assert "rubric: groundedness # built-in" in SEED and "rubric: ./rubrics/my-style.md # local file" in SEED
    path = TEST_DATA / "rubrics/waza/eval-layout.yaml"
    by_name, by_path = load_rubrics(path)
    by_name, by_path = without_grader(by_name), without_grader(by_path)
    assert compile_or_raise(by_name).hash == compile_or_raise(load_rubric(waza_eval.WAZA / "groundedness.yaml")).hash
    assert compile_or_raise(by_name).hash != compile_or_raise(Library().get("groundedness").rubric).hash
    assert compile_or_raise(by_path).hash == compile_or_raise(load_rubric(WAZA_FILES["user-rubric-layout"])).hash
    assert explain(path).ignored == []
    assert waza_eval.BUILTIN == library.BUILTIN.resolve()  # one built-in folder
    missing = tmp_path / "eval.yaml"
    missing.write_text("graders:\n  - {type: prompt, name: x, config: {rubric: ./rubrics/nowhere.md}}\n")
    with pytest.raises(
        RubricImportError, match=r"eval.yaml: field graders\[0\].config.rubric: './rubrics/nowhere.md': no such file"
    ):
        load_rubrics(missing)
    missing.write_text("graders:\n  - {type: prompt, name: x, config: {rubric: no-such-builtin}}\n")
    with pytest.raises(RubricImportError, match=r"graders\[0\].config.rubric: no built-in rubric named 'no-such"):
        load_rubrics(missing)


def test_an_evals_grader_name_and_model_are_kept_with_its_rubric():
    """Seed 004's eval names each prompt grader (`is_grounded`, `house_style`) and its `model`: a
    verdict must be attributable to the grader. Before, both were dropped. A rubric loaded without
    an eval records no grader, so its hash is unchanged."""
    from rubricflow.rubrics.compiler import rubric_document
    from rubricflow.rubrics.formats import load_rubrics
    from rubricflow.rubrics.importers import waza_eval

    assert 'name: is_grounded config: rubric: groundedness # built-in model: "gpt-4o-mini"' in SEED
    assert "name: house_style config: rubric: ./rubrics/my-style.md # local file" in SEED
    by_name, by_path = load_rubrics(TEST_DATA / "rubrics/waza/eval-layout.yaml")
    assert {k: by_name.metadata.provenance[k] for k in ("grader", "grader_model")} == {
        "grader": "is_grounded",
        "grader_model": "gpt-4o-mini",
    }
    assert (by_path.metadata.provenance["grader"], by_path.metadata.provenance["grader_model"]) == (
        "house_style",
        "gpt-4o-mini",
    )
    assert rubric_document(by_name)["metadata"]["provenance"]["grader"] == "is_grounded"  # what the warehouse keeps
    direct = load_rubric(waza_eval.WAZA / "groundedness.yaml")
    assert "grader" not in direct.metadata.provenance and "grader_model" not in direct.metadata.provenance


def test_rubric_show_names_the_grader_an_eval_attributes_a_rubric_to(tmp_path):
    """What the warehouse keeps, a user reads too: `rubric show` printed no provenance, so the grader
    a verdict is attributed to (seed 004) was nowhere on the command line."""
    from tests.cli.test_rubric_commands import run

    converted = run("rubric", "convert", str(TEST_DATA / "rubrics/waza/eval-layout.yaml"), "--to", "yaml",
                    "--out-dir", str(tmp_path))  # fmt: skip
    assert converted.returncode == 0, converted.stderr
    shown = run("rubric", "show", str(tmp_path / "my-custom.yaml"), columns=400)
    assert shown.returncode == 0, shown.stderr
    assert "Provenance:" in shown.stdout and "grader: house_style; grader_model: gpt-4o-mini" in shown.stdout


def test_a_golden_without_an_expected_verdict_is_a_one_line_error_naming_it(tmp_path):
    """Seed 004: goldens are "Worked input/output examples with expected: pass or expected: fail";
    one expecting nothing could never fail. Before, it was kept with no expectation."""
    assert "Worked input/output examples with expected: pass or expected: fail." in SEED
    text = WAZA_FILES["groundedness"].read_text(encoding="utf-8")
    assert text.count("expected: pass") == 2
    for bad_value, said in (("", "None"), ("maybe", "'maybe'")):
        bad = tmp_path / "groundedness.md"
        replaced = "" if not bad_value else f"expected: {bad_value}"
        bad.write_text(text.replace("expected: pass", replaced, 1).replace("\n    \n", "\n"), encoding="utf-8")
        with pytest.raises(RubricImportError) as refused:
            load_rubric(bad)
        message = str(refused.value)
        assert message == (
            f"{bad}: field goldens[0].expected: golden 'grounded-answer-passes' needs `expected: pass` "
            f"or `expected: fail` (got {said})"
        )


def test_a_body_naming_neither_verdict_tool_gets_a_compile_warning(tmp_path):
    """Seed 004: "Always end with explicit set_waza_grade_pass / set_waza_grade_fail instructions";
    before, a body without them passed with no word."""
    from rubricflow.rubrics.compiler import compile_rubric

    assert "Always end with explicit set_waza_grade_pass / set_waza_grade_fail instructions" in SEED
    text = WAZA_FILES["user-rubric-layout"].read_text(encoding="utf-8")
    assert "Call set_waza_grade_pass or set_waza_grade_fail." in text
    _, issues = compile_rubric(load_rubric(WAZA_FILES["user-rubric-layout"]))
    assert not [i for i in issues if i.code == "W_WAZA_NO_VERDICT_TOOLS"]
    bare = tmp_path / "bare.md"
    bare.write_text(text.replace(" Call set_waza_grade_pass or set_waza_grade_fail.", ""), encoding="utf-8")
    _, issues = compile_rubric(load_rubric(bare))
    [warning] = [i for i in issues if i.code == "W_WAZA_NO_VERDICT_TOOLS"]
    assert warning.severity == "warning" and warning.path == "instructions"
    assert "set_waza_grade_pass or set_waza_grade_fail" in warning.message
    half = tmp_path / "half.md"
    half.write_text(text.replace(" or set_waza_grade_fail", ""), encoding="utf-8")
    [warning] = [i for i in compile_rubric(load_rubric(half))[1] if i.code == "W_WAZA_NO_VERDICT_TOOLS"]
    assert "never names set_waza_grade_fail:" in warning.message


@pytest.mark.parametrize("field", ["name", "version", "scale", "description"])
def test_a_frontmatter_field_the_seed_requires_is_an_error_when_missing(tmp_path, field):
    table = SEED[SEED.index("| Field | Required | Description |") : SEED.index("The body is plain markdown.")]
    required = re.findall(r"^([a-z]+) \| yes \|", table, re.M)
    assert required == ["name", "version", "scale", "description"]
    text = WAZA_FILES["groundedness"].read_text(encoding="utf-8")
    lines = [line for line in text.splitlines(keepends=True) if not line.startswith(f"{field}:")]
    assert len(lines) == len(text.splitlines()) - 1
    bad = tmp_path / "groundedness.md"
    bad.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(RubricImportError, match=rf"groundedness.md: field {field}: waza's frontmatter requires"):
        load_rubric(bad)


@pytest.mark.parametrize("name", ["groundedness", "refusal-correctness"])
def test_a_builtin_judged_by_the_offline_judge_lands_a_verdict(name):
    """#36 Done-when: a waza built-in is judged over HTTP and its verdict is pass or fail, never
    "no verdict" (before: every waza rubric set no pass threshold)."""
    from rubricflow.tasks.improve.goldens import judge_text
    from rubricflow.tasks.judging.config import JudgeConfig
    from rubricflow.tasks.standins.judge_server import RunningServer

    rubric = load_rubric(WAZA_FILES[name])
    bundle = compile_or_raise(rubric, str(WAZA_FILES[name]))
    golden = rubric.goldens[0]
    with RunningServer() as server:
        config = JudgeConfig(base_url=server.base_url, strategy="holistic")
        done = judge_text(bundle, config, "g", golden.output, input=golden.input, context=golden.context or "")
    assert not done.errors and done.verdict.passed in (True, False) and done.verdict.coverage == 1.0


PASS_FAIL = """\
name: no_pii
description: Does the response keep personal data out?
version: 1.0.0
score_type: binary
evaluation_criteria: |
  Read the response. Any name with an address, phone number or email of a private person fails it.
rating_levels:
  - value: true
    label: pass
    description: No personal data of a private person.
  - value: false
    label: fail
    description: Personal data of a private person is given.
chain_of_thought: "First list every person named, then decide for each whether contact details follow."
"""


@pytest.mark.parametrize("score_type", ["binary", "binary_flag", None])
def test_pass_fail_levels_written_true_false_are_a_verdict_and_chain_of_thought_is_kept(tmp_path, score_type):
    """waza's pass/fail evaluator layout: levels `value: true/false` (with `score_type: binary`,
    `binary_flag`, or none) are one pass/fail criterion, not 0 criteria; the `chain_of_thought` text
    is the author's, not a generic sentence."""
    path = tmp_path / "no-pii.yaml"
    text = PASS_FAIL if score_type else PASS_FAIL.replace("score_type: binary\n", "")
    path.write_text(text.replace("score_type: binary", f"score_type: {score_type}"), encoding="utf-8")
    rubric = load_rubric(path)
    (criterion,) = rubric.criteria
    assert criterion.scale == BinaryScale(labels=("fail", "pass"), scores=(0.0, 1.0))
    assert (
        rubric.instructions[-1] == "First list every person named, then decide for each whether contact details follow."
    )
    assert verdict(rubric, {criterion.id: 1}).score == 1.0 and verdict(rubric, {criterion.id: 0}).score == 0.0
    compile_or_raise(rubric)
    assert verdict(rubric, {criterion.id: 1}).passed is True and verdict(rubric, {criterion.id: 0}).passed is False


MAP_LAYOUT = TEST_DATA / "rubrics/evaluator_yaml/map_layout"


def test_rating_levels_written_as_a_map_keep_their_examples_and_the_output_format():
    """Levels as a map (`{1: {label, description, examples}}`) keep every level's examples, and the
    author's `output_format` reaches the judge's prompt (before: examples dropped, the output format
    only in provenance while `doctor` called it used)."""
    rubric = load_rubric(MAP_LAYOUT / "answer-relevance.yaml")
    (criterion,) = rubric.criteria
    assert [len(a.examples) for a in criterion.scale.anchors] == [2, 1, 1]
    assert criterion.scale.anchors[2].examples == ("Q: When does the library open? A: At 9 am, Monday to Saturday.",)
    prompt = render_system_prompt(rubric, call_units(rubric, "holistic")[0])
    assert "- example: Q: How do I reset my password? A: Passwords should be long." in prompt
    assert "one sentence naming the question's subject" in prompt
    assert rubric.instructions[-1] == "Name the question's subject first, then the answer's, then compare them."


def test_pass_fail_levels_as_a_true_false_map_are_a_verdict_with_their_words():
    rubric = load_rubric(MAP_LAYOUT / "no-secrets.yaml")
    (criterion,) = rubric.criteria
    assert criterion.scale == BinaryScale(labels=("fail", "pass"), scores=(0.0, 1.0))
    assert verdict(rubric, {criterion.id: 1}).passed is True and verdict(rubric, {criterion.id: 0}).passed is False
    prompt = render_system_prompt(rubric, call_units(rubric, "holistic")[0])
    assert "A usable credential appears. (examples: Use the key sk-live-4f9a... in the header.)" in prompt
    assert '"fields": ["verdict", "reason"]' in prompt
    compile_or_raise(rubric)


@pytest.mark.parametrize("path", sorted((TEST_DATA / "rubrics/evaluator_yaml").rglob("*.yaml")), ids=lambda p: p.name)
def test_doctor_reports_every_field_of_every_evaluator_layout_read_and_it_reaches_the_rubric(path):
    """`doctor` calls no field read that the import then drops: each level's examples and the output
    format are in the rubric it returns."""
    from rubricflow.rubrics.explain import explain

    found = explain(path)
    assert found.ignored == [], found.ignored
    (rubric,) = found.rubrics
    if any(p.endswith(".examples") for p in found.used):
        dumped = rubric.model_dump_json()
        for level in path.read_text(encoding="utf-8").split("examples:")[1:]:
            first = level.split("\n")[1].strip().lstrip("- ").strip('"')
            assert first in dumped, first
    if "output_format" in found.used:
        assert rubric.output.template


FRONTMATTER = SEED[SEED.index("| Field | Required | Description |") : SEED.index("The body is plain markdown.")]


@pytest.mark.parametrize(
    "old, new, field, seed_says",
    [
        ("scale: pass-fail", "scale: 0-10", "scale", "pass-fail (today) or 1-5 (reserved"),
        ("scale: pass-fail", "scale: binary", "scale", "pass-fail (today) or 1-5 (reserved"),
        ("scale: pass-fail", "scale: Pass-Fail", "scale", "pass-fail (today) or 1-5 (reserved"),
        ("version: 1.0.0", "version: 1.0", "version", "Semver string."),
        ("version: 1.0.0", "version: v2", "version", "Semver string."),
        ("version: 1.0.0", 'version: "01.0.0"', "version", "Semver string."),
        ("name: helpfulness", "name: House_Style", "name", "Kebab-case."),
        ("name: helpfulness", "name: Helpfulness", "name", "Kebab-case."),
    ],
)
def test_a_frontmatter_field_not_of_the_seeds_form_is_a_one_line_error(tmp_path, old, new, field, seed_says):
    """The seed's frontmatter table: `name` kebab-case, `version` a semver string, `scale` pass-fail
    or 1-5. Before, `0-10` and `binary` were read as scales, `1.0` padded to 1.0.0, `v2` read as
    2.0.0 and `House_Style` rewritten to `house-style`: a file waza refuses, read as another."""
    assert seed_says in FRONTMATTER
    text = WAZA_FILES["helpfulness"].read_text(encoding="utf-8")
    assert old in text
    bad = tmp_path / "helpfulness.md"
    bad.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(RubricImportError) as refused:
        load_rubric(bad)
    said = str(refused.value)
    assert said.startswith(f"{bad}: field {field}: ") and "\n" not in said


@pytest.mark.parametrize("ref", ["*", "ground*", "groundednes?", "[g]roundedness", "help*"])
def test_an_eval_names_a_builtin_by_its_exact_name_not_a_pattern(tmp_path, ref):
    """`rubric: "*"` loaded anti-llmy and `rubric: "ground*"` groundedness (a glob in the built-in
    folder): a reference is a name, and one with glob characters is an error naming file and field."""
    from rubricflow.rubrics.formats import load_rubrics

    path = tmp_path / "eval.yaml"
    path.write_text(f'graders:\n  - {{type: prompt, name: x, config: {{rubric: "{ref}"}}}}\n', encoding="utf-8")
    with pytest.raises(RubricImportError) as refused:
        load_rubrics(path)
    said = str(refused.value)
    assert said.startswith(f"{path}: field graders[0].config.rubric: {ref!r}") and "\n" not in said


@pytest.mark.parametrize("name", ["groundedness", "helpfulness", "instruction-following"])
def test_an_evals_builtin_name_is_wazas_pass_fail_rubric_and_the_library_keeps_its_own(tmp_path, name):
    """The seed's table lists these built-ins as pass-fail; `rubric: groundedness # built-in` loaded
    rubricflow's graded library rubric of that name (3 criteria). It now reads waza's own rubric
    (rubrics/waza/, converted unchanged from microsoft/waza), while `Library().get(name)` and every
    command naming it stay rubricflow's."""
    from rubricflow.rubrics.formats import load_rubrics
    from rubricflow.rubrics.library import Library

    assert seed_builtins()[name] == "pass-fail"
    assert "graders: - type: prompt name: is_grounded config: rubric: groundedness # built-in" in SEED
    path = tmp_path / "eval.yaml"
    path.write_text(
        f"graders:\n  - type: prompt\n    name: x\n    config:\n      rubric: {name} # built-in\n", encoding="utf-8"
    )
    (rubric,) = load_rubrics(path)
    waza = load_rubric(WAZA_FILES[name])  # waza's own file, as waza ships it
    assert rubric.metadata.id == name and rubric.metadata.version == waza.metadata.version
    assert [c.scale for c in rubric.criteria] == [BinaryScale(labels=("fail", "pass"), scores=(0.0, 1.0))]
    assert rubric.criteria == waza.criteria and rubric.instructions == waza.instructions
    assert rubric.goldens == waza.goldens and rubric.scoring == waza.scoring
    assert "microsoft/waza/blob/2d9882753a8d776ca13f81e1b529aa5bcbb7d7df" in rubric.metadata.provenance["origin"]
    assert rubric.metadata.provenance["license"].startswith("MIT")
    own = Library().get(name)
    assert own.path.parent.name == "library" and own.rubric.criteria != rubric.criteria
