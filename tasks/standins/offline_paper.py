"""A deterministic stand-in for a model answering `rubric generate --from-paper` (tasks/improve/paper_rubric.py
asks it): each `##` section of the Markdown paper becomes a node, each of its first two sentences a leaf
quoting that sentence verbatim. Asked for one audit axis' subtree (a paper_audit's second stage), it
answers with that axis' share of the sections (round robin; an axis left without one borrows one). Not a model."""

from __future__ import annotations

import re

_SECTION = re.compile(r"^##\s+(.+)$", re.M)
_SENTENCE = re.compile(r"[^.!?\n]{10,}[.!?]")
_AXIS_REQUEST = re.compile(r"drafts audit axis (\d+) of (\d+) only")


def tree(system: str, user: str) -> dict:
    m = re.search(r"<<<BEGIN PAPER (\w+)>>>\n(.*?)\n<<<END PAPER \1>>>", user, re.S)
    paper = m.group(2) if m else ""
    parts = _SECTION.split(paper)
    sections = [(parts[i].strip(), parts[i + 1]) for i in range(1, len(parts) - 1, 2)]
    nodes = [_node(title, body) for title, body in sections]
    nodes = [n for n in nodes if n["sub_tasks"]]
    axis = _AXIS_REQUEST.search(system)
    if axis and nodes:  # one axis of a paper_audit: its share of the sections
        index, count = int(axis.group(1)) - 1, int(axis.group(2))
        nodes = nodes[index::count] or [nodes[index % len(nodes)]]
    return {"rubric": {"requirements": "The paper's results can be reproduced.", "weight": 1, "sub_tasks": nodes}}


def _node(title: str, body: str) -> dict:
    leaves = [
        {
            "requirements": f"The submission reproduces: {s.strip()}",
            "weight": 1,
            "sub_tasks": [],
            "task_category": "Code Development",
            "finegrained_task_category": "Method Implementation",
            "rationale_from_paper": {"section": title, "quote": s.strip()},
        }
        for s in _SENTENCE.findall(body)[:2]
    ]
    return {"requirements": f"The work of section {title} is reproduced.", "weight": 1, "sub_tasks": leaves}
