"""The labelling queue in Label Studio's JSON, for teams that label there: tasks out (one a text of
the queue, `data` holding its id, text, input and context), a labelling config beside them (one
single-choice control a criterion, named by the criterion's id, its choices the scale's points), and
the annotations Label Studio exports back in as labels (one rater an annotator). The shapes are
Label Studio's documented task format (labelstud.io/guide/task_format): a list of tasks, each with
`data` and `annotations`, each annotation a `result` list of {from_name, to_name, type, value}."""

from __future__ import annotations

import json
from pathlib import Path
from xml.sax.saxutils import quoteattr

from rubricflow.errors import InputError

from .labelling import Point

VALUE_KEYS = ("choices", "rating", "number")  # the controls whose answer is one scale point


def tasks(texts: list[dict]) -> list[dict]:
    """One Label Studio task a text, in queue order."""
    return [{"data": {k: t[k] for k in ("text_id", "text", "input", "context") if t.get(k) is not None}} for t in texts]


def point_name(value: float) -> str:
    """A scale point as a choice's value: 2.0 -> '2', 0.5 -> '0.5'."""
    return f"{value:g}"


def config(criteria: list[dict]) -> str:
    """Label Studio's labelling config for the rubric: the text, then each criterion's choices."""
    lines = ["<View>", '  <Text name="text" value="$text"/>']
    for c in criteria:
        title = f"{c['criterion_id']}: {c.get('description') or c.get('title') or ''}".strip()
        lines.append(f"  <Header value={quoteattr(title)}/>")
        lines.append(f'  <Choices name={quoteattr(c["criterion_id"])} toName="text" choice="single" showInline="true">')
        for p in c["points"]:
            hint = f" hint={quoteattr(p.description)}" if p.description else ""
            lines.append(f"    <Choice value={quoteattr(point_name(p.value))}{hint}/>")
        lines.append("  </Choices>")
    lines.append("</View>")
    return "\n".join(lines) + "\n"


def annotator(annotation: dict, rater: str | None) -> str:
    """The rater of one annotation: the name given, else Label Studio's annotator (email or id)."""
    if rater:
        return rater
    who = annotation.get("completed_by")
    if isinstance(who, dict):
        who = who.get("email") or who.get("id")
    return f"label-studio-{who}" if isinstance(who, int) or (isinstance(who, str) and "@" not in who) else str(who)


def answer(result: dict, points: list[Point], where: str) -> float:
    """The scale point one result chose; refused when it is no point of the criterion's scale."""
    value = result.get("value") or {}
    key = next((k for k in VALUE_KEYS if k in value), None)
    if key is None:
        raise InputError(f"{where}: a {result.get('type')!r} result; a criterion needs one of {', '.join(VALUE_KEYS)}")
    given = value[key][0] if key == "choices" and isinstance(value[key], list) and value[key] else value[key]
    try:
        number = float(given)
    except (TypeError, ValueError):
        raise InputError(f"{where}: {given!r} is not a number") from None
    if not any(abs(p.value - number) < 1e-9 for p in points):
        allowed = ", ".join(point_name(p.value) for p in points)
        raise InputError(f"{where}: {given!r} is not a point of the criterion's scale ({allowed})")
    return number


def labels(path: Path, criteria: dict[str, list[Point]], rater: str | None) -> list[dict]:
    """Rows (text_id, criterion_id, rater, score) from a Label Studio JSON export; cancelled
    (skipped) annotations are left out; a later answer of one rater replaces an earlier one."""
    try:
        exported = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not a Label Studio JSON export ({exc})") from None
    if not isinstance(exported, list):
        raise InputError(f"{path}: a Label Studio JSON export is a list of tasks")
    found: dict[tuple[str, str, str], float] = {}
    for number, task in enumerate(exported, 1):
        text_id = (task.get("data") or {}).get("text_id") if isinstance(task, dict) else None
        if not text_id:
            raise InputError(f"{path}: task {number} has no data.text_id (export the tasks `labels export-ls` wrote)")
        for annotation in task.get("annotations") or []:
            if annotation.get("was_cancelled"):
                continue
            who = annotator(annotation, rater)
            for result in annotation.get("result") or []:
                name = result.get("from_name")
                where = f"{path}: task {number} ({text_id}), {name!r}"
                if name not in criteria:
                    raise InputError(f"{where}: no criterion of the rubric has this name")
                found[(str(text_id), name, who)] = answer(result, criteria[name], where)
    return [{"text_id": t, "criterion_id": c, "rater": r, "score": s} for (t, c, r), s in found.items()]
