"""A deterministic stand-in for the reflection model asked for a meta-component of a co-evolving
`improve evolve` (tasks/improve/coevolve.py asks it): it reads the rounds so far and answers
- gate: without the lattice properties that refused proposals, else a little more slack;
- reflection: the template with one lesson added, from the last target round that was not accepted;
- acceptance: a tolerance loosened by 0.01 for an objective that refused a round, tightened by 0.01
  (0.02 where none was set) for the others; so a later tightening can be refused for undoing a round."""

from __future__ import annotations

import json
import re

_ROUND = re.compile(r"^- round (\d+) \((\w+)\): (\w+): (.*)$", re.M)


def meta_value(user: str) -> dict:
    name = re.search(r"^## Component: (\w+)$", user, re.M)
    named = re.search(r"^## Objectives: (.*)$", user, re.M)
    current = json.loads(user.split("## Current value\n", 1)[1].split("\n## Rounds so far", 1)[0])
    rounds = _ROUND.findall(user)
    if name is None:
        return {}
    if name.group(1) == "gate":
        lowered = {p for *_, reason in rounds for p in re.findall(r"(\w+) \(\S+ -> \S+\)", reason)}
        kept = [p for p in current["properties"] if p not in lowered] or current["properties"][:1]
        slack = current["slack"] if kept != current["properties"] else round(current["slack"] + 0.05, 4)
        return {"value": {"properties": kept, "slack": slack}}
    if name.group(1) == "reflection":
        missed = [
            (n, status, reason)
            for n, component, status, reason in rounds
            if component == "target" and status != "accepted"
        ]
        lesson = (
            f"Round {missed[-1][0]} was {missed[-1][1]} ({missed[-1][2]}): propose something else."
            if missed
            else "Prefer one small change."
        )
        return {"value": f"{current} {lesson}"}
    fell = {m for *_, reason in rounds for m in re.findall(r"(\w+) fell beyond its tolerance", reason)}
    objectives = [o.strip() for o in named.group(1).split(",")] if named else ["agreement"]
    value = {}
    for o in objectives:
        now = current.get(o)
        value[o] = (
            round(min((now or 0) + 0.01, 0.1), 4)
            if o in fell
            else (0.02 if now is None else max(round(now - 0.01, 4), 0.0))
        )
    return {"value": value}
