"""PaperBench `TaskNode` trees: leaves are binary criteria, every parent the weighted mean of its
children; every node carries the fields PaperBench requires (never a default), single-child chains
are folded as ARI folds them, categories come from a closed vocabulary (leaves only), a leaf's
`rationale_from_paper` is kept and audit `flags` (closed list, any node) too: a leaf's as tags, a
parent's in provenance `group_flags`. The ARI provenance envelope (seed 003) is
checked against its JSON Schema and its sha256 verified on import; `reproduce_contract` is kept."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..documents import RubricImportError, rubric_from_data
from ..model import Rubric
from .common import kebab, number, safe_id
from .replication_schema import SCHEMA, UUID4_PATTERN

ENVELOPE_FIELDS = ("paper_sha256", "rubric_sha256", "generator")
TASK_CATEGORIES = ("Code Development", "Code Execution", "Result Analysis")
FINEGRAINED_CATEGORIES = (
    "Environment & Infrastructure Setup",
    "Dataset and Model Acquisition",
    "Data Processing & Preparation",
    "Method Implementation",
    "Experimental Setup",
    "Evaluation, Metrics & Benchmarking",
    "Logging, Analysis & Presentation",
)
FLAGS = ("vague_qualifier", "no_paper_evidence", "duplicate", "unverifiable")


def canonical_sha256(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def is_graded_tree(data: Any) -> bool:
    """A PaperBench tree graded by hand (expected_result.json): a `score` on its root."""
    return isinstance(data, dict) and "sub_tasks" in data and "requirements" in data and "score" in data


def node_grades(tree: dict) -> dict[str, float]:
    """Every graded node's score (leaves 0/1, internal nodes the grader's aggregate), by the ids
    import_tree gives the nodes (after single-child chains are folded)."""
    return {
        node_id: float(node["score"])
        for node, node_id, _ in nodes(tree)
        if isinstance(node.get("score"), (int, float)) and not isinstance(node.get("score"), bool)
    }


def collapse(node: Any) -> Any:
    """Fold single-child wrappers as ARI's `_collapse_single_child_chains` does (seed 003): the
    wrapper keeps its id, weight and claim. A wrapper whose only child weighs 0 stays a group:
    PaperBench scores it 0 (`score_from_children`), a fold would score the child instead."""
    while isinstance(node, dict) and isinstance(node.get("sub_tasks"), list) and len(node["sub_tasks"]) == 1:
        child = node["sub_tasks"][0]
        if not isinstance(child, dict) or _weighs_nothing(child):
            break
        node = _fold(node, child)
    return node


def _weighs_nothing(node: dict) -> bool:
    weight = node.get("weight")
    return isinstance(weight, (int, float)) and not isinstance(weight, bool) and weight == 0


def _fold(wrapper: dict, child: dict) -> dict:
    """ARI's fold of one link: "<parent> — <child>" (unless the parent's text already holds the
    child's), the child's sub_tasks, the child's other fields where the wrapper lacks them (its
    leaf-only fields, a graded child's score) and the union of both nodes' `flags`; the child's id
    and weight are dropped."""
    merged = dict(wrapper)
    for key in child.keys():  # keys only: `doctor` counts the child's id and weight as unused
        if key not in ("id", "weight", "requirements", "sub_tasks") and not wrapper.get(key):
            merged[key] = child[key]
    flags = [f for node in (wrapper, child) if isinstance(node.get("flags"), list) for f in node["flags"]]
    if flags:  # both nodes' audit flags: the fold is one node, and neither's annotation is dropped
        merged["flags"] = list(dict.fromkeys(flags))
    parent_req = _text(wrapper.get("requirements")).rstrip()
    child_req = _text(child.get("requirements")).strip()
    if parent_req and child_req and child_req not in parent_req:
        merged["requirements"] = f"{parent_req} — {child_req}"
    elif child_req and not parent_req:
        merged["requirements"] = child_req
    merged["sub_tasks"] = child.get("sub_tasks")
    return merged


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def nodes(tree: dict) -> Iterator[tuple[dict, str, str]]:
    """(node, its id, its path) in pre-order, chains folded. A node whose id an earlier node already
    has (upstream trees do this: a child repeating its parent's id, siblings or branches sharing one)
    gets `:2`, `:3`... so every node stays addressable and each keeps its own grade."""
    count = [0]
    seen: set[str] = set()

    def walk(node: Any, path: str) -> Iterator[tuple[dict, str, str]]:
        node = collapse(node)
        if not isinstance(node, dict):
            yield node, "", path
            return
        node_id = safe_id(node.get("id"), f"node{count[0]}")
        count[0] += 1
        base, n = node_id, 2
        while node_id in seen:
            node_id, n = f"{base}:{n}", n + 1
        seen.add(node_id)
        yield node, node_id, path
        children = node.get("sub_tasks")
        for i, child in enumerate(children if isinstance(children, list) else []):
            yield from walk(child, f"{path}.sub_tasks[{i}]")

    yield from walk(tree, "(root)")


def import_envelope(data: dict, source: Path) -> Rubric:
    """An ARI replication envelope: checked against its JSON Schema (version "3"), its hash verified
    over the envelope minus `rubric_sha256` and `audit`; provenance and `reproduce_contract` kept."""
    tree = data.get("rubric")
    if not isinstance(tree, dict):
        raise RubricImportError(source, "field rubric: the envelope carries no rubric tree")
    if "version" in data:
        check_schema(data, source)
        actual = canonical_sha256({k: v for k, v in data.items() if k not in ("rubric_sha256", "audit")})
    else:  # envelopes before version 3 hashed the tree alone
        actual = canonical_sha256(tree)
    if actual != data["rubric_sha256"]:
        raise RubricImportError(
            source, f"field rubric_sha256: {data['rubric_sha256']} does not match the envelope ({actual})"
        )
    provenance: dict[str, Any] = {
        k: _scalar(data[k]) for k in (*ENVELOPE_FIELDS, "version", "reproduce_contract") if k in data
    }
    audit = data.get("audit") or data.get("audit_flags") or {}
    if isinstance(audit, dict):
        provenance.update({f"audit.{k}": _scalar(v) for k, v in audit.items()})
    elif isinstance(audit, list):
        provenance["audit"] = ",".join(map(str, audit))
    return import_tree(tree, source, extra_provenance=provenance)


def _scalar(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool)) else json.dumps(value, sort_keys=True)


def check_schema(data: dict, source: Path) -> None:
    """JSON Schema Draft 2020-12; the first violation names its place in the file."""
    if data.get("version") != "3":
        raise RubricImportError(
            source, f"field version: {data.get('version')!r}; the replication schema known is version '3'"
        )
    import jsonschema  # here: every command imports the importers, few read a PaperBench file (0.1 s)

    errors = sorted(jsonschema.Draft202012Validator(SCHEMA).iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.absolute_path).lstrip(".")
        message = first.message
        if first.validator == "required":  # name the missing field itself: generator.temperature
            missing = next(k for k in first.validator_value if k not in first.instance)
            where, message = f"{where}.{missing}".lstrip("."), "required (seed 003's envelope)"
        elif first.validator == "pattern" and first.validator_value == UUID4_PATTERN:
            message = f"{first.instance!r} is not a uuid v4 (seed 003: a TaskNode id is `<uuid v4>`)"
        raise RubricImportError(
            source, f"field {where or '(top level)'}: {message} (JSON Schema; {len(errors)} violation(s))"
        )


REQUIRED = ("id", "requirements", "weight", "sub_tasks")
LEAF_ONLY = ("task_category", "finegrained_task_category", "rationale_from_paper")


def check_tree(node: Any, source: Path, path: str = "(root)") -> None:
    """Every node as written, before folding: what PaperBench's `TaskNode.from_dict` refuses is an
    error naming the node (a missing field, a weight that is not a number), never a default, and a
    leaf-only field (seed 003: `// LEAF ONLY`) on a node with sub_tasks is refused, not dropped, and
    `flags` (a field of every TaskNode) come from the closed list on parents and leaves alike."""
    if not isinstance(node, dict):
        raise RubricImportError(source, f"field {path}: a task node (a mapping) is required, found {node!r}")
    named = f" (node {node['id']})" if isinstance(node.get("id"), str) and node["id"] else ""
    missing = next((k for k in REQUIRED if k not in node), None)
    if missing:
        raise RubricImportError(
            source, f"field {path}.{missing}{named}: missing; PaperBench requires {', '.join(REQUIRED)} on every node"
        )
    if not isinstance(node["id"], str) or not node["id"].strip():
        raise RubricImportError(source, f"field {path}.id: a non-empty string is required, found {node['id']!r}")
    weight = node["weight"]
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight >= 0:
        raise RubricImportError(source, f"field {path}.weight{named}: a number >= 0 is required, found {weight!r}")
    children = node["sub_tasks"]
    if not isinstance(children, list):
        raise RubricImportError(source, f"field {path}.sub_tasks{named}: a list is required, found {children!r}")
    wrong = next((k for k in LEAF_ONLY if node.get(k)), None) if children else None
    if wrong:
        raise RubricImportError(
            source, f"field {path}.{wrong}{named}: leaf only (seed 003), and this node has {len(children)} sub_tasks"
        )
    _check_flags(node.get("flags"), f"{path}.flags{named}", source)
    for i, child in enumerate(children):
        check_tree(child, source, f"{path}.sub_tasks[{i}]")


def import_tree(tree: dict, source: Path, extra_provenance: dict | None = None) -> Rubric:
    """The tree as criteria (its leaves) and weighted-mean groups (its parents), chains folded."""
    check_tree(tree, source)
    criteria: list[dict] = []
    groups: list[dict] = []
    expected: dict[str, int] = {}
    children_of: dict[str, list[str]] = {}
    group_flags: dict[str, list[str]] = {}  # a parent's audit flags (a group has no tags), by group id
    ordered = list(nodes(tree))
    parent_path = {path: node_id for _, node_id, path in ordered}
    for node, node_id, path in ordered:
        weight = float(node["weight"])  # checked by check_tree
        children = node["sub_tasks"]
        _check_categories(node, node_id, path, source)
        if path != "(root)":
            children_of.setdefault(parent_path[path.rsplit(".sub_tasks[", 1)[0]], []).append(node_id)
        if children:
            if node.get("flags"):
                group_flags[node_id] = node["flags"]
            groups.append(
                {
                    "id": node_id,
                    "description": str(node["requirements"]),
                    "weight": weight,
                    "children": [],
                    "aggregation": "weighted_mean",
                }
            )
            continue
        criteria.append(_leaf(node, node_id, weight, path, source))
        if "score" in node:
            expected[node_id] = int(round(number(node["score"], source, f"{path}.score")))
    for group in groups:
        group["children"] = children_of[group["id"]]
    root = collapse(tree)
    provenance = {"format": "paperbench", "source": source.name, **(extra_provenance or {})}
    if group_flags:
        provenance["group_flags"] = _scalar(group_flags)
    doc: dict[str, Any] = {
        "metadata": {
            "id": kebab(source.name.split(".")[0]),
            "title": str(tree["requirements"])[:120],
            "artifact_type": "code-submission",
            "provenance": provenance,
        },
        "goal": str(tree["requirements"]),
        "criteria": criteria,
        "groups": groups,
        "scoring": {"root": ordered[0][1]} if groups and isinstance(root, dict) else {},
    }
    if expected:  # a graded tree (expected_result.json): keep the human grades as a golden
        doc["goldens"] = [{"name": "graded-tree", "output": "(the graded submission)", "expected_scores": expected}]
    return rubric_from_data(doc, source)


def _check_categories(node: dict, node_id: str, path: str, source: Path) -> None:
    """The closed vocabulary (seed 003, PaperBench's VALID_*_TASK_CATEGORIES)."""
    for field, allowed in (("task_category", TASK_CATEGORIES), ("finegrained_task_category", FINEGRAINED_CATEGORIES)):
        value = node.get(field)
        if value is not None and value not in allowed:
            raise RubricImportError(
                source, f"field {path}.{field} (node {node_id}): {value!r} is not one of {', '.join(allowed)}"
            )


def _check_flags(flags: Any, field: str, source: Path) -> None:
    """Seed 003's audit flags: a list from its closed vocabulary (FLAGS), on any node."""
    if flags is None:
        return
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        raise RubricImportError(source, f"field {field}: a list of flag names is expected, found {flags!r}")
    unknown = [f for f in flags if f not in FLAGS]
    if unknown:
        raise RubricImportError(source, f"field {field}: {unknown[0]!r} is not one of {', '.join(FLAGS)}")


def _leaf(node: dict, node_id: str, weight: float, path: str, source: Path) -> dict:
    """A leaf: a binary criterion; its categories and audit flags as tags, the paper's rationale as a note."""
    flags = node.get("flags") or []  # checked by check_tree (a fold's union of two checked lists)
    leaf: dict[str, Any] = {
        "id": node_id,
        "description": str(node["requirements"]),
        "scale": {"kind": "binary", "labels": ["not satisfied", "satisfied"]},
        "weight": weight,
        "tags": [str(t) for t in (node.get("task_category"), node.get("finegrained_task_category")) if t]
        + [f"flag:{f}" for f in flags],
    }
    rationale = node.get("rationale_from_paper")
    if rationale is not None:
        if not isinstance(rationale, dict) or not isinstance(rationale.get("quote"), str):
            raise RubricImportError(source, f"field {path}.rationale_from_paper: needs `section` and `quote`")
        leaf["notes"] = (
            f'Rationale from the paper, {rationale.get("section") or "(no section)"}: "{rationale["quote"]}"'
        )
    return leaf
