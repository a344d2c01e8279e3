"""A deterministic stand-in for a model answering `rubric refine` (tasks/improve/refine.py asks it): for
the lattice property named, the seed's instruction primitive applied to the rubric as literally as a
rule can (a scoped mission from the rubric's own criteria, anchors from each criterion's title, a
BECAUSE: ritual and its restatement, criteria that share a first word merged). Not a model: a way to
run the loop over real HTTP without one."""

from __future__ import annotations

import re
from collections.abc import Callable

import yaml

MAX_CRITERIA = 7
_PROPERTY = re.compile(r"^## Property to improve: (\S+)$", re.M)


def refine(user: str) -> dict:
    if "\n## Options\n" in user:  # `rubric refine --choose`: every option offered, by number
        return {"choose": [int(n) for n in re.findall(r"(?m)^(\d+)\. ", user.split("\n## Options\n", 1)[1])]}
    found = _PROPERTY.search(user)
    if found is None or "## The rubric\n" not in user:
        return {"mutations": []}
    rubric = yaml.safe_load(user.split("## The rubric\n", 1)[1].split("\n## Property to improve:", 1)[0])
    propose: Callable[[dict], list[dict]] = _BY_PROPERTY.get(found.group(1), lambda _: [])
    return {"mutations": propose(rubric)}


def _title(c: dict) -> str:
    return (c.get("title") or c["id"].replace("-", " ")).strip()


def mission(r: dict) -> list[dict]:
    name = r["metadata"].get("title") or r["metadata"]["id"].replace("-", " ")
    titles = ", ".join(_title(c).lower() for c in r.get("criteria", [])[:3])
    goal = f"Judge {name} texts on {titles} and give each criterion a level with a BECAUSE: rationale."
    return [{"op": "set_goal", "goal": goal}]


def anchors(r: dict) -> list[dict]:
    out = []
    for c in r.get("criteria", []):
        scale = c.get("scale") or {}
        bare = scale.get("kind") == "numeric" or (
            scale.get("kind") == "ordinal"
            and any(not (a.get("description") or a.get("label")) for a in scale["anchors"])
        )
        if bare:
            t = _title(c).lower()
            levels = [f"No sign of {t}.", f"{t} in a few places.", f"{t} in most of the text.", f"{t} throughout."]
            new = {"kind": "ordinal", "anchors": [{"value": i, "description": d} for i, d in enumerate(levels)]}
            out.append({"op": "rewrite_criterion", "id": c["id"], "changes": {"scale": new}})
    return out


def mechanical(r: dict) -> list[dict]:
    criteria = r.get("criteria", [])
    if not criteria:
        return []
    first = criteria[0]
    words = ["very", "really", "basically", "actually", "quite"]
    return [
        {"op": "add_pattern", "pattern": {"id": "hedge-words", "words": words, "flags": "i"}},
        {
            "op": "rewrite_criterion",
            "id": first["id"],
            "changes": {
                "patterns": [*(first.get("patterns") or []), "hedge-words"],
                "mechanical_rules": ["Count the hedge-words hits; more than 3 lowers the level by one."],
            },
        },
    ]


def disqualifiers(r: dict) -> list[dict]:
    criteria = r.get("criteria", [])
    if not criteria:
        return []
    first = criteria[0]
    dq = {
        "id": f"{first['id']}-floor",
        "kind": "criterion",
        "criterion": first["id"],
        "description": f"A text at the floor of {_title(first).lower()} fails outright.",
    }
    return [{"op": "add_disqualifier", "disqualifier": dq}]


RITUAL = {"id": "because", "field": "rationale", "prefix": "BECAUSE:", "max_words": 35}


def ritual(r: dict) -> list[dict]:
    return [{"op": "add_output_constraint", "constraint": RITUAL}]


def mirror(r: dict) -> list[dict]:
    constraints = (r.get("output") or {}).get("constraints") or []
    out = [] if constraints else ritual(r)
    for c in constraints or [RITUAL]:
        if c.get("prefix"):
            out.append({"op": "add_validation", "text": f"Rationales start with '{c['prefix']}' ({c['id']})."})
    return out


def economy(r: dict) -> list[dict]:
    """Criteria whose ids share a first word are merged into the first of them; if more than 7 remain,
    the last ones are merged into the seventh."""
    criteria = r.get("criteria", [])
    groups: dict[str, list[dict]] = {}
    for c in criteria:
        groups.setdefault(c["id"].split("-")[0], []).append(c)
    merged = [g for g in groups.values() if len(g) > 1]
    out = [_merge(g) for g in merged]
    remaining = [g[0] for g in groups.values()]
    if len(remaining) > MAX_CRITERIA:
        out.append(_merge(remaining[MAX_CRITERIA - 1 :]))
    return out


def _merge(group: list[dict]) -> dict:
    into = {k: v for k, v in group[0].items() if k != "patterns" or v}
    into["description"] = " ".join(c.get("description") or _title(c) for c in group)
    into["patterns"] = sorted({p for c in group for p in c.get("patterns") or []})
    return {"op": "merge_criteria", "ids": [c["id"] for c in group], "into": into}


_BY_PROPERTY: dict[str, Callable[[dict], list[dict]]] = {
    "mission": mission,
    "anchors": anchors,
    "mechanical": mechanical,
    "disqualifiers": disqualifiers,
    "ritual": ritual,
    "mirror": mirror,
    "economy": economy,
}
