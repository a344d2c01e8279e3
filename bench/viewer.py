"""`rubricflow view` on a large warehouse: each page's time over HTTP, the time of its own SQL (or
A/B / calibration code) run directly on a read-only DuckDB connection, and the time of that same
question asked the old way (every analytics view computed from the raw judgments,
bench/unmaterialised_views.sql), in the same run. The warehouse is synthetic: --texts texts
(default 1,000,000) judged on 10 criteria by two versions of a rubric (2 x 10 judgments a text),
with pattern hits and human labels for calibration; the A/B was asked once before (`compare`
stores it). Targets: every page <= 2x its own query, and <= 0.1x the old way (#23).

    python bench/viewer.py [--texts 1000000] [--runs 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import functools
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import duckdb
from common import Unmaterialised

from rubricflow.rubrics.compiler import compile_or_raise
from rubricflow.rubrics.model import Rubric
from rubricflow.tasks.presentation.viewer import Pages, read_text
from rubricflow.tasks.stats.calibration import calibration
from rubricflow.tasks.stats.compare import compare, compare_options, compared, judgment_sets, stored_comparison
from rubricflow.warehouse import analytics, db

CRITERIA = [f"c{i}" for i in range(10)]


def rubric(version: str, wording: str) -> Rubric:
    anchors = [{"value": v, "description": f"level {v} of the scale"} for v in range(4)]
    return Rubric.model_validate(
        {
            "metadata": {"id": "bench-ten", "version": version},
            "goal": "Benchmark the viewer.",
            "criteria": [
                {
                    "id": c,
                    "description": f"criterion {c} {wording}",
                    "scale": {"kind": "ordinal", "anchors": anchors},
                    "patterns": ["moreover"] if c == "c0" else [],
                }
                for c in CRITERIA
            ],
            "patterns": [{"id": "moreover", "words": ["moreover"], "flags": "i"}],
            "scoring": {"pass_threshold": 0.5, "labels": [{"label": "low", "min": 0}, {"label": "high", "min": 0.6}]},
        }
    )


def build(path: Path, n: int) -> list[str]:
    """The synthetic warehouse; returns the two rubric hashes."""
    hashes = []
    with db.writer(path) as con:
        con.execute("INSERT INTO corpora VALUES ('big', 'synthetic', '-', $n, 0, current_timestamp, NULL)", {"n": n})
        con.execute(
            """INSERT INTO texts (corpus_id, text_id, sha256, text)
                       SELECT 'big', 't' || lpad(i::VARCHAR, 7, '0'), sha256(txt), txt
                       FROM (SELECT i, 'Text number ' || i || CASE WHEN i % 7 = 0 THEN ', moreover it plays a vital role.'
                                  ELSE ', the council met and approved the budget.' END AS txt FROM range($n) r(i))""",
            {"n": n},
        )
        for side, (version, wording) in enumerate((("1.0.0", "as first written"), ("1.1.0", "reworded"))):
            bundle = compile_or_raise(rubric(version, wording))
            hashes.append(bundle.hash)
            db.register_rubric(con, bundle, "bench")
            run = f"bench-run-{side}"
            con.execute(
                """INSERT INTO runs (run_id, corpus_id, rubric_hash, judge_hash, model, strategy, samples,
                           parameters, status, planned_cells, skipped_cells, started_at, finished_at)
                           VALUES ($run, 'big', $rubric, 'judge', 'synthetic', 'holistic', 1, '{}', 'completed', $n, 0,
                                   current_timestamp, current_timestamp)""",
                {"run": run, "rubric": bundle.hash, "n": n},
            )
            con.execute(
                """INSERT INTO completions (cell_key, run_id, corpus_id, text_id, text_sha256, unit_id, rubric_hash,
                           judge_hash, sample, model, raw_response, attempts, status, prompt_tokens, completion_tokens,
                           latency_ms, created_at)
                           SELECT sha256(text_id || $rubric), $run, corpus_id, text_id, sha256, '_all', $rubric, 'judge', 0,
                                  'synthetic', '{"criteria": {}}', 1, 'ok', 900, 120, 40.0, current_timestamp
                           FROM texts WHERE corpus_id = 'big'""",
                {"run": run, "rubric": bundle.hash},
            )
            con.execute(
                """INSERT INTO judgments (cell_key, criterion_id, run_id, corpus_id, text_id, rubric_hash, judge_hash,
                           sample, value, unit_score, rationale, evidence, evidence_verified, warnings, status, text_sha256)
                           SELECT sha256(t.text_id || $rubric), c.id, $run, 'big', t.text_id, $rubric, 'judge', 0,
                                  v::VARCHAR, v / 3, 'BECAUSE: synthetic rationale ' || c.id, [], NULL, [], 'scored', t.sha256
                           FROM (SELECT *, hash(text_id || $rubric) AS h FROM texts WHERE corpus_id = 'big') t,
                                unnest($criteria) c(id),
                                LATERAL (SELECT ((t.h >> (2 * (c.id[2:]::INTEGER))) % 4)::INTEGER AS v)""",
                {"run": run, "rubric": bundle.hash, "criteria": CRITERIA},
            )
            con.execute(
                """INSERT INTO pattern_hits SELECT 'big', text_id, sha256, $rubric, 'moreover',
                           CASE WHEN contains(text, 'moreover') THEN 1 ELSE 0 END FROM texts WHERE corpus_id = 'big'""",
                {"rubric": bundle.hash},
            )
        con.execute(
            """INSERT INTO labels SELECT 'big', text_id, c.id, 'human', (hash(text_id || c.id) % 4)::DOUBLE, 'bench'
                       FROM (SELECT text_id FROM texts WHERE corpus_id = 'big' ORDER BY text_id LIMIT 5000), unnest($c) c(id)""",
            {"c": CRITERIA},
        )
        print(f"materialised the analytics (rubricflow rebuild) in {analytics.rebuild(con):.1f} s")
        con.execute("CHECKPOINT")
    return hashes


def store_comparison(path: Path) -> None:
    """The A/B as `rubricflow compare` stores it (a nightly run keeps it current): the page reads it."""
    with db.reader(path) as con:
        a, b = sides(con)
        if stored_comparison(con, "big", a, b, compare_options()):  # the one the page reads
            return
    started = time.perf_counter()
    compared(path, "big", a, b)  # with the defaults, as the CLI
    print(f"`rubricflow compare` computed and stored the A/B in {time.perf_counter() - started:.1f} s")


def sides(con) -> list:
    return [judgment_sets(con, "big", f"bench-ten@{v}", None, True, "AB") for v in ("1.0.0", "1.1.0")]


def seconds(fn, runs: int) -> float:
    fn()  # warm: the connection opened, the file's pages cached
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="Build (or reuse) the warehouse in this folder.")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="rubricflow-view-bench-"))
    try:
        report(folder / f"view-{args.texts}.duckdb", args.texts, args.runs)
    finally:  # a warehouse of its own goes with the run; a kept one stays
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


def report(path: Path, texts: int, runs: int) -> None:
    """Build (or open) the warehouse at `path`, then time each page over HTTP, its query, the old way."""
    if not path.exists():
        started = time.perf_counter()
        build(path, texts)
        print(f"built {path} ({texts:,} texts x 10 criteria x 2 versions) in {time.perf_counter() - started:.0f} s")
    else:  # a kept warehouse: brought to this version's views and tables as any writer's open does
        started = time.perf_counter()
        with db.writer(path):
            pass
        print(f"opened {path} as a writer (views and analytics current) in {time.perf_counter() - started:.1f} s")
    store_comparison(path)  # as a nightly `rubricflow compare` keeps it
    con = duckdb.connect(str(path), read_only=True)
    pages = questions(con)
    direct = {name: seconds(fn, runs) for name, (_, fn) in pages.items()}
    with Unmaterialised(con):  # the old way computes every A/B afresh: nothing was stored then
        pages["A/B"] = (pages["A/B"][0], lambda: compare(con, "big", *sides(con)))
        old = {name: seconds(fn, 1) for name, (_, fn) in pages.items()}
    con.close()
    served = over_http(path, {name: url for name, (url, _) in pages.items()}, runs)
    print(f"{texts:,} texts x 10 criteria x 2 rubric versions; median of {runs} after a warm-up, same run")
    print(f"{'page':<18}{'over HTTP':>11}{'its query':>11}{'ratio':>7}{'old way':>10}{'page/old':>10}")
    for name in pages:
        print(
            f"{name:<18}{served[name]:>9.3f} s{direct[name]:>9.3f} s{served[name] / direct[name]:>6.2f}x"
            f"{old[name]:>8.3f} s{served[name] / old[name]:>9.3f}x"
        )
    print("targets: over HTTP <= 2.00x its query; <= 0.1x the old way")


def questions(con) -> dict:
    """Each page: its URL, and the same question asked directly of the warehouse."""
    h1, h2 = [r[0] for r in con.execute("SELECT rubric_hash FROM rubrics ORDER BY version").fetchall()]
    # a text from the middle, as most are: the last text's rows sit at the tables' ends, where row
    # groups' min/max find them even in unordered tables (its scores took 2 ms, a middle text's 17)
    (text_id,) = con.execute(
        "SELECT text_id FROM texts ORDER BY text_id LIMIT 1 OFFSET (SELECT count(*) // 2 FROM texts)"
    ).fetchone()
    key = {"corpus": "big", "rubric": h2, "judge": "judge"}
    filters = dict(
        search=None, label=None, criterion=None, disqualifier=None, pattern=None, min_unit=None, max_unit=None
    )
    filtered = {**filters, "search": "moreover", "criterion": "c3", "max_unit": 0.4}
    pages = {
        "runs": ("/", lambda: db.fetch(con, "view_runs.sql", limit=50, offset=0)),
        "judgment set": (
            f"/set?corpus=big&rubric={h2}&judge=judge",
            lambda: [
                db.fetch(con, name, **key)
                for name in ("view_set_summary.sql", "view_set_criteria.sql", "view_set_rates.sql")
            ],
        ),
        "texts, page 1": (
            f"/texts?corpus=big&rubric={h2}&judge=judge",
            lambda: db.fetch(con, "view_texts.sql", **key, **filters, limit=50, offset=0),
        ),
        "texts, filtered": (
            f"/texts?corpus=big&rubric={h2}&judge=judge&search=moreover&criterion=c3&max_unit=0.4",
            lambda: db.fetch(con, "view_texts.sql", **key, **filtered, limit=50, offset=0),
        ),
        "texts, page 2000": (
            f"/texts?corpus=big&rubric={h2}&judge=judge&page=2000",
            lambda: db.fetch(con, "view_texts.sql", **key, **filters, limit=50, offset=1999 * 50),
        ),
        "one text": (
            f"/text?corpus=big&id={text_id}&a={h1}&b={h2}",
            lambda: read_text(functools.partial(db.fetch, con), "big", text_id),
        ),
        "A/B": (
            "/compare?corpus=big&a=bench-ten@1.0.0&b=bench-ten@1.1.0",
            lambda: Pages._comparison(con, "big", ("bench-ten@1.0.0", None), ("bench-ten@1.1.0", None)),
        ),
        "calibration": (
            "/calibration?corpus=big&rubric=bench-ten@1.1.0",
            lambda: calibration(con, "big", "unieval", None, "bench-ten@1.1.0"),
        ),
    }
    return pages


def over_http(path: Path, urls: dict[str, str], runs: int) -> dict[str, float]:
    """Each page's median time over HTTP from a `rubricflow view` process of its own."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rubricflow.launch", "view", "-w", str(path), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        base, token = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=(\S+)", proc.stdout.readline()).groups()

        def fetch(url: str):
            request = urllib.request.Request(base + url, headers={"Authorization": f"Bearer {token}"})
            with urllib.request.urlopen(request, timeout=600) as response:
                assert response.status == 200, url
                response.read()

        return {name: seconds(lambda u=url: fetch(u), runs) for name, url in urls.items()}
    finally:
        proc.terminate()
        proc.wait(30)


if __name__ == "__main__":
    main()
