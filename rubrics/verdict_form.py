"""A rubric document judged by its verdict (seed 000's P_decision: "decision logic instead of
arithmetic scoring"): the form every rubric with decision rules and a scored verdict space takes, in
whatever format it came, applied where a Rubric is made (rubrics/model.Rubric) so that every path to
one, a file, the Python API or a round trip, gives the same rubric and the same hash. The rules
themselves are applied from the answers in rubrics/decision_logic.py."""

from __future__ import annotations

import re
from typing import Any

VERDICT_TAG = "verdict"  # the criterion that carries the verdict


def with_the_verdict_asked(data: Any) -> Any:
    """A native rubric document with decision rules and a scored verdict space, judged by its verdict
    whatever its format (an imported ComplianceJudge's XML too; seed 000's P_decision:
    "decision logic instead of arithmetic scoring"): one nominal criterion asks the verdict, the
    anchored criteria (the evidence the rules read) weigh 0 under a weighted mean, the labels are the
    verdicts, and the rule that names a DQ gives the disqualified label. Without this a YAML
    ComplianceJudge scored its criteria arithmetically and never applied R1-R4. A document that
    already asks its verdict, or whose rules or verdicts are not all {id, condition} / scored, is
    returned as it is (the XML import passes through here too)."""
    if not _asks_no_verdict_yet(data):
        return data
    rules, verdicts, criteria = data["decision_rules"], data["verdicts"], data.get("criteria") or []
    template = str((data.get("output") or {}).get("template") or "")
    tag = re.search(r"<(\w+)>\s*" + re.escape(str(verdicts[0]["label"])) + r"\s*\|", template)
    verdict_id = tag.group(1) if tag else "Verdict"
    names = [str(c.get("id")) for c in criteria]
    if verdict_id in names:
        return data
    asked = {
        "id": verdict_id,
        "title": "Verdict",
        "description": f"The verdict the decision logic gives ({', '.join(str(r['id']) for r in rules)}), "
        f"read from {', '.join(names) or 'the response'}, the definitions and the disqualifiers.",
        "scale": {
            "kind": "nominal",
            "categories": [
                {"value": v["label"], "score": v["score"], "description": _rules_giving(rules, v["label"])}
                for v in verdicts
            ],
        },
        "tags": [VERDICT_TAG],
    }
    scoring = dict(data.get("scoring") or {}, method="weighted_mean", invert=False)  # the verdict's own score
    scoring["labels"] = [{"label": v["label"], "min": v["score"]} for v in sorted(verdicts, key=lambda v: -v["score"])]
    on_dq = next((r["verdict"] for r in rules if r.get("verdict") and re.search(r"\bDQ", str(r["condition"]))), None)
    if on_dq:
        scoring["disqualified_label"] = on_dq
    out = {**data, "criteria": [*({**c, "weight": 0.0} for c in criteria), asked], "scoring": scoring}
    if data.get("groups"):
        out["groups"] = [{**g, "weight": 0.0} if isinstance(g, dict) else g for g in data["groups"]]
    return out


def _asks_no_verdict_yet(data: Any) -> bool:
    """Decision rules as {id, condition, verdict}, two or more verdicts each with a numeric score,
    criteria as mappings none of which asks the verdict already, and no scoring root that would leave
    the verdict out of the score."""
    if not isinstance(data, dict):
        return False
    rules, verdicts, criteria = data.get("decision_rules"), data.get("verdicts"), data.get("criteria") or []
    scoring = data.get("scoring") or {}
    return (
        isinstance(rules, list)
        and bool(rules)
        and all(isinstance(r, dict) and "id" in r and "condition" in r for r in rules)
        and isinstance(verdicts, list)
        and len(verdicts) >= 2
        and all(isinstance(v, dict) and "label" in v and _is_number(v.get("score")) for v in verdicts)
        and isinstance(criteria, list)
        and all(isinstance(c, dict) and VERDICT_TAG not in (c.get("tags") or ()) for c in criteria)
        and isinstance(scoring, dict)
        and not scoring.get("root")
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _rules_giving(rules: list[dict], label: str) -> str:
    return "; ".join(f"{r['id']}: {r['condition']}" for r in rules if r.get("verdict") == label)
