"""A deterministic stand-in for a model answering `rubric generate --from-paper` (tasks/improve/paper_rubric.py
asks it): each `##` section of the Markdown paper becomes a node (under the venue's audit axes for
paper_audit), each of its first two sentences a leaf quoting that sentence verbatim. Not a model."""

from __future__ import annotations

import re

_SECTION = re.compile(r"^##\s+(.+)$", re.M)
_SENTENCE = re.compile(r"[^.!?\n]{10,}[.!?]")
_AXIS = re.compile(r"^- (\w+): (.+) \(weight (\d+)\)$", re.M)


def tree(system: str, user: str) -> dict:
    m = re.search(r"<<<BEGIN PAPER (\w+)>>>\n(.*?)\n<<<END PAPER \1>>>", user, re.S)
    paper = m.group(2) if m else ""
    parts = _SECTION.split(paper)
    sections = [(parts[i].strip(), parts[i + 1]) for i in range(1, len(parts) - 1, 2)]
    nodes = [_node(title, body) for title, body in sections]
    nodes = [n for n in nodes if n["sub_tasks"]]
    axes = _AXIS.findall(system)
    if axes:  # paper_audit: the fixed axes are the direct children, the sections shared out among them
        nodes = [
            {
                "requirements": f"The paper documents its {name.lower()}.",
                "weight": int(w),
                "sub_tasks": nodes[i :: len(axes)],
            }
            for i, (_, name, w) in enumerate(axes)
        ]
        nodes = [n for n in nodes if n["sub_tasks"]]
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
