"""The labelling page of `rubricflow view` (/label): one text at a time with the rubric's criteria,
scales and anchors; each answer is stored at once as a label (rater = the name given at the start),
so a reload resumes where the rater stopped. The judge's answer stays hidden until the human has
answered (`reveal`: after, never or always), against anchoring. Two windows of the same rater get
different texts: a text shown to one session is claimed by it for CLAIM_S; a label is keyed by
(corpus, text, criterion, rater), so an answer is never stored twice."""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from dataclasses import dataclass
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse

from rubricflow.errors import InputError

CLAIM_S = 600.0  # a text shown to one session is not shown to another of the same rater for this long
REVEAL = ("after", "never", "always")
RATER = re.compile(r"^[\w .@-]{1,64}$")


@dataclass(frozen=True)
class Point:
    key: str  # the keyboard key that answers it
    value: float
    label: str
    description: str


def point_keys(values: list[float]) -> list[str]:
    """The digit that answers each point, as the scale reads: on 1-5 "1" answers 1 and on 0-3 "0"
    answers 0 (whole points within 0-9); any other scale is numbered 1, 2, ... in order (10th: "0")."""
    if all(float(v).is_integer() and 0 <= v <= 9 for v in values):
        return [str(int(v)) for v in values]
    return [str((k + 1) % 10) for k in range(len(values))]


def scale_points(row: dict) -> list[Point]:
    """A criterion's answers, from its native range and step and its anchors' labels (up to 10: digit keys)."""
    low, high, step = row["scale_min"], row["scale_max"], row["unit_step"]
    if low is None or high is None or not step:
        return []
    count = int(round(1 / step)) + 1
    if count > 10:
        return []
    values = [round(low + k * step * (high - low), 9) for k in range(count)]
    scale: dict = next(
        (c["scale"] for c in json.loads(row["document"])["criteria"] if c["id"] == row["criterion_id"]), {}
    )
    anchors = {float(a["value"]): a for a in scale.get("anchors", [])}
    names = scale.get("labels") or []
    points = []
    for k, (v, digit) in enumerate(zip(values, point_keys(values), strict=True)):
        anchor = anchors.get(float(v), {})
        label = anchor.get("label") or (names[k] if len(names) == count else "")
        points.append(Point(digit, float(v), label, anchor.get("description", "")))
    return points


class Claims:
    """Which session is labelling which text, per rater (in memory: a restart frees every claim)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.held: dict[tuple, tuple[str, float]] = {}

    def take(self, key: tuple, candidates: list[str], session: str) -> str | None:
        """The first candidate no other session holds; held by `session` from now."""
        now = time.monotonic()
        with self.lock:
            for text_id in candidates:
                holder = self.held.get((*key, text_id))
                if holder is None or holder[0] == session or now - holder[1] > CLAIM_S:
                    self.held[(*key, text_id)] = (session, now)
                    return text_id
        return None


def next_text(queue: list[str], answers: dict[str, dict], criteria: list[str], skipped: set[str]) -> list[str]:
    """The queue's texts that still miss an answer on some criterion, skipped ones left out."""
    return [t for t in queue if t not in skipped and len(answers.get(t, {})) < len(criteria)]


def progress(queue: list[str], answers: dict[str, dict], criteria: list[str]) -> list[dict]:
    """Labelled / planned per criterion."""
    planned = set(queue)
    return [
        {
            "criterion": c,
            "labelled": sum(1 for t, a in answers.items() if t in planned and c in a),
            "planned": len(queue),
        }
        for c in criteria
    ]


async def form_fields(request: Request) -> dict[str, str]:
    """An urlencoded form's fields (one value each), read without a multipart parser."""
    body = (await request.body()).decode("utf-8", errors="replace")
    return {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}


def check_rater(rater: str) -> str:
    rater = rater.strip()
    if not RATER.match(rater):
        raise InputError("a rater's name is 1 to 64 letters, digits, spaces or . @ - _")
    return rater


def new_session() -> str:
    return secrets.token_urlsafe(8)


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def page_or_form(render, key: dict, choices) -> HTMLResponse | None:
    """The start form (corpus and rubric where the address lacks them, rater name, reveal) while the
    address lacks a rater."""
    if key.get("rater") and key.get("corpus") and key.get("rubric"):
        return None
    return render("label_start.html", key=key, reveal=REVEAL, choices=choices() if not key.get("corpus") else [])


class Labelling:
    """The /label routes over the viewer's pages (their warehouse, templates and error pages)."""

    def __init__(self, pages) -> None:
        self.pages = pages
        self.claims = Claims()
        self.skipped: dict[str, set[str]] = {}
        self.answered: dict[str, list[tuple[str, str]]] = {}  # per session: (text, criterion), oldest first

    def _key(self, values, needs_corpus: bool = True) -> dict:
        key = {n: (values.get(n) or None) for n in ("corpus", "rubric", "judge", "rater", "reveal", "s")}
        if key["corpus"] and not key["rubric"] and needs_corpus is False:
            raise ValueError("this page needs a rubric beside the corpus (e.g. /label?corpus=c&rubric=r)")
        if needs_corpus and (not key["corpus"] or not key["rubric"]):
            raise ValueError("this page needs corpus and rubric in its address (e.g. /label?corpus=c&rubric=r)")
        if key["reveal"] not in (None, *REVEAL):
            raise ValueError(f"reveal is one of {', '.join(REVEAL)}")
        return key

    def _state(self, con, key: dict) -> dict:
        """The side's hashes, the criteria with their answers, the queue and the rater's answers so far."""
        from rubricflow.tasks.stats.estimate import resolve_side
        from rubricflow.warehouse import db

        side = resolve_side(con, key["corpus"], "A", (key["rubric"], None, key["judge"]))
        rows = db.fetch(con, "label_criteria.sql", rubric=side.rubric_hash)
        order = [c["id"] for c in json.loads(rows[0]["document"])["criteria"]] if rows else []
        rows.sort(key=lambda r: order.index(r["criterion_id"]) if r["criterion_id"] in order else len(order))
        answers: dict[str, dict] = {}
        for text_id, criterion, score in db.fetch_tuples(
            con, "label_answers.sql", corpus=key["corpus"], rubric=side.rubric_hash, rater=key["rater"]
        ):
            answers.setdefault(text_id, {})[criterion] = score
        queue = [r[0] for r in db.fetch_tuples(
            con, "label_queue.sql", corpus=key["corpus"], rubric=side.rubric_hash, judge_hash=side.judge_hash
        )]  # fmt: skip
        criteria = [{**r, "points": scale_points(r)} for r in rows]
        return {"side": side, "criteria": criteria, "answers": answers, "queue": queue}

    def show(self, request: Request) -> HTMLResponse | RedirectResponse:
        key = self._key(request.query_params, needs_corpus=False)
        start = page_or_form(self.pages.page, key, lambda: self.pages.store.fetch("label_choices.sql"))
        if start is not None:
            return start
        key["rater"] = check_rater(key["rater"])
        if not key["s"]:
            return redirect(self.pages.env.globals["url"]("/label", key, s=new_session()))
        if request.query_params.get("skip"):
            self.skipped.setdefault(key["s"], set()).add(request.query_params["skip"])
        state = self.pages.store.run(self._state, key)
        ids = [c["criterion_id"] for c in state["criteria"]]
        todo = next_text(state["queue"], state["answers"], ids, self.skipped.get(key["s"], set()))
        side = state["side"]
        back = request.query_params.get("text")  # undone: that text again, first
        todo = [back, *todo] if back is not None and back in state["queue"] else todo
        text_id = self.claims.take((key["corpus"], side.rubric_hash, key["rater"]), todo, key["s"])
        shown = progress(state["queue"], state["answers"], ids)
        if text_id is None:
            return self.pages.page("label.html", key=key, text=None, progress=shown, criteria=[])
        text = self.pages.store.fetch("view_text.sql", corpus=key["corpus"], text=text_id)[0]
        judge = {
            r["criterion_id"]: r["score"]
            for r in self.pages.store.fetch(
                "label_judge_answers.sql", corpus=key["corpus"], rubric=side.rubric_hash, judge_hash=side.judge_hash,
                text=text_id,
            )
        }  # fmt: skip
        answered = state["answers"].get(text_id, {})
        current = next((c for c in ids if c not in answered), None)
        return self.pages.page(
            "label.html", key=key, text=text, progress=shown, criteria=state["criteria"], answered=answered,
            current=current, judge=judge, reveal=key["reveal"] or "after", can_undo=bool(self.answered.get(key["s"])),
        )  # fmt: skip

    async def answer(self, request: Request) -> RedirectResponse:
        """Store one answer at once (a label), then show the same text's next criterion or the next text."""
        fields = await form_fields(request)
        key = self._key(fields)
        key["rater"] = check_rater(key["rater"] or "")
        if fields.get("undo"):
            return self.undo(key)
        state = self.pages.store.run(self._state, key)
        criterion = next((c for c in state["criteria"] if c["criterion_id"] == fields.get("criterion")), None)
        if criterion is None or fields.get("text") not in state["queue"]:
            raise ValueError("the answer names a criterion or a text this labelling queue does not have")
        value = next((p.value for p in criterion["points"] if p.key == fields.get("value")), None)
        if value is None:
            raise ValueError(f"{fields.get('value')!r} is not a point of {criterion['criterion_id']}'s scale")
        self.pages.store.write(
            _store_label, key["corpus"], fields["text"], criterion["criterion_id"], key["rater"], value
        )
        if key["s"]:
            self.answered.setdefault(key["s"], []).append((fields["text"], criterion["criterion_id"]))
        return redirect(
            self.pages.env.globals["url"]("/label", key, last=f"{fields['text']}/{criterion['criterion_id']}")
        )

    def undo(self, key: dict) -> RedirectResponse:
        """Take back this session's last answer (its label deleted) and show that text again."""
        done = self.answered.get(key["s"] or "", [])
        if not done:
            raise ValueError("nothing to undo: this session has stored no answer yet")
        text_id, criterion = done.pop()
        self.pages.store.write(_delete_label, key["corpus"], text_id, criterion, key["rater"])
        self.skipped.get(key["s"], set()).discard(text_id)
        return redirect(self.pages.env.globals["url"]("/label", key, text=text_id))


def _delete_label(con, corpus: str, text_id: str, criterion: str, rater: str) -> None:
    from rubricflow.warehouse import analytics, db

    with db.transaction(con):
        db.run_sql(con, "label_undo.sql", corpus=corpus, text=text_id, criterion=criterion, rater=rater)
        analytics.refresh(con)


def _store_label(con, corpus: str, text_id: str, criterion: str, rater: str, value: float) -> None:
    import polars as pl

    from rubricflow.warehouse import steps

    frame = pl.DataFrame({"text_id": [text_id], "criterion_id": [criterion], "rater": [rater], "score": [value]})
    steps.load_labels(con, corpus, frame, f"rubricflow view ({rater})")
