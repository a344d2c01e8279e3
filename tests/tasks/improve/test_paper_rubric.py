"""`rubric generate --from-paper`: a PaperBench tree from a Markdown paper that passes the seed's JSON
Schema, every leaf's quote checked against the paper (flagged when absent), and more than 20% flagged
leaves asking again, a bounded number of times; over real HTTP (the offline judge, and a scripted
server that misquotes)."""

import json
import os
import re
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jsonschema
import pytest

from rubricflow.errors import InputError
from rubricflow.rubrics.formats import load_rubric
from rubricflow.rubrics.importers.replication_schema import UUID4_PATTERN
from rubricflow.tasks.improve.paper_rubric import SCHEMA, axis_requirements, generate, leaves, node_id
from rubricflow.tasks.improve.venues import load_venue
from rubricflow.tasks.judging.config import JudgeConfig
from tests.conftest import EXE, SHARED

SEED = (SHARED.parent / "seeds" / "003_54567a775465b711.txt").read_text(encoding="utf-8")

PAPER = """# Sparse attention for long documents

## Method
We replace dense attention with a block-sparse pattern of width 64. The model is trained for 100k steps with AdamW.

## Evaluation
We report perplexity on the PG-19 test split. Our model reaches 33.2 perplexity against 35.1 for the dense baseline.
"""
QUOTES = [
    "We replace dense attention with a block-sparse pattern of width 64.",
    "We report perplexity on the PG-19 test split.",
]


def run(cwd, *args):
    return subprocess.run(
        [EXE, *args], cwd=cwd, capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"}
    )


def test_a_paper_gives_a_valid_tree_with_every_quote_in_the_paper(tmp_path, thread_judge_server):
    server = thread_judge_server()
    (tmp_path / "paper.md").write_text(PAPER)
    done = run(tmp_path, "rubric", "generate", "--from-paper", "paper.md", "--base-url", server.base_url)
    assert done.returncode == 0, done.stderr
    assert "wrote paper.rubric.json: 4 leaves, 0 flagged" in done.stdout and "1 round(s)" in done.stdout
    tree = json.loads((tmp_path / "paper.rubric.json").read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(tree)
    assert all(
        " ".join(leaf["rationale_from_paper"]["quote"].split()) in " ".join(PAPER.split())
        for leaf in leaves(tree["rubric"])
    )
    audit = run(
        tmp_path,
        "rubric",
        "generate",
        "--from-paper",
        "paper.md",
        "--venue",
        "paper_audit",
        "-o",
        "a.json",
        "--base-url",
        server.base_url,
    )
    assert audit.returncode == 0, audit.stderr
    axes = [n["requirements"] for n in json.loads((tmp_path / "a.json").read_text())["rubric"]["sub_tasks"]]
    assert axes == [axis_requirements(a) for a in load_venue("paper_audit")["top_level_axes"]]  # the template's
    assert axes[0] == "Artifact availability: The paper says where its code, data and models can be obtained."
    again = run(tmp_path, "rubric", "generate", "--from-paper", "paper.md", "--base-url", server.base_url)
    assert again.returncode == 2 and "exists" in again.stderr
    bad = run(tmp_path, "rubric", "generate", "--from-paper", "paper.md", "--venue", "journal", "-o", "b.json")
    assert bad.returncode == 2 and "--venue 'journal'" in bad.stderr


def _leaf(quote):
    return {
        "requirements": "The submission reproduces the claim.",
        "weight": 1,
        "sub_tasks": [],
        "task_category": "Code Development",
        "finegrained_task_category": "Method Implementation",
        "rationale_from_paper": {"section": "Method", "quote": quote},
    }


def scripted(answers):
    """A chat-completions server that answers each request with the next tree of `answers` (the last repeats)."""
    asked = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (the stdlib's name)
            asked.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
            tree = answers[min(len(asked), len(answers)) - 1]
            content = json.dumps(
                {"rubric": {"requirements": "The results are reproduced.", "weight": 1, "sub_tasks": tree}}
            )
            body = json.dumps(
                {
                    "id": "c",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "m",
                    "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
                    ],
                }
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, asked


@pytest.mark.parametrize(
    ("answers", "rounds", "flagged"),
    [
        (
            [[_leaf("We invented this sentence entirely."), _leaf(QUOTES[1])], [_leaf(QUOTES[0]), _leaf(QUOTES[1])]],
            2,
            0,
        ),
        ([[_leaf("A made-up quote, not in the paper."), _leaf(QUOTES[1])]], 3, 1),  # bounded: 3 rounds, kept flagged
    ],
)
def test_more_than_a_fifth_flagged_asks_again_a_bounded_number_of_times(tmp_path, answers, rounds, flagged):
    server, asked = scripted(answers)
    (tmp_path / "paper.md").write_text(PAPER)
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        config = JudgeConfig(base_url=url, model="m", system_prompt="system")  # it counts every request: no probes
        result = generate(config, tmp_path / "paper.md", "agent_benchmark")
    finally:
        server.shutdown()
    assert (result.rounds, result.flagged, len(asked)) == (rounds, flagged, rounds)
    if rounds > 1:
        assert "not in the paper" in asked[1]["messages"][1]["content"]  # the failed quotes are named
    marked = [leaf for leaf in leaves(result.envelope["rubric"]) if "no_paper_evidence" in leaf.get("flags", [])]
    assert len(marked) == flagged
    jsonschema.Draft202012Validator(SCHEMA).validate(result.envelope)
    broken = json.loads(json.dumps(result.envelope))
    broken["rubric"]["sub_tasks"][0]["task_category"] = "Writing"
    assert not jsonschema.Draft202012Validator(SCHEMA).is_valid(broken)  # the closed vocabulary holds


def _generate(tmp_path, answers, venue, **kwargs):
    server, asked = scripted(answers)
    (tmp_path / "paper.md").write_text(PAPER)
    try:
        config = JudgeConfig(
            base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", model="m", system_prompt="system"
        )
        return generate(config, tmp_path / "paper.md", venue, **kwargs), asked
    finally:
        server.shutdown()


def test_a_paper_audit_venues_root_children_are_exactly_its_axes(tmp_path):
    """Seed 003: `paper_audit` | "Direct children are a fixed set of audit axes declared in
    `top_level_axes`". A model answering one free-form child of weight 5 for `sc` (six axes) had its
    tree returned as it was; now each axis is a child as the template writes it (id, name and
    description, weight), and the model is asked for each axis' subtree in turn (two stages)."""
    assert "| `paper_audit` | Direct children are a fixed set of audit axes declared in `top_level_axes`." in SEED
    free_form = [{"requirements": "Some free-form contribution node", "weight": 5, "sub_tasks": [_leaf(QUOTES[0])]}]
    result, asked = _generate(tmp_path, [free_form], "sc")
    axes = load_venue("sc")["top_level_axes"]
    children = result.envelope["rubric"]["sub_tasks"]
    assert [(c["requirements"], c["weight"]) for c in children] == [(axis_requirements(a), a["weight"]) for a in axes]
    assert [c["weight"] for c in children] == [2, 1, 2, 1, 1, 1]
    assert [c["id"] for c in children] == [node_id(f"root/{a['id']}") for a in axes]  # drawn from the axis' id
    assert all(c["sub_tasks"][0]["requirements"] == "Some free-form contribution node" for c in children)
    assert len(asked) == len(axes)  # one request per axis: the second stage
    for i, request in enumerate(asked):
        system = request["messages"][0]["content"]
        assert f"drafts audit axis {i + 1} of {len(axes)} only" in system and f"- {axes[i]['id']}: " in system
    jsonschema.Draft202012Validator(SCHEMA).validate(result.envelope)


def test_a_paper_audit_venue_refuses_single_pass_with_the_seeds_error(tmp_path):
    """Seed 003: "`paper_audit` mode requires `two_stage=True`; the single-pass path cannot honour the
    fixed-axis constraint and `generate_rubric_async` returns an error if the combination is requested."
    Nothing refused it; the model is not asked."""
    assert "`paper_audit` mode requires `two_stage=True`; the single-pass path" in SEED
    with pytest.raises(InputError) as err:
        _generate(tmp_path, [[_leaf(QUOTES[0])]], "sc", two_stage=False)
    assert str(err.value) == (
        "paper_audit template 'sc' requires two_stage=True "
        "(single-pass skeleton+leaves cannot honour the fixed-axis constraint)"
    )
    result, asked = _generate(tmp_path, [[_leaf(QUOTES[0]), _leaf(QUOTES[1])]], "generic", two_stage=False)
    assert len(asked) == 1 and len(leaves(result.envelope["rubric"])) == 2  # agent_benchmark: single pass


def test_generated_node_ids_are_uuid_v4_the_same_on_every_run(tmp_path):
    """Seed 003's TaskNode `"id": "<uuid v4>"`: the generator wrote uuid5; its ids are now uuid v4 drawn
    from a hash of the node's place, so a second run gives the same ids, and the envelope imports."""
    assert '"id":           "<uuid v4>",' in SEED
    answers = [[_leaf(QUOTES[0]), _leaf(QUOTES[1])]]
    first, _ = _generate(tmp_path, answers, "agent_benchmark")
    again, _ = _generate(tmp_path, answers, "agent_benchmark")

    def ids(node):
        return [node["id"]] + [i for c in node["sub_tasks"] for i in ids(c)]

    assert ids(first.envelope["rubric"]) == ids(again.envelope["rubric"])
    assert all(re.fullmatch(UUID4_PATTERN, i) for i in ids(first.envelope["rubric"]))
    assert {"temperature", "seed"} <= set(first.envelope["generator"])
    (tmp_path / "paper.rubric.json").write_text(json.dumps(first.envelope), encoding="utf-8")
    assert len(load_rubric(tmp_path / "paper.rubric.json").criteria) == 2  # the importer's schema takes it
