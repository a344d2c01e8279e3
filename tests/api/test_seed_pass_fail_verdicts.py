"""Seeds 002 and 004 define pass/fail verdicts; the scripted judge (tasks/standins/scripted_judge.py)
answers each of the seeds' own examples as the seed's anchors say, and rubricflow must give the
verdict the seed's rules give: Forge's User Story example (scores from its anchors' `examples`,
verdict from its `scoring` block and essential thresholds) and waza's groundedness goldens (the
seed's `expected: pass|fail`). Over HTTP on 127.0.0.1, through rf.Judge."""

from __future__ import annotations

import re

import pytest
import yaml

import rubricflow as rf
from rubricflow.tasks.standins.judge_server import RunningServer, ServerConfig
from rubricflow.tasks.standins.scripted_judge import load_script

from ..conftest import SHARED, SHARED_RUBRICS

SEEDS = SHARED.parent / "seeds"
FORGE_SEED = (SEEDS / "002_b26660f2a63faab6.txt").read_text(encoding="utf-8")
WAZA_SEED = (SEEDS / "004_08759ebe89262564.txt").read_text(encoding="utf-8")
GROUNDEDNESS = SHARED_RUBRICS / "waza/groundedness.md"


def scripted(tmp_path, entries: list[dict], record: bool = False) -> RunningServer:
    key = tmp_path / "key.yaml"
    key.write_text(yaml.safe_dump({"texts": entries}), encoding="utf-8")
    return RunningServer(ServerConfig(script=load_script(key), record=record))


def forge_example() -> str:
    """Seed 002's "Example Rubric: User Story Quality", as written."""
    after = FORGE_SEED[FORGE_SEED.index("### Example Rubric: User Story Quality") :]
    return re.search(r"```yaml\n(.*?)```", after, re.S).group(1)


def forge_passes(spec: dict, scores: dict[str, int]) -> bool:
    """The seed's scoring block read literally: the mean at least `pass_threshold`, every essential
    criterion at least `essential_minimum` and each criterion at least its own `threshold`."""
    rules = spec["scoring"]
    mean = sum(scores.values()) / len(scores)
    return mean >= rules["pass_threshold"] and all(
        scores[c["name"]] >= max(c["threshold"], rules["essential_minimum"] if c["weight"] == "essential" else 0)
        for c in spec["criteria"]
    )


def test_forge_stories_made_of_the_seeds_anchor_examples_get_the_seeds_verdicts(tmp_path):
    source = forge_example()
    spec = yaml.safe_load(source)
    examples = {c["name"]: {int(k.split("_")[1]): v for k, v in c["examples"].items()} for c in spec["criteria"]}
    assert examples["clarity"].keys() == {1, 3, 5} and examples["testability"].keys() == {1, 5}
    pairs = [(5, 5), (3, 5), (1, 1), (5, 1), (3, 1)]  # (clarity, testability): each an example the seed gives
    stories = {
        f"c{c}t{t}": ({"clarity": c, "testability": t}, f"{examples['clarity'][c]}\n{examples['testability'][t]}")
        for c, t in pairs
    }
    expected = {sid: forge_passes(spec, scores) for sid, (scores, _) in stories.items()}
    assert expected == {"c5t5": True, "c3t5": True, "c1t1": False, "c5t1": False, "c3t1": False}
    rubric = tmp_path / "user_story_quality_v1.yaml"
    rubric.write_text(source, encoding="utf-8")
    entries = [{"name": sid, "text": story, "criteria": scores} for sid, (scores, story) in stories.items()]
    with scripted(tmp_path, entries) as server, rf.Judge(base_url=server.base_url, strategy="holistic") as judge:
        results = judge.evaluate_many(str(rubric), [{"id": sid, "text": story} for sid, (_, story) in stories.items()])
    assert all(not r.errors for r in results), [r.errors for r in results]
    assert {r.text_id: r.passed for r in results} == expected
    assert {r.text_id: r.score for r in results}["c3t5"] == pytest.approx(0.75)  # (3 + 5) / 2 on 1-5


def waza_seed_goldens() -> list[dict]:
    """The goldens of seed 004's groundedness frontmatter example (the seed's text has its line
    breaks flattened, so each golden is read by its field names)."""
    schema = WAZA_SEED[WAZA_SEED.index("---name: groundedness") : WAZA_SEED.index("# Groundedness")]
    found = re.findall(
        r'- name: (\S+) input: "([^"]*)" output: "([^"]*)" context: "([^"]*)" expected: (pass|fail)', schema
    )
    return [dict(zip(("name", "input", "output", "context", "expected"), g, strict=True)) for g in found]


def test_waza_groundedness_goldens_of_the_seed_get_the_seeds_expected_verdicts(tmp_path):
    goldens = waza_seed_goldens()
    assert [(g["name"], g["expected"]) for g in goldens] == [
        ("grounded-answer-passes", "pass"),
        ("unsupported-claim-fails", "fail"),
    ]
    # the judge calls set_waza_grade_pass or set_waza_grade_fail, as the seed's rubric body says: by
    # default it is given the two tools (the stand-in calls the pass tool for the scale's value 1)
    assert "call `set_waza_grade_pass`.Otherwise call `set_waza_grade_fail`" in WAZA_SEED
    entries = [
        {"name": g["name"], "text": g["output"], "criteria": {"verdict": int(g["expected"] == "pass")}} for g in goldens
    ]
    texts = [{"id": g["name"], "text": g["output"], "input": g["input"], "context": g["context"]} for g in goldens]
    with scripted(tmp_path, entries, record=True) as server, rf.Judge(base_url=server.base_url) as judge:
        results = judge.evaluate_many(str(GROUNDEDNESS), texts)
    assert all(not r.errors for r in results), [r.errors for r in results]
    bodies = server.app.bodies
    assert len(bodies) == 2 and all(b["tool_choice"] == "required" for b in bodies)
    assert all(
        {t["function"]["name"] for t in b["tools"]} == {"set_waza_grade_pass", "set_waza_grade_fail"} for b in bodies
    )
    assert not any("Answer with one JSON object only" in b["messages"][0]["content"] for b in bodies)
    assert all(b["messages"][1]["content"].startswith("## Candidate output\n") for b in bodies)
    assert {r.text_id: (r.score, r.passed) for r in results} == {
        "grounded-answer-passes": (1.0, True),
        "unsupported-claim-fails": (0.0, False),
    }
