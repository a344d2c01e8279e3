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


def scale_points(row: dict) -> list[Point]:
    """A criterion's answers, from its native range and step and its anchors' labels (up to 10: digit keys)."""
    low, high, step = row["scale_min"], row["scale_max"], row["unit_step"]
    if low is None or high is None or not step:
        return []
    count = int(round(1 / step)) + 1
    if count > 10:
        return []
    values = [low + k * step * (high - low) for k in range(count)]
    scale: dict = next(
        (c["scale"] for c in json.loads(row["document"])["criteria"] if c["id"] == row["criterion_id"]), {}
    )
    anchors = {float(a["value"]): a for a in scale.get("anchors", [])}
    names = scale.get("labels") or []
    points = []
    for k, v in enumerate(values):
        anchor = anchors.get(float(v), {})
        label = anchor.get("label") or (names[k] if len(names) == count else "")
        points.append(Point(str(k), float(v), label, anchor.get("description", "")))
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


def page_or_form(render, key: dict) -> HTMLResponse | None:
    """The start form (rater name, reveal) while the address lacks a rater."""
    if key.get("rater"):
        return None
    return render("label_start.html", key=key, reveal=REVEAL)


class Labelling:
    """The /label routes over the viewer's pages (their warehouse, templates and error pages)."""

    def __init__(self, pages) -> None:
        self.pages = pages
        self.claims = Claims()
        self.skipped: dict[str, set[str]] = {}

    def _key(self, values) -> dict:
        key = {n: (values.get(n) or None) for n in ("corpus", "rubric", "judge", "rater", "reveal", "s")}
        if not key["corpus"] or not key["rubric"]:
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
        key = self._key(request.query_params)
        start = page_or_form(self.pages.page, key)
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
            current=current, judge=judge, reveal=key["reveal"] or "after",
        )  # fmt: skip

    async def answer(self, request: Request) -> RedirectResponse:
        """Store one answer at once (a label), then show the same text's next criterion or the next text."""
        fields = await form_fields(request)
        key = self._key(fields)
        key["rater"] = check_rater(key["rater"] or "")
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
        return redirect(
            self.pages.env.globals["url"]("/label", key, last=f"{fields['text']}/{criterion['criterion_id']}")
        )


def _store_label(con, corpus: str, text_id: str, criterion: str, rater: str, value: float) -> None:
    import polars as pl

    from rubricflow.warehouse import steps

    frame = pl.DataFrame({"text_id": [text_id], "criterion_id": [criterion], "rater": [rater], "score": [value]})
    steps.load_labels(con, corpus, frame, f"rubricflow view ({rater})")
