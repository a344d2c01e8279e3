"""PaperBench `TaskNode` trees: leaves are binary criteria, every parent the weighted mean of its
children. The provenance envelope wraps a tree with shas that are verified on import."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..documents import RubricImportError, rubric_from_data
from ..model import Rubric
from .common import items, kebab, number, safe_id

ENVELOPE_FIELDS = ("paper_sha256", "rubric_sha256", "generator")


def canonical_sha256(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def is_graded_tree(data: Any) -> bool:
    """A PaperBench tree graded by hand (expected_result.json): a `score` on its root."""
    return isinstance(data, dict) and "sub_tasks" in data and "requirements" in data and "score" in data


def node_grades(tree: dict) -> dict[str, float]:
    """Every graded node's score (leaves 0/1, internal nodes the grader's aggregate), by the ids
    import_tree gives the nodes."""
    grades: dict[str, float] = {}
    count = [0]

    def walk(node: dict) -> None:
        node_id = safe_id(node.get("id"), f"node{count[0]}")
        count[0] += 1
        if isinstance(node.get("score"), (int, float)) and not isinstance(node.get("score"), bool):
            grades[node_id] = float(node["score"])
        for child in node.get("sub_tasks") or []:
            walk(child)

    walk(tree)
    return grades


def import_envelope(data: dict, source: Path) -> Rubric:
    tree = data.get("rubric")
    if not isinstance(tree, dict):
        raise RubricImportError(source, "field rubric: the envelope carries no rubric tree")
    actual = canonical_sha256(tree)
    if actual != data["rubric_sha256"]:
        raise RubricImportError(
            source, f"field rubric_sha256: {data['rubric_sha256']} does not match the tree ({actual})"
        )
    provenance: dict[str, Any] = {k: str(data[k]) for k in ENVELOPE_FIELDS if k in data}
    audit = data.get("audit") or data.get("audit_flags") or {}
    if isinstance(audit, dict):
        provenance.update(
            {f"audit.{k}": v if isinstance(v, (str, int, float, bool)) else json.dumps(v) for k, v in audit.items()}
        )
    elif isinstance(audit, list):
        provenance["audit"] = ",".join(map(str, audit))
    return import_tree(tree, source, extra_provenance=provenance)


def import_tree(tree: dict, source: Path, extra_provenance: dict | None = None) -> Rubric:
    criteria: list[dict] = []
    groups: list[dict] = []
    expected: dict[str, int] = {}
    count = [0]

    def walk(node: dict, path: str) -> str:
        if not isinstance(node, dict) or "requirements" not in node:
            raise RubricImportError(source, f"field {path}: a task node needs `requirements`")
        node_id = safe_id(node.get("id"), f"node{count[0]}")  # pre-order, as node_grades numbers them
        count[0] += 1
        weight = number(node.get("weight", 1), source, f"{path}.weight")
        children = items(node.get("sub_tasks"), source, f"{path}.sub_tasks")
        category = node.get("task_category")
        if not children:
            criteria.append(
                {
                    "id": node_id,
                    "description": str(node["requirements"]),
                    "scale": {"kind": "binary", "labels": ["not satisfied", "satisfied"]},
                    "weight": weight,
                    "tags": [str(t) for t in (category, node.get("finegrained_task_category")) if t],
                }
            )
            if "score" in node:
                expected[node_id] = int(round(number(node["score"], source, f"{path}.score")))
        else:
            child_ids = [walk(child, f"{path}.sub_tasks[{i}]") for i, child in enumerate(children)]
            groups.append(
                {
                    "id": node_id,
                    "description": str(node["requirements"]),
                    "weight": weight,
                    "children": child_ids,
                    "aggregation": "weighted_mean",
                }
            )
        return node_id

    root_id = walk(tree, "(root)")
    provenance = {"format": "paperbench", "source": source.name, **(extra_provenance or {})}
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
        "scoring": {"root": root_id} if groups else {},
    }
    if expected:  # a graded tree (expected_result.json): keep the human grades as a golden
        doc["goldens"] = [{"name": "graded-tree", "output": "(the graded submission)", "expected_scores": expected}]
    return rubric_from_data(doc, source)
