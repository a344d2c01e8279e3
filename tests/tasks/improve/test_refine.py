"""`rubric refine`: one validator rubric per lattice property, and the loop that raises a weak rubric's
weak properties, over real HTTP to `rubricflow judge-server` (the offline judge), resumed from its
journal without a second call, never over a file."""

import json
import os
import shutil
import subprocess

import pytest

from rubricflow.errors import InputError
from rubricflow.rubrics.compiler import compile_rubric
from rubricflow.rubrics.formats import load_rubric
from rubricflow.rubrics.model import OrdinalScale
from rubricflow.tasks.improve import lattice
from rubricflow.tasks.improve.refine import Measure, accepts
from tests.conftest import EXE, ROOT

WEAK = ROOT / "tests" / "data" / "weak-essay.yaml"


def cli(cwd, *args):
    return subprocess.run(
        [EXE, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200"}
    )


def test_every_lattice_property_has_a_validator_rubric_that_compiles():
    names = [p.id for p in lattice.PROPERTIES]
    assert names == ["mission", "anchors", "schema", "mechanical", "disqualifiers", "ritual", "mirror", "economy"]
    hashes = set()
    for name in names:
        bundle = lattice.validator(name)
        (criterion,) = bundle.rubric.criteria
        assert criterion.id == name and isinstance(criterion.scale, OrdinalScale)
        assert [a.value for a in criterion.scale.anchors] == [0, 1, 2, 3]
        assert all(bundle.rubric.pattern(p) for p in criterion.patterns)
        hashes.add(bundle.hash)
    assert len(hashes) == len(names)


def _m(**values):
    return {p: Measure(v, v / 3, "") for p, v in values.items()}


def test_a_change_is_accepted_only_if_its_target_rises_and_no_other_falls_beyond_the_tolerance():
    before = _m(mission=0, anchors=2, economy=1)
    assert accepts(before, _m(mission=3, anchors=2, economy=1), "mission", 0.1) is None
    assert "did not rise" in accepts(before, _m(mission=0, anchors=3, economy=1), "mission", 0.1)
    assert "lowers anchors (2 -> 1)" in accepts(before, _m(mission=3, anchors=1, economy=1), "mission", 0.1)
    assert accepts(before, _m(mission=3, anchors=1, economy=1), "mission", 0.34) is None


def test_refine_raises_a_weak_rubrics_weak_properties_and_resumes_without_paying_twice(tmp_path, thread_judge_server):
    server = thread_judge_server()
    shutil.copy(WEAK, tmp_path / "weak.yaml")
    done = cli(tmp_path, "rubric", "refine", "weak.yaml", "--base-url", server.base_url)
    assert done.returncode == 0, done.stderr
    written = tmp_path / "weak-essay-2.1.0.yaml"
    assert f"wrote {written.name}" in done.stdout and "changelog weak-essay-2.1.0.changelog.md" in done.stdout
    refined = load_rubric(written)
    bundle, issues = compile_rubric(refined)
    assert bundle is not None and not [i for i in issues if i.severity == "error"]
    lattice_checks = dict(bundle.lattice)
    assert all(lattice_checks[k] for k in ("N1", "S1", "S3", "S4", "S5", "S6")), lattice_checks
    assert 3 <= len(refined.criteria) <= 7 < len(load_rubric(WEAK).criteria)
    assert (tmp_path / "weak.yaml").read_text() == WEAK.read_text()  # the original is never touched
    log = (tmp_path / "weak-essay-2.1.0.changelog.md").read_text()
    for prop in ("mission", "anchors", "mechanical", "disqualifiers", "ritual", "mirror", "economy"):
        assert f"| {prop} | 0/3 | 3/3 |" in log  # every weak property rose
    assert "| schema | 3/3 | 3/3 |" in log

    calls = server.stats()["requests"]
    again = cli(tmp_path, "rubric", "refine", "weak.yaml", "--base-url", server.base_url)
    assert again.returncode == 2 and "never overwrites" in again.stderr  # and nothing was bought to learn it
    (tmp_path / "first").mkdir()
    for name in ("weak-essay-2.1.0.yaml", "weak-essay-2.1.0.changelog.md"):
        (tmp_path / name).rename(tmp_path / "first" / name)
    resumed = cli(tmp_path, "rubric", "refine", "weak.yaml", "--base-url", server.base_url)
    assert resumed.returncode == 0, resumed.stderr
    assert server.stats()["requests"] == calls  # every judgment and proposal came from the journal
    assert written.read_text() == (tmp_path / "first" / written.name).read_text()


def test_a_judge_that_always_misbehaves_gives_one_clear_error_and_writes_nothing(tmp_path, thread_judge_server):
    server = thread_judge_server(fault_rate=1, faults=("malformed",), fault_attempts=99)
    shutil.copy(WEAK, tmp_path / "weak.yaml")
    done = cli(tmp_path, "rubric", "refine", "weak.yaml", "--base-url", server.base_url)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "error: the mission validator (lattice-mission@1.0.0) was not judged" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["weak.yaml"]  # no version, no changelog, no journal line


def test_a_bounded_refine_measures_only_the_chosen_properties_and_stops_at_its_call_budget(
    tmp_path, thread_judge_server
):
    """--properties mission,mirror --max-calls 3: the mission judged, a proposal, the candidate's mission
    judged (accepted: mission rises; mirror is counted, no call), then the next proposal would pass the
    budget: the run stops there, writes what was accepted and says why; only the offered operations are
    in a proposal's prompt."""
    import json

    from rubricflow.tasks.improve.refine import messages

    server = thread_judge_server()
    shutil.copy(WEAK, tmp_path / "weak.yaml")
    args = ["--base-url", server.base_url, "--properties", "mirror,mission", "--max-calls", "3"]
    done = cli(tmp_path, "rubric", "refine", "weak.yaml", *args)
    assert done.returncode == 0, done.stderr
    journal = [json.loads(x) for x in (tmp_path / ".weak-essay-1.0.0.refine.jsonl").read_text().splitlines()]
    assert [r.get("property", r["kind"]) for r in journal] == ["mission", "proposal", "mission"]
    assert "stopped: the call budget (3) is spent" in done.stdout
    log = (tmp_path / "weak-essay-1.1.0.changelog.md").read_text()
    assert "| mission | 0/3 | 3/3 |" in log and "| mirror | 0/3 | 0/3 |" in log and "| economy" not in log
    assert "Stopped early: the call budget (3) is spent" in log
    with pytest.raises(InputError, match="--properties: unknown tone; choose from mission, anchors"):
        lattice.chosen("mission,tone")
    assert lattice.chosen("economy, mission") == ("mission", "economy")  # lattice order

    weak = load_rubric(WEAK)
    zero = {p.id: Measure(0, 0.0, "") for p in lattice.PROPERTIES}
    (system, _), sizes = messages(weak, "mission", zero, []), {}
    assert '"set_goal"' in system["content"] and '"merge_criteria"' not in system["content"]
    for prop in lattice.PROPERTIES:
        sizes[prop.id] = len(messages(weak, prop.id, zero, [])[0]["content"])
    assert max(sizes.values()) < 8_000 and sizes["mission"] < 1_500, sizes  # every operation's schema: 15,000


def test_the_properties_the_seed_makes_mechanical_are_counted_without_a_call(tmp_path):
    """Anchors, schema, mechanical, disqualifiers, ritual, mirror and economy are the seed's predicates
    (P_anchored, P_aligned, ..., P_economy) read off the rubric: a budget of no calls measures them all,
    and merging the weak rubric's pairs (12 -> 6 criteria) moves economy from 0 to 3."""
    from rubricflow.tasks.improve.refine import Calls, Journal, measure
    from rubricflow.tasks.improve.refine_choices import chosen, options, picked, schema
    from rubricflow.tasks.improve.refine_ops import apply, mutations_of

    weak = load_rubric(WEAK)
    counted = tuple(p for p in lattice.BY_ID if p != "mission")
    before = measure(weak, None, Journal(tmp_path / "j.jsonl"), counted, Calls(0))
    assert {p: m.value for p, m in before.items()} == dict.fromkeys(counted, 0) | {"schema": 3}
    assert before["economy"].rationale == "counted: 12 criteria (3 to 7 recommended)"
    merges = options(weak, "economy")
    assert sorted(label for label, _ in merges)[:2] == [
        "merge argument-thesis + argument-logic",
        "merge clarity-ideas + clarity-prose",
    ]
    orders = {tuple(label for label, _ in options(weak, p, attempt)) for p in ("economy",) for attempt in (1, 2, 3)}
    assert len(orders) == 3  # each attempt lists them in an order of its own: answering "1" is no fixed choice
    listed = schema(merges)["properties"]["choose"]  # what llama.cpp's grammar holds a model to
    assert listed["items"]["enum"] == [1, 2, 3, 4, 5, 6] and (listed["minItems"], listed["maxItems"]) == (1, 3)
    assert chosen('{"choose": ["2", 9, true, 2]}', merges) == [2]  # digit strings count; out of range, bools do not
    chosen = json.loads(picked('{"choose": [1, 2, 3, 4, 5, 6, 99]}', merges))["mutations"]
    merged = apply(weak, mutations_of(("merge_criteria",)).validate_python(chosen))
    after = measure(merged, None, Journal(tmp_path / "j.jsonl"), counted, Calls(0))
    assert len(merged.criteria) == 6 and after["economy"].value == 3 and after["anchors"].value == 0
    assert not (tmp_path / "j.jsonl").exists()  # nothing was asked, so nothing journaled


def test_refine_choose_through_a_template_without_a_system_role_raises_every_weak_property(tmp_path):
    """Refine with --choose against a server whose chat template drops system messages, under the
    default --system-prompt auto: the proposals' calls run the judge's delivery check first and move the
    system text into the user turn (without it the server never sees the refine prompt and answers as a
    judge: every proposal refused). Every weak property of the weak rubric rises to 3/3, the rule-made
    properties by options the offline judge chose (their schema rides in the request), and it validates."""
    from rubricflow.tasks.improve.refine import Journal, Tries, refine
    from rubricflow.tasks.improve.refine_changelog import changelog
    from rubricflow.tasks.improve.refine_choices import ANSWER_FORMAT
    from rubricflow.tasks.judging.config import JudgeConfig
    from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig

    journal, said = Journal(tmp_path / "j.jsonl"), []
    with RunningServer(ServerConfig(drop_system=True)) as server:
        config = JudgeConfig(base_url=server.base_url, strategy="per_criterion")
        result = refine(load_rubric(WEAK), config, config, journal, notify=said.append, tries=Tries(1, True))
        probes = server.app.stats.probes
    bundle, issues = compile_rubric(result.rubric)
    assert bundle is not None and not [i for i in issues if i.severity == "error"]
    risen = {p: (result.start_measures[p].value, m.value) for p, m in result.measures.items()}
    assert risen == dict.fromkeys(ALL_BUT_SCHEMA, (0, 3)) | {"schema": (3, 3)}  # every weak property rose
    log = changelog(result, "offline", "offline")
    assert "the model chose 1, 2, 3, 4, 5, 6 of 6: merge " in log and "anchors: chose 1, 2, 3" in "\n".join(said)
    assert probes >= 2  # the judge's delivery check ran, and the proposals' (once per process, not per call)
    assert '"choose": [' not in ANSWER_FORMAT  # no example to copy


ALL_BUT_SCHEMA = ("mission", "anchors", "mechanical", "disqualifiers", "ritual", "mirror", "economy")


def test_the_counted_economy_and_anchors_leave_the_asked_verdict_out():
    """Seed 000 counts the ComplianceJudge's criteria as "Criterion(x3)": the verdict criterion a
    rubric of decision rules asks (rubrics/verdict_form.py) is no author criterion. Seven anchored
    criteria and the verdict were counted as 8 (economy 2, not the seed's 3..7 -> 3)."""
    from rubricflow.rubrics.model import Rubric
    from rubricflow.tasks.improve.lattice_checks import anchors, economy

    seed = (ROOT.parent / "shared/seeds/000_c0ea53250dcb8cd9.txt").read_text()
    assert "ComplianceJudge Mission, Criterion(x3)" in seed
    levels = [{"value": 0, "description": "Misses it."}, {"value": 2, "description": "Does it."}]
    criteria = [{"id": f"C{i}", "title": f"C{i}", "scale": {"kind": "ordinal", "anchors": levels}} for i in range(1, 8)]
    rubric = Rubric.model_validate(
        {
            "metadata": {"id": "seven"},
            "goal": "Judge whether a reply complies with the request without refusing.",
            "criteria": criteria,
            "decision_rules": [
                {"id": "R1", "condition": "C1=2 => Yes", "verdict": "Yes"},
                {"id": "R2", "condition": "Else => No", "verdict": "No"},
            ],
            "verdicts": [{"label": "Yes", "score": 1.0}, {"label": "No", "score": 0.0}],
        }
    )
    assert len(rubric.criteria) == 8  # the verdict asked, beside the author's seven
    assert economy(rubric) == (3, "7 criteria (3 to 7 recommended)")
    assert anchors(rubric) == (3, "7 of 7 criteria have >= 2 described levels")
