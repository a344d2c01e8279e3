"""Seed 003 (the PaperBench / ARI replication rubric): its own envelope, reproduce_contract and
TaskNode examples (read from the seed, comments stripped), its closed vocabulary and flags, the
JSON Schema, single-child chains, repeated ids and the envelope hash as the seed defines it."""

from __future__ import annotations

import copy
import hashlib
import json
import re
import uuid

import pytest

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.formats import RubricImportError, load_rubric
from rubricflow.rubrics.importers.paperbench import FINEGRAINED_CATEGORIES, FLAGS, TASK_CATEGORIES, canonical_sha256
from rubricflow.rubrics.importers.replication_schema import UUID4_PATTERN
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


def uuid4_of(name: str) -> str:
    """A uuid v4 standing for a test's node name (the seed's TaskNode `"id": "<uuid v4>"`)."""
    return str(uuid.UUID(hashlib.md5(name.encode()).hexdigest(), version=4))


def with_uuid4_ids(node: dict) -> dict:
    return {**node, "id": uuid4_of(node["id"]), "sub_tasks": [with_uuid4_ids(c) for c in node["sub_tasks"]]}


def rehash(env: dict) -> dict:
    env["rubric_sha256"] = canonical_sha256({k: v for k, v in env.items() if k not in ("rubric_sha256", "audit")})
    return env


def envelope(rubric: dict) -> dict:
    """The seed's envelope, its placeholders filled, hashed as the seed says: over the envelope
    without `rubric_sha256` and `audit`; the tree's ids made uuid v4, as the seed's TaskNode has them."""
    env = as_json(jsonc_after("## Envelope"))
    env["paper_sha256"] = hashlib.sha256(b"paper text").hexdigest()
    env["generator"]["prompt_sha256"] = hashlib.sha256(b"prompt").hexdigest()
    env["generator"].pop("snapshot")
    env["reproduce_contract"] = copy.deepcopy(SEED_CONTRACT)
    env["reproduce_contract"].pop("execution_profile")
    env["rubric"] = with_uuid4_ids(rubric)
    return rehash(env)


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


def score_from_children(children: list[dict]) -> float:
    """PaperBench's own, ported as the reference (openai/frontier-evals, formerly openai/preparedness:
    project/paperbench/paperbench/judge/graded_task_node.py): children whose weights sum to 0 give 0.0."""
    total_weight = sum(child["weight"] for child in children)
    if total_weight == 0:
        return 0.0
    return sum(child["score"] * child["weight"] for child in children) / total_weight


def paperbench_score(node: dict, leaf_scores: dict[str, float]) -> float:
    """A tree's score as PaperBench grades it: leaves as given, every parent `score_from_children`."""
    if not node["sub_tasks"]:
        return leaf_scores[node["id"]]
    graded = [{**c, "score": paperbench_score(c, leaf_scores)} for c in node["sub_tasks"]]
    return score_from_children(graded)


def test_a_folded_wrapper_keeps_its_id_weight_and_both_claims(tmp_path):
    """ARI's `_collapse_single_child_chains` (kotama7/ARI ari-skill-replicate/src/generator.py): the
    parent's id and weight kept, "<parent> — <child>" requirements, the child's leaf-only fields."""
    chain = tree(
        {
            "id": "wrap",
            "requirements": "A wrapper with one child.",
            "weight": 3,
            "sub_tasks": [leaf("inner", task_category="Code Execution")],
            "task_category": None,
        },
        leaf("other"),
    )
    r = load_rubric(write(tmp_path, chain))
    assert [g.id for g in r.groups] == ["root"] and r.groups[0].children == ("wrap", "other")
    folded = r.criterion("wrap")
    assert folded.description == "A wrapper with one child. — Leaf inner holds for the submission."
    assert folded.weight == 3 and folded.tags == ("Code Execution",)
    expected = paperbench_score(chain, {"inner": 1.0, "other": 0.0})  # 3 * 1 / (3 + 1)
    assert aggregate(r, {"wrap": 1.0, "other": 0.0}) == pytest.approx(expected) == pytest.approx(0.75)
    deep = tree(
        {
            "id": "a",
            "requirements": "Claim A holds.",
            "weight": 2,
            "sub_tasks": [
                {"id": "b", "requirements": "Claim A holds.", "weight": 1, "sub_tasks": [leaf("c")]},
            ],
        },
        leaf("d"),
    )  # a chain of three folds to the first; a child's text the parent already holds is not repeated
    r = load_rubric(write(tmp_path, deep, "deep.json"))
    assert [(c.id, c.weight) for c in r.criteria] == [("a", 2), ("d", 1)]
    assert r.criterion("a").description == "Claim A holds. — Leaf c holds for the submission."


def test_a_wrapper_whose_only_child_weighs_nothing_scores_paperbenchs_zero(tmp_path):
    """Not folded: PaperBench scores the wrapper `score_from_children([child of weight 0])` = 0, and
    that 0 counts at its weight in the parent; folded, the child's 1 counted at the wrapper's weight."""
    wrapped = tree(
        {"id": "wrap", "requirements": "A wrapper with one child.", "weight": 1, "sub_tasks": [leaf("dma", weight=0)]},
        leaf("other"),
    )
    grades = {"dma": 1.0, "other": 0.0}
    assert paperbench_score(wrapped, grades) == 0.0
    r = load_rubric(write(tmp_path, wrapped))
    assert [(g.id, g.children) for g in r.groups] == [("root", ("wrap", "other")), ("wrap", ("dma",))]
    assert aggregate(r, grades) == pytest.approx(paperbench_score(wrapped, grades))  # was 0.5
    chain = tree(
        {
            "id": "a",
            "requirements": "A wrapper of a wrapper.",
            "weight": 2,
            "sub_tasks": [
                {"id": "b", "requirements": "A wrapper of nothing.", "weight": 1, "sub_tasks": [leaf("c", weight=0)]},
            ],
        },
        leaf("d"),
    )  # the fold stops where the weight is 0: a and b are one group, over c
    r = load_rubric(write(tmp_path, chain, "chain.json"))
    assert [(g.id, g.children) for g in r.groups] == [("root", ("a", "d")), ("a", ("c",))]
    assert aggregate(r, {"c": 1.0, "d": 1.0}) == pytest.approx(paperbench_score(chain, {"c": 1.0, "d": 1.0}))


def test_a_graded_wrapper_over_a_weightless_child_agrees_in_the_warehouse(tmp_path):
    """The same tree graded (expected_result.json): the grader's 0 for the wrapper and the root is
    PaperBench's, and the warehouse's aggregate agrees at every internal node."""
    from rubricflow.tasks.loaders.labels import import_graded_tree

    graded = tree(
        {
            "id": "wrap",
            "requirements": "A wrapper with one child.",
            "weight": 1,
            "sub_tasks": [leaf("dma", weight=0, score=1.0)],
            "score": 0.0,
        },
        leaf("other", score=0.0),
    )
    graded["score"] = paperbench_score(graded, {"dma": 1.0, "other": 0.0})
    _, _, check = import_graded_tree(write(tmp_path, graded, "g.expected_result.json"), "c", tmp_path / "w.duckdb")
    by_node = {c["node_id"]: c for c in check}
    assert set(by_node) == {"root", "wrap"} and all(c["agrees"] for c in check)
    assert by_node["root"]["aggregated"] == pytest.approx(graded["score"]) == 0.0


@pytest.mark.parametrize(
    "field, value",
    [
        ("task_category", "Code Development"),
        ("finegrained_task_category", "Method Implementation"),
        ("rationale_from_paper", {"section": "§3", "quote": "some verbatim quote"}),
    ],
)
def test_a_leaf_only_field_on_a_node_with_sub_tasks_is_refused_naming_it(tmp_path, field, value):
    """Seed 003 marks it `// LEAF ONLY`; PaperBench's TaskNode raises "Non-leaf node 'grp' cannot have a
    task category" (tasks.py). It was accepted and dropped."""
    group = {"id": "grp", "requirements": "A group of two.", "weight": 1, "sub_tasks": [leaf("a"), leaf("b")]}
    path = write(tmp_path, tree({**group, field: value}, leaf("c")))
    with pytest.raises(RubricImportError) as err:
        load_rubric(path)
    message = str(err.value)
    assert "\n" not in message and str(path) in message
    assert f"field (root).sub_tasks[0].{field} (node grp): leaf only" in message
    load_rubric(write(tmp_path, tree({**group, field: None}, leaf("c")), "null.json"))  # as real trees write it


def paperbench_refuses(node: dict) -> bool:
    """PaperBench's `TaskNode.from_dict` and `__post_init__` as the reference (tasks.py): a missing
    field is "Missing required field in node", a weight not a number "Weight must be a number."."""
    try:
        for key in ("sub_tasks", "id", "requirements", "weight"):
            node[key]
        if not isinstance(node["weight"], (int, float)):
            raise ValueError("Weight must be a number.")
        return any(paperbench_refuses(child) for child in node["sub_tasks"])
    except (KeyError, ValueError):
        return True


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda n: n.pop("weight"), "(root).sub_tasks[0].weight (node a): missing"),
        (lambda n: n.update(weight="2"), "(root).sub_tasks[0].weight (node a): a number >= 0 is required, found '2'"),
        (lambda n: n.pop("id"), "(root).sub_tasks[0].id: missing"),
        (lambda n: n.pop("sub_tasks"), "(root).sub_tasks[0].sub_tasks (node a): missing"),
        (lambda n: n.pop("requirements"), "(root).sub_tasks[0].requirements (node a): missing"),
    ],
    ids=["no weight", "weight '2'", "no id", "no sub_tasks", "no requirements"],
)
def test_a_field_paperbench_requires_is_never_filled_in(tmp_path, change, field):
    """A missing weight was 1, a weight "2" was 2, a missing id was made up, missing sub_tasks made a
    leaf; PaperBench refuses each, and so does the import, naming the node and the field."""
    broken = tree(leaf("a"), leaf("b"))
    change(broken["sub_tasks"][0])
    assert paperbench_refuses(broken) and not paperbench_refuses(tree(leaf("a"), leaf("b")))
    path = write(tmp_path, broken)
    with pytest.raises(RubricImportError) as err:
        load_rubric(path)
    assert str(err.value).startswith(f"{path}: field {field}") and "\n" not in str(err.value)


def test_a_reproduce_contract_without_expected_artifacts_is_valid(tmp_path):
    """ARI's schema requires only `script_path` and `max_runtime_sec`, and ARI's generator writes
    exactly {"script_path": "reproduce.sh", "max_runtime_sec": 21600}; it was refused."""
    env = envelope(tree(leaf("a"), leaf("b")))
    env["reproduce_contract"] = {"script_path": "reproduce.sh", "max_runtime_sec": 21600}
    env["rubric_sha256"] = canonical_sha256({k: v for k, v in env.items() if k not in ("rubric_sha256", "audit")})
    r = load_rubric(write(tmp_path, env))
    assert json.loads(r.metadata.provenance["reproduce_contract"]) == env["reproduce_contract"]


def test_a_parent_and_child_sharing_an_id_are_accepted(tmp_path):
    shared = tree(leaf("root"), leaf("b"))  # the child repeats its parent's id
    r = load_rubric(write(tmp_path, shared))
    bundle = compile_or_raise(r)
    assert {c.id for c in bundle.rubric.criteria} == {"root:2", "b"} and r.groups[0].id == "root"


def test_real_paperbench_trees_still_import():
    """Every real tree we hold writes id, requirements, weight and sub_tasks on every node, and
    leaf-only fields on a parent only as null: the stricter checks refuse none of them."""
    real = sorted((SHARED_RUBRICS / "paperbench").glob("*.json")) + sorted(REAL_TREES.glob("*.json"))
    assert len(real) == 6
    for path in real:
        compile_or_raise(load_rubric(path))


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
    path = REAL_TREES / "hex_flag_context.json"  # a child repeats its parent's id
    fixture, data = load_rubric(path), json.loads(path.read_text(encoding="utf-8"))
    assert [c.id for c in fixture.criteria] == [data["id"]] and not fixture.groups  # the chain folds into the root
    texts = [
        data["requirements"],
        data["sub_tasks"][0]["requirements"],
        data["sub_tasks"][0]["sub_tasks"][0]["requirements"],
    ]
    assert fixture.criteria[0].description == " — ".join(texts)
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
    """Nodes after single-child chains are folded (a wrapper and its only child, unless it weighs 0, are one node)."""
    while len(node.get("sub_tasks") or []) == 1 and node["sub_tasks"][0]["weight"] != 0:
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


def test_the_envelopes_generator_requires_temperature_and_seed(tmp_path):
    """Seed 003's generator block marks only `snapshot` optional (as it marks `audit` and
    `execution_profile` elsewhere): an envelope without `temperature` or `seed` was accepted."""
    block = jsonc_after("## Envelope")
    assert '"temperature":   0.0,' in block and '"seed":          0,' in block
    assert '"snapshot":      { ... }                       // optional' in block
    for field in ("temperature", "seed"):
        env = envelope(tree(leaf("a"), leaf("b")))
        env["generator"].pop(field)
        path = write(tmp_path, rehash(env), f"no_{field}.json")
        with pytest.raises(RubricImportError) as err:
            load_rubric(path)
        assert str(err.value).startswith(f"{path}: field generator.{field}: required") and "\n" not in str(err.value)
    load_rubric(write(tmp_path, envelope(tree(leaf("a"), leaf("b"))), "ok.json"))  # snapshot left out: fine


@pytest.mark.parametrize(
    "node_id",
    ["not-a-uuid", str(uuid.uuid5(uuid.NAMESPACE_URL, "root")), str(uuid.uuid1(node=1, clock_seq=1))],
    ids=["not a uuid", "uuid5", "uuid1"],
)
def test_an_envelopes_node_ids_are_uuid_v4(tmp_path, node_id):
    """Seed 003's TaskNode: `"id": "<uuid v4>"`; an envelope whose root id was `not-a-uuid` (or a uuid of
    another version, as rubricflow's generator wrote uuid5) was accepted."""
    assert '"id":           "<uuid v4>",' in jsonc_after("## `TaskNode` (rubric tree)")
    env = envelope(tree(leaf("a"), leaf("b")))
    env["rubric"]["sub_tasks"][1]["id"] = node_id
    path = write(tmp_path, rehash(env))
    with pytest.raises(RubricImportError) as err:
        load_rubric(path)
    assert str(err.value).startswith(f"{path}: field rubric.sub_tasks[1].id: {node_id!r} is not a uuid v4")


def test_published_paperbench_trees_whose_ids_are_not_uuid_v4_still_import():
    """The v4 rule is the envelope's: a published PaperBench tree (read without an envelope) whose ids
    are not uuids, as openai/frontier-evals' bridging-data-gaps, is not refused."""
    path = REAL_TREES / "bridging-data-gaps.rubric.json"
    ids = re.findall(r'"id": "([^"]+)"', path.read_text(encoding="utf-8"))
    assert any(not re.fullmatch(UUID4_PATTERN, i) for i in ids)
    assert load_rubric(path).criteria


def test_flags_on_a_parent_are_checked_and_kept_and_a_fold_keeps_both_nodes_flags(tmp_path):
    """Seed 003's TaskNode: `"flags": ["unverifiable"]  // optional`, a field of every node (not LEAF ONLY).
    A parent's flags were neither checked against the closed list nor kept, and a folded leaf lost its
    own flags to the wrapper's."""
    line = next(x for x in jsonc_after("## `TaskNode` (rubric tree)").splitlines() if '"flags"' in x)
    assert line.split("//")[1].strip() == "optional"
    group = {"id": "mid", "requirements": "Middle node requirement.", "weight": 1, "sub_tasks": [leaf("a"), leaf("b")]}
    r = load_rubric(write(tmp_path, tree({**group, "flags": ["duplicate"]}, leaf("c"))))
    assert json.loads(r.metadata.provenance["group_flags"]) == {"mid": ["duplicate"]}
    path = write(tmp_path, tree({**group, "flags": ["not_a_flag"]}, leaf("c")), "bad.json")
    with pytest.raises(RubricImportError) as err:
        load_rubric(path)
    assert str(err.value) == (
        f"{path}: field (root).sub_tasks[0].flags (node mid): 'not_a_flag' is not one of {', '.join(FLAGS)}"
    )
    wrapper = {
        "id": "wrap",
        "requirements": "A wrapper with one child.",
        "weight": 1,
        "flags": ["vague_qualifier"],
        "sub_tasks": [leaf("inner", flags=["unverifiable"])],
    }
    folded = load_rubric(write(tmp_path, tree(wrapper, leaf("c")), "fold.json")).criterion("wrap")
    assert folded.tags == ("flag:vague_qualifier", "flag:unverifiable")
