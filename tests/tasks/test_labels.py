"""Labels into the warehouse: a hand-graded PaperBench tree becomes labels of every node, and the
warehouse's tree aggregation over the leaf grades reproduces every internal node's grade."""

import json

import pytest

from rubricflow.tasks.loaders.labels import import_graded_tree
from tests.conftest import SHARED_RUBRICS, rows

GRADED = SHARED_RUBRICS / "paperbench/semantic-self-consistency.expected_result.json"


def weighted_means(node: dict) -> dict[str, float]:
    """Each internal node's weighted mean of its children's grades, computed here from the file."""
    out = {}
    children = node.get("sub_tasks") or []
    if children:
        for child in children:
            out.update(weighted_means(child))
        out[node["id"]] = sum(c["weight"] * c["score"] for c in children) / sum(c["weight"] for c in children)
    return out


def test_a_graded_tree_lands_as_labels_and_every_internal_node_checks(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    n, rubric_hash, check = import_graded_tree(GRADED, "papers", warehouse)
    tree = json.loads(GRADED.read_text())
    expected = weighted_means(tree)
    assert n == 102 and len(check) == len(expected) == 23
    for c in check:
        assert c["agrees"] and c["aggregated"] == pytest.approx(expected[c["node_id"]])
    (root,) = [c for c in check if c["node_id"] == tree["id"]]
    assert root["graded"] == pytest.approx(0.91)
    assert rows(warehouse, "SELECT count(DISTINCT rater), min(text_id) FROM labels") == [
        (1, "semantic-self-consistency")
    ]


def test_a_grade_that_contradicts_its_leaves_is_found(tmp_path):
    tree = json.loads(GRADED.read_text())
    tree["sub_tasks"][0]["score"] = 0.25  # the grader's aggregate, no longer the mean of its leaves
    broken = tmp_path / "broken.expected_result.json"
    broken.write_text(json.dumps(tree))
    _, _, check = import_graded_tree(broken, "papers", tmp_path / "w.duckdb")
    wrong = {c["node_id"] for c in check if not c["agrees"]}
    assert tree["sub_tasks"][0]["id"] in wrong
