"""`rubricflow view` over a warehouse built by real runs (two versions of a rubric, a hostile text):
every page answers, every value is escaped, filters are applied in SQL, and in a real browser a
click from the A/B page's movers reaches the text with both sides' rationales."""

import html
import http.client
import http.server
import json
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import duckdb
import pytest

from rubricflow.flows.ingest import ingest_flow
from rubricflow.flows.score import score_corpus
from rubricflow.rubrics.algebra import evolve
from rubricflow.rubrics.formats import dump_yaml
from rubricflow.rubrics.library import Library
from rubricflow.tasks.presentation.viewer import Pages
from tests.browser import Browser, chromium_path
from tests.conftest import EXE, rows

HOSTILE = (
    'Certainly! <script>alert("x")</script> Nestled in the heart of town </td></table><b>bold</b>. I hope this helps.'
)


@pytest.fixture(scope="module")
def served(tmp_path_factory, request):
    from tests.conftest import ThreadServer

    tmp = tmp_path_factory.mktemp("viewer")
    judge = ThreadServer()
    request.addfinalizer(judge.stop)
    warehouse = str(tmp / "w.duckdb")
    texts = [{"id": "hostile", "text": HOSTILE}] + [
        {
            "id": f"t{i:02d}",
            "text": "Moreover, this vibrant town plays a vital role."
            if i % 3 == 0
            else f"The council met on day {i} and approved the road budget by seven votes to two.",
        }
        for i in range(30)
    ]
    (tmp / "c.jsonl").write_text("".join(json.dumps(t) + "\n" for t in texts))
    ingest_flow(str(tmp / "c.jsonl"), warehouse, "c")
    per_criterion = {"base_url": judge.base_url, "strategy": "per_criterion"}
    v1 = score_corpus("c", "llm-slop", warehouse, per_criterion)
    v2_rubric = evolve(
        Library().bundle("llm-slop").rubric,
        [
            {
                "op": "rewrite_criterion",
                "id": "puffery",
                "changes": {"description": "Hype words; <i>opinions</i> dressed as facts.", "patterns": []},
            }
        ],
    )
    (tmp / "v2.yaml").write_text(dump_yaml(v2_rubric))
    v2 = score_corpus("c", str(tmp / "v2.yaml"), warehouse, per_criterion)
    score_corpus("c", str(tmp / "v2.yaml"), warehouse, {**per_criterion, "model": "second-judge"})  # a panel of two
    proc = subprocess.Popen([EXE, "view", "-w", warehouse, "--port", "0"], stdout=subprocess.PIPE, text=True)
    request.addfinalizer(lambda: (proc.terminate(), proc.wait(10)))
    return {**address(proc.stdout.readline()), "v1": v1, "v2": v2, "warehouse": warehouse, "tmp": tmp}


def address(line: str) -> dict:
    """The viewer's printed address: its base URL and the owner's token."""
    found = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=(\S+)", line)
    return {"base": found.group(1), "token": found.group(2)}


def get(served, path: str, headers: dict | None = None) -> tuple[int, str]:
    request = urllib.request.Request(
        served["base"] + path, headers={"Authorization": f"Bearer {served['token']}"} if headers is None else headers
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_every_page_answers_and_escapes_what_it_shows(served):
    v1, v2 = served["v1"], served["v2"]
    key = f"corpus=c&rubric={v2['rubric_hash']}&judge={v2['judge_hash']}"
    pages = {
        "/": [v1["run_id"], v2["run_id"], "<th>prompt sent</th>", "<th>cache saved USD</th>", "rubric-first"],
        f"/set?{key}": ["puffery", "Score distribution"],
        f"/texts?{key}": ["31 texts match", "hostile"],
        "/text?corpus=c&id=hostile": ["llm-slop@1.0.0", "llm-slop@1.1.0"],
        "/compare?corpus=c&a=llm-slop@1.0.0&b=llm-slop@1.1.0": [
            'class="mover"',
            "puffery (changed)",
            '<svg class="deltas"',
            '<svg class="forest"',
        ],  # fmt: skip
        "/compare": ["<form"],
        "/calibration": ["<form"],
        f"/panel?corpus=c&rubric={v2['rubric_hash']}": ["where the judges of rubric"],
    }
    for path, expected in pages.items():
        status, page = get(served, path)
        assert status == 200, (path, page[-500:])
        for fragment in expected:
            assert fragment in page, (path, fragment)
        assert "<script" not in page and "<b>bold</b>" not in page, path  # the hostile text never becomes markup
    status, page = get(served, "/text?corpus=c&id=hostile")
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page
    assert re.search(r'<mark class="evidence"[^>]*>Certainly!</mark>', page)  # a verified quote, highlighted
    assert '<mark class="pattern"' in page  # pattern hits too
    panel = rows(served["warehouse"], "SELECT count(*) FROM panel_scores WHERE rubric_hash = ?", [v2["rubric_hash"]])[
        0
    ][0]
    status, page = get(served, f"/panel?corpus=c&rubric={v2['rubric_hash']}")
    assert panel > 0 and page.count('<td class="n">2</td>') == min(panel, 200)  # each row: two judges
    status, page = get(served, "/text?corpus=c&id=nope")
    assert status == 200 and "text &#39;nope&#39; of corpus &#39;c&#39;" in page
    status, page = get(served, "/calibration?corpus=c&rubric=llm-slop")
    assert status == 400 and "no labels by any human rater" in page


def test_the_text_page_shows_the_texts_score_under_every_judgment_set(served):
    expected = rows(
        served["warehouse"],
        """SELECT rubric_id || '@' || version, score, scored_criteria, planned_criteria FROM text_scores
           WHERE corpus_id = 'c' AND text_id = 't03' ORDER BY 1, judge_hash""",
    )
    status, page = get(served, "/text?corpus=c&id=t03")
    shown = re.findall(
        r'<tr id="score-\d+"><td>(\S+) .*?<td class="n">([^<]*)</td>.*?(\d+) of (\d+)</td></tr>', page, re.S
    )
    assert status == 200 and len(expected) == 3  # v1, v2 and v2 by a second judge
    assert shown == [(r, "" if score is None else f"{score:.3f}", str(s), str(p)) for r, score, s, p in expected]


def raw(served, path: str, headers: dict) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection(served["base"].removeprefix("http://"), timeout=60)
    connection.request("GET", path, headers=headers)
    return connection.getresponse()


def test_the_viewer_serves_its_owner_only(served):
    """#21 N4: no token, a wrong one, a forged session cookie or another Host (DNS rebinding) get
    nothing; no response carries CORS; the token given once becomes a session cookie."""
    evil = {"Origin": "http://evil.example"}
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Cookie": f"rubricflow_view_{served['base'][-5:]}=x"}):
        status, page = get(served, "/", {**evil, **headers})
        assert status == 401 and "serves its owner only" in page and "council" not in page
    rebound = raw(served, "/", {**evil, "Host": "evil.example:80", "Authorization": f"Bearer {served['token']}"})
    assert rebound.status == 403 and b"answers only to" in rebound.read()
    assert rebound.getheader("access-control-allow-origin") is None
    entry = raw(served, f"/texts?corpus=c&token={served['token']}&page=1", evil)
    root = re.fullmatch(r"(/v[0-9a-f]{16})/texts\?corpus=c&page=1", entry.getheader("location")).group(1)
    cookie = entry.getheader("set-cookie")
    assert "httponly" in cookie.lower() and "samesite=strict" in cookie.lower() and served["token"] not in cookie
    assert f"path={root}" in cookie.lower()  # G22: sent to this launch's folder only, not to every port's /
    page = raw(served, root + "/", {**evil, "Cookie": cookie.split(";")[0]})
    assert page.status == 200 and page.getheader("access-control-allow-origin") is None
    assert f'href="{root}/compare"' in page.read().decode()  # its links stay inside the folder
    assert raw(served, "/", {**evil, "Cookie": cookie.split(";")[0]}).status == 401  # the cookie counts there only


def test_each_launch_has_its_own_token_and_every_interface_answers_to_this_machines_names(served):
    """#41 G22: the printed token is made for one launch (another viewer's is refused); G19: bound to
    0.0.0.0 the viewer prints this machine's name, not 0.0.0.0, and answers to it, to its address and
    to each --allowed-host, still refusing other Host names."""
    proc = subprocess.Popen(
        [EXE, "view", "-w", served["warehouse"], "--port", "0", "--host", "0.0.0.0", "--allowed-host", "Alias.example"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        shown, port, token = re.search(r"http://(\S+):(\d+)/\?token=(\S+)", proc.stdout.readline()).groups()
        assert "plain HTTP" in proc.stdout.readline()
        assert shown == socket.getfqdn() and token != served["token"]
        local = {"base": f"http://127.0.0.1:{port}", "token": token}
        names = {socket.gethostname(), shown, socket.gethostbyname(socket.gethostname()), "alias.example"}
        for name in names:
            assert raw(local, "/", {"Host": f"{name}:{port}", "Authorization": f"Bearer {token}"}).status == 200, name
        assert raw(local, "/", {"Host": f"{shown}:{port}", "Authorization": f"Bearer {served['token']}"}).status == 401
        assert raw(local, "/", {"Host": "evil.example", "Authorization": f"Bearer {token}"}).status == 403
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_browser_polling_the_viewer_never_keeps_a_writer_out(served, monkeypatch):
    """#21 N10: pages asked for every 0.2 s kept the read-only connection open, and `score` failed
    "locked". A waiting writer now gets the file within a moment; meanwhile pages say 503."""
    from rubricflow.warehouse import db

    monkeypatch.setenv("RUBRICFLOW_LOCK_WAIT_S", "8")
    statuses: list[int] = []
    stop = threading.Event()

    def poll():
        while not stop.is_set():
            statuses.append(get(served, "/")[0])
            time.sleep(0.2)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        time.sleep(1)
        started = time.monotonic()
        with db.writer(served["warehouse"]) as con:
            waited = time.monotonic() - started
            con.execute("SELECT count(*) FROM runs").fetchone()
            time.sleep(3)  # longer than a page waits for the file (2 s): the pages meanwhile say 503
    finally:
        stop.set()
        poller.join()
    assert (
        waited < 6 and 503 in statuses
    )  # < the 8 s a writer waits for the file before it gives up and statuses[0] == 200, (waited, statuses)
    assert get(served, "/")[0] == 200 and not db.writer_waiting(Path(served["warehouse"])).exists()


def test_a_page_without_its_key_or_with_a_page_number_out_of_range_is_a_400_that_says_why(served):
    """N16: pages without parameters and a huge page number answered 500."""
    for path, says in [
        ("/set", "needs corpus, rubric, judge"),
        ("/texts?corpus=c", "needs rubric, judge"),
        ("/text?corpus=c", "needs id"),
        ("/pairwise", "needs corpus, rubric"),
        ("/panel?rubric=x", "needs corpus"),
        ("/?page=99999999999999999999", "out of range"),
        ("/?page=0", "out of range"),
        ("/?page=two", "not a whole number"),
    ]:
        status, body = get(served, path)
        assert (status, says in body) == (400, True), (path, status, body[-300:])


def test_texts_are_filtered_and_paged_in_sql(served):
    v2 = served["v2"]
    key = f"corpus=c&rubric={v2['rubric_hash']}&judge={v2['judge_hash']}"
    low = rows(
        served["warehouse"],
        "SELECT list(text_id ORDER BY text_id) FROM criterion_scores WHERE rubric_hash = ? "
        "AND judge_hash = ? AND criterion_id = 'scaffolding' AND unit_score <= 0.5",
        [v2["rubric_hash"], v2["judge_hash"]],
    )[0][0]
    status, page = get(served, f"/texts?{key}&criterion=scaffolding&max_unit=0.5")
    assert status == 200 and f"{len(low)} texts match" in page
    assert re.findall(r'class="text-link" href="[^"]*">([^<]+)</a>', page) == low
    status, page = get(served, f"/texts?{key}&search=council")
    assert "20 texts match" in page and "hostile" not in page


@pytest.mark.skipif(
    chromium_path() is None, reason="chromium not installed (.ci/run installs it where apt is available)"
)
def test_the_ab_page_lists_the_stored_comparisons_and_opens_them(served):
    """The A/B page does not start empty when `compare` stored comparisons: it lists them, and each
    opens with its own sides (the second judge of v2 is not mixed in)."""
    from rubricflow.tasks.stats.compare import compared

    v1, v2 = served["v1"], served["v2"]
    sides = [(v1["rubric_hash"], v1["judge_hash"])], [(v2["rubric_hash"], v2["judge_hash"])]
    stored = compared(served["warehouse"], "c", *sides)  # what `rubricflow compare` keeps
    status, page = get(served, "/compare")
    assert status == 200 and "Stored comparisons" in page and "none stored yet" not in page
    [link] = re.findall(r'<a class="stored-ab" href="([^"]+)"', page)
    assert "llm-slop@1.0.0" in page and "llm-slop@1.1.0" in page and f"jb={v2['judge_hash']}" in html.unescape(link)
    status, opened = get(served, html.unescape(link))
    assert status == 200 and 'class="mover"' in opened
    assert f"A {stored.rubric_a} vs B {stored.rubric_b}" in opened


def test_a_click_from_the_ab_movers_reaches_both_rationales(served):
    with Browser(
        served["base"] + f"/compare?corpus=c&a=llm-slop@1.0.0&b=llm-slop@1.1.0&token={served['token']}"
    ) as browser:
        assert "token" not in browser.evaluate("location.search")  # the redirect took it out of the address
        mover = browser.evaluate("document.querySelector('a.mover').textContent")
        browser.click("a.mover")
        assert re.fullmatch(r"/v[0-9a-f]{16}/text", browser.evaluate("location.pathname"))
        assert browser.evaluate("document.querySelector('h2').textContent").startswith(mover)
        sides = browser.evaluate("[...document.querySelectorAll('.side')].map(s => s.querySelector('h4').textContent)")
        assert [s[:2] for s in sides] == ["A:", "B:"] and "llm-slop@1.0.0" in sides[0] and "llm-slop@1.1.0" in sides[1]
        rationales = browser.evaluate(
            "[...document.querySelectorAll('.side')].map(s => "
            "[...s.querySelectorAll('td.rationale')].map(td => td.textContent))"
        )
        assert all(len(side) == 3 and all(r.strip() for r in side) for side in rationales)
        browser.screenshot(served["tmp"] / "mover.png")
        with CookieCatcher() as other_port:  # G22: another server on 127.0.0.1 gets no viewer cookie
            browser.open(other_port.url)
        assert other_port.cookies and not any("rubricflow_view" in c for c in other_port.cookies)
    assert (served["tmp"] / "mover.png").stat().st_size > 10_000


class CookieCatcher(http.server.ThreadingHTTPServer):
    """A server on another port of 127.0.0.1 keeping the Cookie header of each request it gets."""

    def __init__(self):
        catcher = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                catcher.cookies.append(self.headers.get("Cookie") or "")
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.cookies: list[str] = []
        super().__init__(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}/"

    def __enter__(self):
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()


def test_the_demo_warehouse_serves_every_page(tmp_path):
    warehouse = tmp_path / "demo" / "demo.duckdb"
    done = subprocess.run(
        [EXE, "demo", "-w", str(warehouse), "--texts", "8"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert f"browse it: rubricflow view -w {warehouse}" in done.stdout
    proc = subprocess.Popen([EXE, "view", "-w", str(warehouse), "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        served = address(proc.stdout.readline())
        [(rubric, judge)] = rows(
            warehouse,
            "SELECT rubric_hash, judge_hash FROM runs r JOIN rubrics USING (rubric_hash) WHERE rubric_id = 'llm-slop'",
        )
        text_id = rows(warehouse, "SELECT min(text_id) FROM texts")[0][0]
        key = f"corpus=demo&rubric={rubric}&judge={judge}"
        for path in (
            "/",
            f"/set?{key}",
            f"/texts?{key}",
            f"/texts?{key}&criterion=puffery&max_unit=0.5",
            f"/text?corpus=demo&id={text_id}",
            "/compare?corpus=demo&a=llm-slop&b=writing-quality",
            "/compare",
            "/calibration",
            f"/panel?corpus=demo&rubric={rubric}",
        ):
            status, page = get(served, path)
            assert status == 200, (path, page[-300:])
        status, page = get(served, "/calibration?corpus=demo&rubric=llm-slop")  # the demo has no human labels
        assert status == 400 and "no labels by any human rater on corpus &#39;demo&#39;" in page
    finally:
        proc.terminate()
        proc.wait(10)


def cell(page: str, heading: str) -> str:
    """The value beside a `<th>heading</th>` in a page's summary table."""
    return re.search(rf"<th>{re.escape(heading)}</th><td class=\"n\">([^<]*)</td>", page).group(1)


def test_the_ab_page_shows_the_interval_compare_prints_for_the_same_sides(served, tmp_path):
    """An outside probe: with nothing stored the page computed its own A/B (500 resamples, top 20) and
    printed (-0.0116667, 0.1783333) where `rubricflow compare` printed [-0.0125, 0.1733333]. Both now
    take compare's defaults, and the page shows the interval as the CLI does."""
    from rubricflow.flows.compare import compare_flow
    from rubricflow.tasks.presentation.tables import show

    v2 = served["v2"]
    judges = [v2["judge_hash"]] + [
        h for (h,) in rows(served["warehouse"], "SELECT DISTINCT judge_hash FROM runs WHERE rubric_hash = ?",
                           [v2["rubric_hash"]]) if h != v2["judge_hash"]
    ]  # fmt: skip
    stored = rows(served["warehouse"], "SELECT count(*) FROM ab_results WHERE sides LIKE ?", [f"%{judges[1]}%"])
    assert len(judges) == 2 and stored == [(0,)]  # nothing stored for these sides: the page computes its A/B
    status, page = get(served, f"/compare?corpus=c&a=llm-slop@1.1.0&b=llm-slop@1.1.0&ja={judges[0]}&jb={judges[1]}")
    assert status == 200, page[-500:]
    copy = tmp_path / "w.duckdb"  # the CLI's `compare --no-score --judge-hash-a/-b`, on a copy: it stores its A/B
    shutil.copy(served["warehouse"], copy)
    cli = compare_flow("c", "llm-slop@1.1.0", "llm-slop@1.1.0", str(copy), score=False,
                       judge_hash_a=judges[0][:12], judge_hash_b=judges[1][:12])  # fmt: skip
    assert cli.summary["mean_delta_ci"] and cell(page, "mean_delta_ci") == show(cli.summary["mean_delta_ci"])
    assert re.fullmatch(r"\[-?\d\.\d{3}, -?\d\.\d{3}\]", cell(page, "mean_delta_ci"))
    assert cell(page, "mean_delta") == show(cli.summary["mean_delta"])
    con = duckdb.connect(served["warehouse"], read_only=True)
    try:  # and the page's own figures, before they are rounded for the page: the CLI's, bit for bit
        shown = Pages._comparison(con, "c", ("llm-slop@1.1.0", judges[0]), ("llm-slop@1.1.0", judges[1]))
    finally:
        con.close()
    assert (shown.summary["mean_delta_ci"], shown.movers) == (cli.summary["mean_delta_ci"], cli.movers)


def test_the_calibration_page_says_n_a_and_shows_every_figure_the_cli_prints(served, tmp_path):
    """An outside probe: the page printed `nan` where `calibrate` and the report print n/a, and left
    out both alphas, the human QWK and Fleiss n."""
    from rubricflow.api_improve import import_labels
    from rubricflow.tasks.presentation.tables import show
    from rubricflow.tasks.stats.calibration import calibration

    human = {"ann": [1, 2, 3, 4, 5, 2], "bob": [1, 3, 3, 5, 4, 2]}
    labels = [("J", "flat", t, 3) for t in range(6)]  # the judge gives every text one score: r is undefined
    labels += [(r, c, t, s) for r, scores in human.items() for t, s in enumerate(scores) for c in ("flat", "varied")]
    labels += [("J", "varied", t, s) for t, s in enumerate([1, 2, 4, 4, 5, 3])]
    (tmp_path / "labels.csv").write_text(
        "text_id,criterion,score,rater\n" + "".join(f"x{t},{c},{s},{r}\n" for r, c, t, s in labels)
    )
    import_labels(Path(served["warehouse"]), tmp_path / "labels.csv", "cal")
    status, page = get(served, "/calibration?corpus=cal&judge=J")
    assert status == 200, page[-500:]
    con = duckdb.connect(served["warehouse"], read_only=True)
    try:
        rows_by_id = {r.criterion_id: r for r in calibration(con, "cal", "J", None).rows}
    finally:
        con.close()
    assert rows_by_id["flat"].pearson != rows_by_id["flat"].pearson  # NaN: the case the page said `nan` for
    header = re.findall(r"<th>([^<]+)</th>", page)
    for name in ("Fleiss n", "alpha humans", "alpha +judge", "human QWK"):
        assert name in header, header
    for criterion, r in rows_by_id.items():
        row = re.search(rf"<tr><td>{criterion}</td>(.*?)</tr>", page, re.S).group(1)
        cells = [c.strip() for c in re.findall(r'<td class="n">([^<]*)</td>', row)]
        expected = [str(r.n), *(show(v, ".6f") for v in (r.pearson, r.spearman, r.kendall_tau_b))]
        expected += [show(v) for v in (r.cohen_kappa, r.qwk, r.humans, r.fleiss_kappa, r.fleiss_texts)]
        expected += [show(v) for v in (r.alpha_humans, r.alpha_with_judge, r.human_pearson, r.human_qwk)]
        assert cells == expected, (criterion, cells, expected)
    assert "nan" not in re.sub(r"<[^>]+>", " ", page).split() and "n/a" in page


def test_the_panel_page_reads_a_rubric_as_every_page_does(served):
    """An outside probe: the panel page needed the full 64-hex rubric hash; a 12-hex prefix, the id
    or id@version showed "no text was judged by more than one judge". An unknown one says so."""
    v2 = served["v2"]

    def shown(ref: str) -> list:
        status, page = get(served, f"/panel?corpus=c&rubric={ref}")
        assert status == 200, (ref, page[-300:])
        return re.findall(r'<td><a href="[^"]*">([^<]+)</a></td><td>([^<]+)</td>', page)

    full = shown(v2["rubric_hash"])
    assert full and all(shown(ref) == full for ref in (v2["rubric_hash"][:12], "llm-slop@1.1.0"))
    status, page = get(served, f"/panel?corpus=c&rubric={v2['rubric_hash'][:12]}")
    assert f"where the judges of rubric {v2['rubric_hash'][:12]} disagree" in page
    status, page = get(served, "/panel?corpus=c&rubric=llm-slop@1.1.0")
    assert f"where the judges of rubric llm-slop@1.1.0 ({v2['rubric_hash'][:12]}) disagree" in page
    for ref in ("nope", "ffffffffffff"):
        status, page = get(served, f"/panel?corpus=c&rubric={ref}")
        assert status == 400 and f"no judgments of rubric &#39;{ref}&#39; on corpus &#39;c&#39;" in page, page[-300:]
        assert "no text was judged" not in page
