"""`rubricflow view`: a local, read-only web app over the warehouse. Every page is one or a few
`.sql` files (warehouse/sql/view_*.sql, and the A/B and calibration code the CLI uses), rendered by
Jinja2 templates with autoescaping: texts and rationales are hostile input, and nothing is fetched
from the network (no CDN, no script).

The warehouse is opened read-only while requests come in and closed after IDLE_CLOSE_S without one;
a writer waiting for the file (warehouse.db.writer_waiting) has priority: the connection is closed at
once and pages answer 503 until the writer is in, so a browser left open never fails a `score`.
The labelling page's answers are the one write: a writer opened at the first answer is kept for
those that follow and closed the same way (idle, or another process waiting, reader or writer).
"""

from __future__ import annotations

import functools
import re
import secrets
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, asynccontextmanager
from pathlib import Path
from urllib.parse import urlencode

import duckdb
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse
from starlette.routing import Route

from rubricflow.errors import InputError, RubricflowError
from rubricflow.rubrics.regex import BACKTRACKING_TIMEOUT_S, backtracking
from rubricflow.tasks.judging.verify import QUOTE_MARKS
from rubricflow.tasks.runtime.owner import LOOPBACK_HOSTS, loopback_only, refuse, same_secret
from rubricflow.warehouse import db

IDLE_CLOSE_S = 2.0
WRITER_POLL_S = 0.1  # how soon a waiting writer gets the file, even between two requests
PAGE_SIZE = 50
MAX_PAGE = 1_000_000  # 50M rows deep: far past any warehouse, short of an offset DuckDB refuses


def page_number(request: Request) -> int:
    """The `page` parameter: a whole number from 1 to MAX_PAGE, else a 400 saying so (a huge
    page number was a 500)."""
    raw = request.query_params.get("page") or "1"
    try:
        number = int(raw)
    except ValueError:
        raise ValueError(f"page {raw[:40]!r} is not a whole number") from None
    if not 1 <= number <= MAX_PAGE:
        raise ValueError(f"page {number} is out of range: 1 to {MAX_PAGE:,}")
    return number


def require(query: dict, *names: str) -> None:
    """A page of one judgment set or corpus needs its key in the address: a 400 naming what is
    missing, not a 500."""
    missing = [n for n in names if not query.get(n)]
    if missing:
        raise ValueError(f"this page needs {', '.join(missing)} in its address (open it from the runs page)")


TEMPLATES = Path(__file__).with_name("viewer_templates")


class Warehouse:
    """One read-only connection, shared by requests in turn and closed when idle."""

    def __init__(self, path: Path):
        self.path = path
        self.lock = threading.Lock()
        self.con: duckdb.DuckDBPyConnection | None = None
        self.writing: AbstractContextManager | None = None  # the writer behind self.con, while answers come in
        self.last = 0.0
        threading.Thread(target=self._close_when_idle, daemon=True).start()

    def fetch(self, name: str, **params) -> list[dict]:
        with self.lock:
            return db.fetch(self._connection(), name, **params)

    def run(self, fn, *args, **kw):
        """Call fn(con, ...) with the connection (the A/B and calibration code)."""
        with self.lock:
            return fn(self._connection(), *args, **kw)

    def write(self, fn, *args):
        """Call fn(con, ...) with a writing connection (the labelling page's answers). The reading
        connection gives way to one writer, kept for the answers and pages that follow (opening a
        writer applies the schema, and closing it checkpoints: most of a second an answer) and
        closed as the reading one is: when idle, or when another process's writer waits."""
        with self.lock:
            self.last = time.monotonic()
            if self.writing is None:
                self._close()
                writing = db.held_writer(self.path)
                self.con = writing.__enter__()
                self.writing = writing
            return fn(self.con, *args)

    def close(self) -> None:
        with self.lock:
            self._close()

    def _close(self) -> None:
        """Close the connection, reading or writing (the writer releases the file for other processes)."""
        if self.writing is not None:
            writing, self.writing, self.con = self.writing, None, None
            writing.__exit__(None, None, None)
        elif self.con is not None:
            self.con.close()
            self.con = None

    def _connection(self) -> duckdb.DuckDBPyConnection:
        self.last = time.monotonic()
        if self._writer_waits():
            raise WriterFirst(
                "another rubricflow command is writing to this warehouse; this page answers when it has begun"
            )
        if self.con is None:
            if not self.path.exists():
                raise RubricflowError(f"no warehouse at {self.path}")
            try:
                self.con = db.connect(self.path, read_only=True, wait_s=IDLE_CLOSE_S)
            except db.WarehouseLocked:
                raise WriterFirst(
                    "another rubricflow command is writing to this warehouse; reload in a moment"
                ) from None
        return self.con

    def _writer_waits(self) -> bool:
        """Whether a writer waits for the file; if so the connection is closed to let it in."""
        if not db.writer_waits(self.path):
            return False
        self._close()
        return True

    def _close_when_idle(self) -> None:
        while True:
            time.sleep(WRITER_POLL_S)
            with self.lock:
                if self._writer_waits():
                    continue
                if self.con is not None and time.monotonic() - self.last > IDLE_CLOSE_S:
                    self._close()


class WriterFirst(RubricflowError):
    """A writer waits for the warehouse: the page is a 503, to be reloaded."""


def highlight(text: str, quotes: list[str], patterns: list[dict]) -> Markup:
    """The text, escaped, with verified evidence quotes and pattern hits marked (overlaps merge)."""
    spans: list[tuple[int, int, str]] = []
    for quote in {q for q in quotes if q and q.strip()}:  # found as verify finds it: marks, space, case aside
        words = quote.strip().strip(QUOTE_MARKS).split()
        if words:
            found = re.compile(r"\s+".join(map(re.escape, words)), re.IGNORECASE)
            spans += [(m.start(), m.end(), "evidence") for m in found.finditer(text)]
    for p in patterns:  # RE2 syntax, read the way the warehouse's second engine reads it
        compiled = backtracking(p["regex"])
        try:
            spans += (
                [
                    (m.start(), m.end(), "pattern " + p["pattern_id"])
                    for m in compiled.finditer(text, timeout=BACKTRACKING_TIMEOUT_S)
                    if m.end() > m.start()
                ]
                if compiled
                else []
            )
        except TimeoutError:
            continue
    out, at = [], 0
    for start, end, kind in sorted(spans):
        if start < at:
            continue  # overlaps the previous mark
        out.append(escape(text[at:start]))
        cls, _, pid = kind.partition(" ")
        out.append(
            Markup('<mark class="{}" title="{}">{}</mark>').format(
                cls, pid or "verified evidence quote", text[start:end]
            )
        )
        at = end
    out.append(escape(text[at:]))
    return Markup("").join(out)


def read_text(fetch: Callable[..., list[dict]], corpus: str, text_id: str) -> dict | None:
    """What the text page shows, read with `fetch(sql_name, **params)`: the text, its current
    judgments with their calls, its scores and the patterns that hit it; None for an unknown text."""
    found = fetch("view_text.sql", corpus=corpus, text=text_id)
    if not found:
        return None
    key = {"corpus": corpus, "text": text_id}
    return {
        "text": found[0],
        "judgments": fetch("view_text_judgments.sql", **key, version=found[0]["version"]),
        "patterns": fetch("view_text_patterns.sql", **key),
        "scores": fetch("view_text_scores.sql", **key),
    }


def figure(value, digits: int = 3) -> str:
    """A figure as the CLI's tables show it (`tables.show`): rounded to `digits`, an interval as
    [low, high], an undefined one (NaN) as n/a; nothing for none."""
    from rubricflow.tasks.presentation.tables import show

    return show(value, f".{digits}f")


def url(path: str, *parts: dict, root: str = "", **query) -> str:
    """A link with its query string; `parts` are dicts of parameters (a page's key and filters);
    `root` the folder this launch's pages live under (owner_only)."""
    merged = {k: v for part in (*parts, query) for k, v in part.items() if v is not None}
    return root + path + ("?" + urlencode(merged) if merged else "")


def owner_only(app, token: str, cookie: str, hosts: frozenset[str] = LOOPBACK_HOSTS, root: str = ""):
    """The viewer for the holder of `token`, a secret made for this launch only (#41: an address
    left in a browser's history or a terminal dies with the viewer): given once as `?token=` (answered
    by a redirect into `root`, setting a session cookie whose Path is `root`, a random folder of this
    launch, so the browser never sends it to the other ports of 127.0.0.1), or as `Authorization:
    Bearer`. The cookie counts only under `root`. Anything else is a 401 that says how to get in."""
    session = secrets.token_urlsafe(24)

    async def guarded(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        path = scope["path"]
        inside = bool(root) and (path == root or path.startswith(root + "/"))
        if inside:
            scope = {**scope, "path": path[len(root) :] or "/"}
        request = Request(scope)
        given = request.query_params.get("token")
        if given is not None and same_secret(given, token):
            query = urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "token"])
            response = RedirectResponse(root + scope["path"] + ("?" + query if query else ""), status_code=303)
            response.set_cookie(cookie, session, path=root or "/", httponly=True, samesite="strict")
            return await response(scope, receive, send)
        bearer = request.headers.get("authorization", "")
        by_cookie = (inside or not root) and same_secret(request.cookies.get(cookie), session)
        if by_cookie or same_secret(bearer.removeprefix("Bearer "), token):
            return await app(scope, receive, send)
        await refuse(scope, send, 401, "this viewer serves its owner only: open the address `rubricflow view` printed")

    return loopback_only(guarded, hosts)


def launch(warehouse_path: Path, hosts: frozenset[str], cookie: str) -> tuple[Callable, str]:
    """The guarded viewer app of one launch and its login token: both the token and the folder its
    pages live under are new each launch (the folder scopes the session cookie)."""
    token, root = secrets.token_urlsafe(32), "/v" + secrets.token_hex(8)
    return owner_only(create_app(warehouse_path, root), token, cookie, hosts, root), token


def ab_pictures(result) -> dict[str, Markup]:
    """The A/B page's pictures: the paired deltas' distribution (B's text score less A's) and a forest
    plot of each criterion's mean delta with its bootstrap interval (a stored comparison from before
    the histogram was kept has no distribution: it is left out)."""
    from rubricflow.tasks.presentation import plots

    rows = [plots.Row(r["criterion_id"], r["mean_delta"], *(r.get("mean_delta_ci") or (None, None)))
            for r in result.criteria if r.get("mean_delta") is not None]  # fmt: skip
    overall = result.summary.get("mean_delta")
    if overall is not None:
        rows.append(
            plots.Row("every criterion (text score)", overall, *(result.summary.get("mean_delta_ci") or (None, None)))
        )
    bins = [(b["bin_start"], b["bin_end"], b["texts"]) for b in result.deltas]
    return {
        "deltas": plots.histogram(bins, "deltas", "B's text score less A's (unit scale): texts per bin"),
        "forest": plots.forest(rows, "forest", "B less A, mean per criterion (unit scale), with its interval"),
    }


def estimate_pictures(rows: list[dict]) -> dict[str, Markup]:
    """The estimates page's forest plots: with two sides, A's error less B's per criterion and figure
    (left of 0: A agrees better with the labels); and each side's pass rates (labels corrected) with
    their intervals, which share one scale."""
    from rubricflow.tasks.presentation import plots

    gaps = [plots.Row(f"{r['criterion_id']} {r['figure']}", r["labels_only"], r["labels_low"], r["labels_high"])
            for r in rows if r["side"] == "A-B" and r["labels_only"] is not None]  # fmt: skip
    rates = [plots.Row(f"{r['side']} {r['criterion_id']}", r["powered"], r["powered_low"], r["powered_high"])
             for r in rows if r["figure"] == "pass_rate" and r["powered"] is not None]  # fmt: skip
    return {
        "gaps": plots.forest(gaps, "forest", "A's error less B's against the labels (left of 0: A agrees better)"),
        "rates": plots.forest(rates, "forest rates", "pass rate corrected by the labels, with its interval", None),
    }


def panel_rubric(con: duckdb.DuckDBPyConnection, corpus: str, ref: str) -> str:
    """The one rubric version (its hash) that `ref` names among those scored on `corpus`, read as the
    A/B page and `rubricflow panel` read a rubric: a library name or file, id, id@version or a hash
    prefix of 8 or more characters. None or several is an InputError that says so (the page's 400)."""
    from rubricflow.tasks.stats.compare import CompareError, judgment_sets

    try:
        sets = judgment_sets(con, corpus, ref, None, True, "panel")
    except CompareError:
        raise InputError(
            f"no judgments of rubric {ref!r} on corpus {corpus!r}: name a rubric scored on it "
            "(id, id@version or a rubric hash prefix of 8 or more characters; the runs page lists them)"
        ) from None
    hashes = sorted({rubric_hash for rubric_hash, _ in sets})
    if len(hashes) > 1:
        raise InputError(
            f"{ref!r} names {len(hashes)} rubric versions on corpus {corpus!r} "
            f"({', '.join(h[:12] for h in hashes)}): name one (id@version or a rubric hash prefix)"
        )
    return hashes[0]


class Pages:
    """The viewer's pages over one warehouse: each method answers one route with one or a few
    `.sql` files rendered through an autoescaping template."""

    def __init__(self, warehouse_path: Path, root: str = ""):
        self.store = Warehouse(Path(warehouse_path))
        self.env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]))
        self.env.filters["num"] = figure
        self.env.globals["url"] = functools.partial(url, root=root)
        self.env.globals["root"] = root

    def page(self, name: str, **context) -> HTMLResponse:
        return HTMLResponse(self.env.get_template(name).render(warehouse=str(self.store.path), **context))

    def args(self, request: Request, *names: str) -> dict:
        return {n: (request.query_params.get(n) or None) for n in names}

    def runs(self, request: Request) -> HTMLResponse:
        number = page_number(request)
        rows = self.store.fetch("view_runs.sql", limit=PAGE_SIZE, offset=(number - 1) * PAGE_SIZE)
        return self.page("runs.html", runs=rows, number=number, more=len(rows) == PAGE_SIZE)

    def judgment_set(self, request: Request) -> HTMLResponse:
        key = self.args(request, "corpus", "rubric", "judge")
        require(key, "corpus", "rubric", "judge")
        return self.page(
            "set.html",
            key=key,
            bins=self.store.fetch("view_set_summary.sql", **key),
            criteria=self.store.fetch("view_set_criteria.sql", **key),
            rates=self.store.fetch("view_set_rates.sql", **key),
        )

    def texts(self, request: Request) -> HTMLResponse:
        key = self.args(request, "corpus", "rubric", "judge")
        require(key, "corpus", "rubric", "judge")
        filters = self.args(request, "search", "label", "criterion", "disqualifier", "pattern")
        bounds = {k: float(v) if v else None for k, v in self.args(request, "min_unit", "max_unit").items()}
        number = page_number(request)
        rows = self.store.fetch(
            "view_texts.sql", **key, **filters, **bounds, limit=PAGE_SIZE, offset=(number - 1) * PAGE_SIZE
        )
        return self.page(
            "texts.html",
            key=key,
            filters={**filters, **bounds},
            texts=rows,
            number=number,
            matching=rows[0]["matching"] if rows else 0,
            more=len(rows) == PAGE_SIZE,
        )

    def text(self, request: Request) -> HTMLResponse:
        corpus, text_id = request.query_params.get("corpus") or "", request.query_params.get("id") or ""
        require({"corpus": corpus, "id": text_id}, "corpus", "id")
        found = read_text(self.store.fetch, corpus, text_id)
        if found is None:
            return self.page("missing.html", what=f"text {text_id!r} of corpus {corpus!r}")
        t, judgments = found["text"], found["judgments"]
        sides = [h for h in (request.query_params.get("a"), request.query_params.get("b")) if h]
        quotes = [q for j in judgments if j["evidence_verified"] for q in (j["evidence"] or [])]
        marked = highlight(t["text"], quotes, found["patterns"])
        groups: dict[tuple, list[dict]] = {}
        for j in judgments:
            groups.setdefault((j["rubric"], j["rubric_hash"], j["judge_hash"], j["model"]), []).append(j)
        if sides:  # the A/B click-through: the two sides first, side by side
            groups = dict(
                sorted(
                    groups.items(),
                    key=lambda g: (g[0][1] not in sides, sides.index(g[0][1]) if g[0][1] in sides else 0),
                )
            )
        return self.page("text.html", t=t, marked=marked, groups=groups, sides=sides, scores=found["scores"])

    def ab(self, request: Request) -> HTMLResponse:
        """An A/B of two sides; without them, the stored comparisons to open and the form."""
        corpus, a, b, judge_a, judge_b = (request.query_params.get(k) for k in ("corpus", "a", "b", "ja", "jb"))
        if not (corpus and a and b):
            return self.page(
                "form.html",
                title="A/B: two rubric versions (or judges) on one corpus",
                action="/compare",
                fields=[
                    ("corpus", "a corpus id"),
                    ("a", "id@version or a rubric hash prefix"),
                    ("b", "id@version or a rubric hash prefix"),
                ],
                comparisons=self.store.fetch("view_comparisons.sql", limit=PAGE_SIZE),
            )
        result = self.store.run(lambda con: self._comparison(con, corpus, (a, judge_a), (b, judge_b)))
        return self.page("compare.html", c=result, corpus=corpus, hash_a=result.a[0][0], hash_b=result.b[0][0],
                         pictures=ab_pictures(result))  # fmt: skip

    @staticmethod
    def _comparison(con, corpus: str, a: tuple[str, str | None], b: tuple[str, str | None]):
        """The stored A/B of the two sides while it is current (`compare` keeps it), else computed now;
        either way with `compare`'s default options, so that the page shows the interval `rubricflow
        compare` prints for the same sides. Each side is a rubric reference and, optionally, a judge
        hash prefix."""
        from rubricflow.tasks.stats.compare import compare, compare_options, judgment_sets, stored_comparison

        sides = (
            judgment_sets(con, corpus, a[0], None, True, "A", a[1]),
            judgment_sets(con, corpus, b[0], None, True, "B", b[1]),
        )
        options = compare_options()
        return stored_comparison(con, corpus, *sides, options) or compare(con, corpus, *sides, **options)

    def calibration(self, request: Request) -> HTMLResponse:
        from rubricflow.tasks.stats.calibration import calibration as agreement

        q = self.args(request, "corpus", "judge", "rubric")
        if not q["corpus"]:
            return self.page(
                "form.html",
                title="Calibration: a judge against human labels",
                action="/calibration",
                fields=[
                    ("corpus", "a corpus id"),
                    ("rubric", "this warehouse's judge: the rubric it applied"),
                    ("judge", "or a label rater (default: the corpus's own judgments)"),
                ],
            )
        result = self.store.run(agreement, q["corpus"], q["judge"] or None, None, q["rubric"])
        return self.page("calibration.html", cal=result)

    def estimates(self, request: Request) -> HTMLResponse:
        """The newest corrected figures of a corpus (`rubricflow estimate`, the `estimates` table)."""
        q = self.args(request, "corpus")
        if not q["corpus"]:
            return self.page(
                "form.html", title="Estimates: judge figures corrected by human labels", action="/estimate",
                fields=[("corpus", "a corpus id")],
            )  # fmt: skip
        rows = self.store.fetch("view_estimates.sql", **q)
        return self.page("estimates.html", corpus=q["corpus"], rows=rows, pictures=estimate_pictures(rows))

    def cascades(self, request: Request) -> HTMLResponse:
        """Each judge cascade of a corpus: the split by deciding level and the cost saved."""
        q = self.args(request, "corpus")
        if not q["corpus"]:
            return self.page("form.html", title="Judge cascades", action="/cascade", fields=[("corpus", "a corpus id")])
        found: dict[str, dict] = {}
        for r in self.store.fetch("view_cascades.sql", **q):
            c = found.setdefault(r["cascade_id"], {**r, "split": []})
            c["split"].append({k: r[k] for k in ("level", "texts", "scored")})
        for c in found.values():
            only, strong = c["strong_only_calls"], c["strong_calls"]
            c["saved_calls"] = None if only is None or strong is None else float(only - strong)
            usd = (c["strong_only_usd"], c["cheap_usd"], c["strong_usd"])
            c["saved_usd"] = None if None in usd else float(usd[0] - usd[1] - usd[2])
        return self.page("cascades.html", corpus=q["corpus"], cascades=list(found.values()))

    def pairwise(self, request: Request) -> HTMLResponse:
        from rubricflow.tasks.presentation.report import pairwise_html

        q = self.args(request, "corpus", "rubric")
        require(q, "corpus", "rubric")
        return HTMLResponse(self.store.run(pairwise_html, q["corpus"], q["rubric"], f"Pairwise on {q['corpus']}"))

    def panel(self, request: Request) -> HTMLResponse:
        """Where a panel's judges disagree most; the rubric named as every page names one (id,
        id@version or a hash prefix), resolved to its one version first."""
        q = self.args(request, "corpus", "rubric")
        require(q, "corpus", "rubric")
        rubric_hash = self.store.run(panel_rubric, q["corpus"], q["rubric"])
        return self.page(
            "panel.html",
            corpus=q["corpus"],
            ref=q["rubric"],
            rubric=rubric_hash,
            rows=self.store.fetch("view_panel.sql", corpus=q["corpus"], rubric=rubric_hash, limit=200),
        )

    async def busy(self, request: Request, exc: Exception) -> HTMLResponse:
        """A writer goes first: reload in a moment."""
        page = self.env.get_template("missing.html").render(warehouse=str(self.store.path), what=str(exc))
        return HTMLResponse(page, status_code=503, headers={"Retry-After": "2"})

    async def refused(self, request: Request, exc: Exception) -> HTMLResponse:
        """A request the warehouse cannot answer (no such corpus, no labels, a bad number): said on the page."""
        return HTMLResponse(
            self.env.get_template("missing.html").render(warehouse=str(self.store.path), what=str(exc)), status_code=400
        )

    async def failed(self, request: Request, exc: Exception) -> HTMLResponse:
        """A bug: its type and message on the page, its traceback in the server's log."""
        return HTMLResponse(
            self.env.get_template("missing.html").render(
                warehouse=str(self.store.path), what=f"{type(exc).__name__}: {exc}"
            ),
            status_code=500,
        )


def create_app(warehouse_path: Path, root: str = "") -> Starlette:
    from rubricflow.tasks.presentation.labelling import Labelling

    pages = Pages(warehouse_path, root)
    labelling = Labelling(pages)

    @asynccontextmanager
    async def lifespan(app):
        yield
        pages.store.close()  # a writer left open by the labelling page checkpoints and lets go of the file

    return Starlette(
        lifespan=lifespan,
        routes=[
            Route("/", pages.runs),
            Route("/set", pages.judgment_set),
            Route("/texts", pages.texts),
            Route("/text", pages.text),
            Route("/compare", pages.ab),
            Route("/calibration", pages.calibration),
            Route("/estimate", pages.estimates),
            Route("/cascade", pages.cascades),
            Route("/pairwise", pages.pairwise),
            Route("/panel", pages.panel),
            Route("/label", labelling.show),
            Route("/label", labelling.answer, methods=["POST"]),
        ],
        exception_handlers={
            WriterFirst: pages.busy,
            RubricflowError: pages.refused,
            ValueError: pages.refused,
            Exception: pages.failed,
        },
    )
