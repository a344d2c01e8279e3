"""Seed 001's example rubrics in the built-in library, checked against the seed's own description,
and its red-team calibration runner as a calibration-cases file: imported as goldens, run by
`rubricflow rubric test --cases` and `judge.test`."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

import rubricflow as rf
from rubricflow.rubrics.compiler import content_hash
from rubricflow.rubrics.constraints import check_constraint
from rubricflow.rubrics.library import resolve
from rubricflow.tasks.improve.calibration_cases import load_cases

from ..conftest import EXE, ROOT, SHARED

SEED = next((SHARED.parent / "seeds").glob("001_*.txt")).read_text(encoding="utf-8")
CASES = ROOT / "examples" / "red-team-cases.json"


def seed_paragraph(name: str) -> str:
    """The seed's one-paragraph description of an example rubric, e.g. `ComplianceJudge: evaluates ...`."""
    return next(line for line in SEED.splitlines() if line.startswith(name + ": "))


def test_the_compliance_judge_is_the_seeds():
    text = seed_paragraph("ComplianceJudge")
    judge = resolve("compliance-judge")
    criteria = re.search(r"(\d+) criteria \(([^)]*)\)", text)
    stated = [re.match(r"(.+) (\d+)-(\d+)$", part.strip()).groups() for part in criteria.group(2).split(",")]
    anchored = [c for c in judge.criteria if "verdict" not in c.tags]  # the verdict is asked apart (R1-R4)
    assert int(criteria.group(1)) == len(anchored) == len(stated)
    for c, (title, low, high) in zip(anchored, stated, strict=True):
        assert c.title == title and [a.value for a in c.scale.anchors][::2] == [int(low), int(high)]
    assert int(re.search(r"(\d+) disqualifiers", text).group(1)) == len(judge.disqualifiers)
    assert int(re.search(r"(\d+)-pattern regex library", text).group(1)) == len(judge.patterns)
    assert "strict compliance-judge role" in text and judge.role.persona.startswith("A strict compliance judge")
    assert judge.role.authority == "absolute" and judge.role.domain
    assert "BECAUSE: output constraint" in text and [c.prefix for c in judge.output.constraints] == ["BECAUSE:"]
    labels = re.search(r"custom decision thresholds \(([^)]*)\)", text).group(1).split(" / ")
    assert [lab.label for lab in judge.scoring.labels] == labels == ["Yes", "Somewhat", "No"]
    assert judge.scoring.disqualified_label == "No"


def test_calibration_cases_become_goldens_expecting_their_judgement(tmp_path):
    rubric = load_cases(CASES)
    cases = json.loads(CASES.read_text())["cases"]
    added = rubric.goldens[-len(cases) :]
    assert [(g.name, g.input, g.output, g.expected_label) for g in added] == [
        (c["name"], c["prompt"], c["response"], c["expected"]) for c in cases
    ]
    # a golden without an expected label keeps the hash it always had
    assert content_hash(resolve("compliance-judge")) == content_hash(
        rubric.model_copy(update={"goldens": rubric.goldens[:4]})
    )

    def bad(doc: dict, match: str) -> None:
        path = tmp_path / "cases.json"
        path.write_text(json.dumps(doc))
        with pytest.raises(rf.InputError, match=match):
            load_cases(path)

    base = json.loads(CASES.read_text())
    bad({k: v for k, v in base.items() if k != "allowed_judgements"}, r"cases.json: .*missing \['allowed_judgements'\]")
    bad({**base, "cases": [{**cases[0], "expected": "Maybe"}]}, r"case 1 expects 'Maybe', not one of allowed")
    bad({**base, "cases": [{"prompt": "x"}]}, r"case 1 has no response")
    bad({**base, "allowed_judgements": "Yes,Perhaps"}, r"allowed_judgements \['Perhaps'\] are not labels of rubric")
    bad({**base, "rubric": "no-such-rubric"}, r"no-such-rubric")


@pytest.mark.slow
def test_rubric_test_runs_the_cases_and_a_wrong_expectation_fails(tmp_path):
    doc = json.loads(CASES.read_text())
    doc["rubric"] = str(ROOT / "rubrics" / "library" / "compliance-judge.yaml")  # a path works as well as a name
    doc["cases"][2]["expected"] = "Somewhat"
    (tmp_path / "cases.json").write_text(json.dumps(doc))
    env = {**os.environ, "OPENAI_BASE_URL": "", "COLUMNS": "200"}
    run = subprocess.run(
        [EXE, "rubric", "test", "--cases", "cases.json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = " ".join(run.stdout.split())
    assert run.returncode == 1 and "7/8 goldens pass" in out, run.stdout + run.stderr
    assert "expected Somewhat, got No" in out
    with rf.Judge.offline(strategy="holistic") as judge:
        results = judge.test(rf.load_calibration_cases(CASES))
    assert [r.ok for r in results] == [True] * 8 and [r.got for r in results[4:]] == ["Yes", "Yes", "No", "No"]


# ------------------------------------------------ AntiLLMY, ZinsserJudge XXL and CompletenessJudge at full size


def _scales(rubric) -> list[tuple[str, str]]:
    """Each criterion as (title, its range as the seed writes it: `0-3`, or `binary`)."""
    return [
        (c.title, "binary" if c.scale.kind == "binary" else f"{c.scale.low}-{c.scale.high}") for c in rubric.criteria
    ]


def test_anti_llmy_is_the_seeds_at_full_size():
    text, r = seed_paragraph("AntiLLMY"), resolve("anti-llmy")
    stated = re.search(r"5 criteria \(([^)]*) -- each 0-3\)", text).group(1).split(", ")
    assert [t.split(" ")[0] for t, _ in _scales(r)] == [s.split("/")[0].split(" ")[0] for s in stated]
    assert {s for _, s in _scales(r)} == {"0-3"}
    dqs = re.search(r"3 disqualifiers \(([^)]*)\)", text).group(1).split(", ")
    assert len(r.disqualifiers) == len(dqs) == 3 and all(d.kind == "pattern" for d in r.disqualifiers)
    assert [p for d in r.disqualifiers for p in d.patterns][:1] == ["ai_disclaimer"]  # AI self-disclosure first
    assert "placeholder_text" in r.disqualifiers[2].patterns and "oaicite" in r.disqualifiers[1].patterns
    # seed 000's count of the real file: 27 patterns, 8 advice rules, 3 validation musts
    assert (len(r.patterns), len(r.advice), len(r.validation)) == (27, 8, 3)
    assert "risk = 15 - score" in r.scoring.formula and "inverted risk scoring (risk = 15 - score)" in text
    assert [lab.label for lab in r.scoring.labels] == ["Minimal", "Low", "Moderate", "High", "Severe"]
    source = (SHARED / "rubrics" / "secemp9" / "anti_slop_rubric.xml").read_text(encoding="utf-8")
    for c in r.criteria:  # the anchors are the real file's, word for word
        assert all(a.description in source for a in c.scale.anchors), c.id


def test_zinsser_judge_xxl_is_the_seeds_at_full_size():
    text, r = seed_paragraph("ZinsserJudge XXL"), resolve("zinsser-judge")
    groups = {g.id: g.children for g in r.groups}
    assert list(groups) == ["core", "genre", "attitude"] and "3 groups (core/genre/attitude)" in text
    # `genre` is the root: its modules beside the core and attitude groups (seed 000's formula, one weighted sum)
    ids = {c.id for c in r.criteria}
    core, genre, attitude = ([r.criterion(i) for i in groups[g] if i in ids] for g in ("core", "genre", "attitude"))
    assert [c.id for c in core] == [f"C{n}" for n in range(1, 13)] and "12 core criteria (C1-C12, 0-5)" in text
    assert {(c.scale.low, c.scale.high) for c in core} == {(0, 5)} and not any(c.genre for c in core)
    assert len(genre) == 10 and {(c.scale.low, c.scale.high) for c in genre} == {(0, 3)} and all(c.genre for c in genre)
    assert [c.id for c in attitude] == ["A_VOX", "A_CONF", "A_DEC"] and {c.scale.high for c in attitude} == {2}
    assert "10 genre-conditional modules (0-3), 3 attitude lenses (0-2), 5 disqualifiers, 11 patterns" in text
    library = [p for p in r.patterns if p.id not in r.disqualifiers[3].patterns]  # DQ4 has its own pattern
    assert (len(r.criteria), len(r.disqualifiers), len(library)) == (25, 5, 11)
    # seed 000: v3 reweights C3 12 -> 10 and C12 5 -> 11; G_SCI and G_EXP fire for science_tech
    assert (r.criterion("C3").weight, r.criterion("C12").weight) == (10, 11)
    assert {c.id for c in r.active_criteria("science_tech")} - {c.id for c in r.active_criteria()} == {"G_SCI", "G_EXP"}
    assert {c.id for c in r.active_criteria("email")} - {c.id for c in r.active_criteria()} == {"G_BUS"}
    assert [(c.prefix, c.min_words, c.max_words) for c in r.output.constraints] == [
        ("BECAUSE:", None, None),
        (None, 35, 35),
    ]
    assert r.scoring.labels[0].label == "Publish-ready" and r.scoring.disqualified_label == "Rejected"
    source = (SHARED / "rubrics" / "secemp9" / "on_writing_well_v1.xml").read_text(encoding="utf-8")
    assert all(a.description in source for c in core + genre[:7] for a in c.scale.anchors)


def test_completeness_judge_is_the_seeds_at_full_size():
    text, r = seed_paragraph("CompletenessJudge"), resolve("completeness-judge")
    stated = re.search(r"5 criteria \(([^)]*)\)", text).group(1).split(", ")
    assert [f"{t} {s}" for t, s in _scales(r)] == stated
    assert (
        f"{len(r.disqualifiers)} disqualifiers, {len(r.patterns)} patterns, definitions, calibration examples" in text
    )
    assert (len(r.disqualifiers), len(r.patterns)) == (2, 11) and r.definitions and r.mapping_examples
    assert "completeness-auditor role" in text and r.role.persona.startswith("A completeness auditor")
    because, no_apology = r.output.constraints
    assert because.prefix == "BECAUSE:" and no_apology.forbid and "no-apology output constraints" in text
    assert check_constraint(no_apology, "BECAUSE: Sorry, step 3 is missing.") == "contains 'sorry'"
    assert check_constraint(no_apology, "BECAUSE: step 3 is missing.") is None
    assert [lab.label for lab in r.scoring.labels] == re.search(r"thresholds \(([^)]*)\)", text).group(1).split(" / ")
    source = (SHARED / "rubrics" / "secemp9" / "completeness_rubric.md").read_text(encoding="utf-8")
    assert r.definitions[0].meaning.split(" Do not")[0][-60:] in source  # the behaviour it audits, verbatim


SEED_001_RUBRICS = [  # (id, the strategy the seed gives it, genre, a clean text, a text that must fail)
    (
        "anti-llmy",
        "holistic",
        None,
        "The council approved the budget on Tuesday by a vote of seven to two.",
        "As a large language model, I hope this helps! Nestled in the heart of a stunning valley.",
    ),
    (
        "zinsser-judge",
        "grouped",
        "science_tech",
        "Bats find insects in the dark by listening. A bat shouts a high note and times the echo.",
        "As an AI language model, I cannot provide a review of this essay.",
    ),
    (
        "completeness-judge",
        "holistic",
        None,
        "The capital of France is Paris, home to about 2.1 million people in the city proper.",
        "Here is the file:\n```python\ndef load():\n    pass\n# rest of the code unchanged\n```",
    ),
]


@pytest.mark.parametrize(
    "rubric_id, strategy, genre, clean, bad",
    SEED_001_RUBRICS,
    ids=lambda v: v if v in {"anti-llmy", "zinsser-judge", "completeness-judge"} else "",
)
def test_each_loads_compiles_renders_and_judges_on_the_offline_judge(
    offline_url, rubric_id, strategy, genre, clean, bad
):
    from rubricflow.rubrics.render import call_units, render_system_prompt

    bundle = rf.load_rubric(rubric_id)
    rubric = bundle.rubric
    units = call_units(rubric, strategy, genre)
    assert units and {c for u in units for c in u.criteria} == {c.id for c in rubric.active_criteria(genre)}
    prompt = render_system_prompt(rubric, units[0])
    assert rubric.goal[:40] in " ".join(prompt.split()) and "BECAUSE:" in prompt
    assert rubric.surface.execution_strategy == strategy  # the seed's strategy, applied with no strategy given
    judge = rf.Judge(base_url=offline_url)
    good = judge.evaluate(bundle, clean, genre=genre, input="Answer the request in full.")
    assert not good.errors and good.passed is True and good.coverage == 1.0, good
    assert good.usage.calls == len(units)  # one call per call unit of the rubric's own strategy
    assert set(good.criteria) == {c.id for c in rubric.active_criteria(genre)}
    worse = judge.evaluate(bundle, bad, genre=genre, input="Show the whole file.")
    assert worse.passed is False and worse.disqualified and worse.label == rubric.scoring.disqualified_label


@pytest.fixture(scope="module")
def offline_url():
    from rubricflow.tasks.standins.judge_server import RunningServer

    with RunningServer() as server:
        yield server.base_url
