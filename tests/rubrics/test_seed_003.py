"""Seed 003 (the PaperBench / ARI replication rubric): its own envelope, reproduce_contract and
TaskNode examples (read from the seed, comments stripped), its closed vocabulary and flags, the
JSON Schema, single-child chains, repeated ids and the envelope hash as the seed defines it."""

from __future__ import annotations

import copy
import hashlib
import json
import re

import pytest

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.formats import RubricImportError, load_rubric
from rubricflow.rubrics.importers.paperbench import FINEGRAINED_CATEGORIES, FLAGS, TASK_CATEGORIES, canonical_sha256
from rubricflow.rubrics.scoring import aggregate

from ..conftest import SHARED, SHARED_RUBRICS, TEST_DATA

SEED = (SHARED.parent / "seeds" / "003_54567a775465b711.txt").read_text(encoding="utf-8")


def jsonc_after(heading: str) -> str:
    """The first ```jsonc block after `heading`, as the seed writes it."""
    return re.search(r"```jsonc\n(.*?)```", SEED[SEED.index(heading) :], re.S).group(1)


def as_json(jsonc: str) -> dict:
    """The seed's JSONC as data: `// comments` dropped, `[...]` and `{ ... }` placeholders emptied."""
    text = re.sub(r"//[^\n]*", "", jsonc).replace("[...]", "[]").replace("{ ... }", "{}")
    text = text.strip().rstrip(",")
    return json.loads(text if text.startswith("{") else "{" + text + "}")


def bullets_after(marker: str) -> list[str]:
    """The first run of `- ` bullet lines after `marker`."""
    lines = SEED[SEED.index(marker) :].splitlines()[1:]
    start = next(i for i, line in enumerate(lines) if line.startswith("- "))
    run = [line for line in lines[start:] if line.startswith("- ") or not line.strip()]
    run = run[: next((i for i, line in enumerate(run) if not line.strip()), len(run))]
    return [re.match(r"- `([^`]+)`", line).group(1) for line in run]


SEED_NODE = as_json(jsonc_after("## `TaskNode` (rubric tree)"))
SEED_CONTRACT = as_json(jsonc_after("## `reproduce_contract`"))["reproduce_contract"]


def tree(*leaves: dict, node_id: str = "root") -> dict:
    return {
        "id": node_id,
        "requirements": "The paper's results are reproduced.",
        "weight": 1,
        "sub_tasks": list(leaves),
    }


def leaf(node_id: str, **extra) -> dict:
    return {
        "id": node_id,
        "requirements": f"Leaf {node_id} holds for the submission.",
        "weight": 1,
        "sub_tasks": [],
        **extra,
    }


def envelope(rubric: dict) -> dict:
    """The seed's envelope, its placeholders filled, hashed as the seed says: over the envelope
    without `rubric_sha256` and `audit`."""
    env = as_json(jsonc_after("## Envelope"))
    env["paper_sha256"] = hashlib.sha256(b"paper text").hexdigest()
    env["generator"]["prompt_sha256"] = hashlib.sha256(b"prompt").hexdigest()
    env["generator"].pop("snapshot")
    env["reproduce_contract"] = copy.deepcopy(SEED_CONTRACT)
    env["reproduce_contract"].pop("execution_profile")
    env["rubric"] = rubric
    env["rubric_sha256"] = canonical_sha256({k: v for k, v in env.items() if k not in ("rubric_sha256", "audit")})
    return env


def write(tmp_path, data, name="rubric.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_vocabulary_and_flags_are_the_seeds():
    assert bullets_after("`task_category` — exactly one of:") == list(TASK_CATEGORIES)
    assert bullets_after("`finegrained_task_category` — exactly one of:") == list(FINEGRAINED_CATEGORIES)
    assert bullets_after("Audit annotations from") == list(FLAGS)


def test_the_seeds_task_node_keeps_categories_rationale_and_flags(tmp_path):
    node = {**SEED_NODE, "id": "n1"}
    r = load_rubric(write(tmp_path, tree(node, leaf("n2"))))
    c = r.criterion("n1")
    assert c.tags == ("Code Development", "Method Implementation", "flag:unverifiable")
    assert c.notes == 'Rationale from the paper, §3.1: "<verbatim paper text, min 10 chars>"'


def test_a_category_outside_the_vocabulary_names_the_node(tmp_path):
    path = write(tmp_path, tree(leaf("ok"), leaf("odd", task_category="Not A Category")))
    with pytest.raises(RubricImportError) as err:
        load_rubric(path)
    message = str(err.value)
    assert str(path) in message and "sub_tasks[1].task_category (node odd)" in message and "'Not A Category'" in message


def test_the_seeds_envelope_imports_with_its_reproduce_contract_and_audit(tmp_path):
    env = envelope(tree(leaf("a"), leaf("b")))
    r = load_rubric(write(tmp_path, env))
    assert json.loads(r.metadata.provenance["reproduce_contract"]) == env["reproduce_contract"]
    assert r.metadata.provenance["version"] == "3"
    env["audit"]["flags_count"] = 7  # audit annotations do not invalidate provenance
    assert load_rubric(write(tmp_path, env, "audited.json")).metadata.provenance["audit.flags_count"] == 7
    env["reproduce_contract"]["max_runtime_sec"] = 600  # the rest of the envelope is covered
    with pytest.raises(RubricImportError, match=r"changed.json: field rubric_sha256: .* does not match the envelope"):
        load_rubric(write(tmp_path, env, "changed.json"))


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda e: e["reproduce_contract"].update(max_runtime_sec=10), "field reproduce_contract.max_runtime_sec"),
        (lambda e: e["reproduce_contract"].update(script_path="run.sh"), "field reproduce_contract.script_path"),
        (lambda e: e.update(paper_sha256="not hex"), "field paper_sha256"),
        (lambda e: e["rubric"]["sub_tasks"][0].update(requirements="short"), "field rubric.sub_tasks[0].requirements"),
        (lambda e: e.update(version="2"), "field version"),
    ],
)
def test_a_malformed_envelope_fails_its_json_schema_naming_the_field(tmp_path, change, field):
    env = envelope(tree(leaf("a"), leaf("b")))
    change(env)
    path = write(tmp_path, env)
    with pytest.raises(RubricImportError) as err:
        load_rubric(path)
    assert str(path) in str(err.value) and field in str(err.value)


def test_single_child_chains_fold_into_the_child(tmp_path):
    chain = tree(
        {"id": "wrap", "requirements": "A wrapper with one child.", "weight": 3, "sub_tasks": [leaf("inner")]},
        leaf("other"),
    )
    r = load_rubric(write(tmp_path, chain))
    assert [g.id for g in r.groups] == ["root"] and r.groups[0].children == ("inner", "other")
    assert r.criterion("inner").weight == 3  # the wrapper's place in its parent
    assert aggregate(r, {"inner": 1.0, "other": 0.0}) == pytest.approx(0.75)


def test_a_parent_and_child_sharing_an_id_are_accepted(tmp_path):
    shared = tree(leaf("root"), leaf("b"))  # the child repeats its parent's id
    r = load_rubric(write(tmp_path, shared))
    bundle = compile_or_raise(r)
    assert {c.id for c in bundle.rubric.criteria} == {"root:2", "b"} and r.groups[0].id == "root"


def test_real_paperbench_trees_still_import():
    for name in ("semantic-self-consistency.rubric.json", "nested_hex_flags.json", "trivial.json"):
        compile_or_raise(load_rubric(SHARED_RUBRICS / "paperbench" / name))


def test_more_than_a_fifth_of_leaves_flagged_warns_to_regenerate(tmp_path):
    share = re.search(r"`>(\d+)%` flagged leaves trigger", SEED).group(1)
    assert share == "20"
    flagged = [leaf(f"f{i}", flags=["vague_qualifier"]) for i in range(2)]
    many = load_rubric(write(tmp_path, tree(*flagged, *[leaf(f"c{i}") for i in range(7)]), "many.json"))
    assert "W_FLAGGED_LEAVES" in [w.code for w in compile_or_raise(many).warnings]  # 2 of 9 > 20%
    few = load_rubric(write(tmp_path, tree(flagged[0], *[leaf(f"c{i}") for i in range(7)]), "few.json"))
    assert "W_FLAGGED_LEAVES" not in [w.code for w in compile_or_raise(few).warnings]  # 1 of 8
    with pytest.raises(RubricImportError, match=r"flags \(node x\): 'typo' is not one of"):
        load_rubric(write(tmp_path, tree(leaf("x", flags=["typo"]), leaf("y")), "typo.json"))


REAL_TREES = TEST_DATA / "rubrics/paperbench"  # openai/frontier-evals (MIT), see SOURCES.md there


def test_real_trees_with_repeated_ids_import_every_node_under_its_own_id():
    fixture = load_rubric(REAL_TREES / "hex_flag_context.json")  # a child repeats its parent's id
    assert [c.id for c in fixture.criteria] == ["a6fef6f9-82dc-4a06-b1e9-1a4f3f6384a1"] and not fixture.groups
    path = REAL_TREES / "bridging-data-gaps.rubric.json"  # three pairs of siblings share an id
    data = json.loads(path.read_text(encoding="utf-8"))
    r = compile_or_raise(load_rubric(path)).rubric
    ids = [c.id for c in r.criteria] + [g.id for g in r.groups]
    assert len(ids) == len(set(ids)) == _count_folded(data)
    twin = r.criterion("d96e73af-6bc0-405d-bebf-0730dca61911:2")
    assert twin.description.startswith("The learning rate is set to 0.00005 for DDPM")
    every = aggregate(r, {c.id: 1.0 for c in r.criteria})
    assert every == pytest.approx(1.0)
    one_twin_failed = aggregate(r, {c.id: float(c.id != twin.id) for c in r.criteria})
    assert one_twin_failed < every  # the twin is a leaf of its own, scored on its own


def _count_folded(node: dict) -> int:
    """Nodes after single-child chains are folded (a wrapper and its only child are one node)."""
    while len(node.get("sub_tasks") or []) == 1:
        node = node["sub_tasks"][0]
    return 1 + sum(_count_folded(child) for child in node.get("sub_tasks") or [])


def test_the_seeds_task_node_tree_is_judged_by_the_offline_judge(tmp_path):
    """#36 Done-when: the seed's own TaskNode, in a tree, is judged over HTTP leaf by leaf, and the
    weighted tree score is the one the landed leaves give."""
    from rubricflow.tasks.improve.goldens import judge_text
    from rubricflow.tasks.judging.config import JudgeConfig
    from rubricflow.tasks.standins.judge_server import RunningServer

    path = write(tmp_path, tree({**SEED_NODE, "id": "n1"}, leaf("n2")))
    rubric = load_rubric(path)
    bundle = compile_or_raise(rubric, str(path))
    with RunningServer() as server:
        config = JudgeConfig(base_url=server.base_url, strategy="per_criterion")
        done = judge_text(bundle, config, "sub", "The script reproduces Table 2 within one point.", input="Reproduce.")
    units = {j.criterion_id: j.unit_score for j in done.judgments if j.status == "scored"}
    assert not done.errors and set(units) == {"n1", "n2"}
    assert done.verdict.score == pytest.approx(aggregate(rubric, units))
