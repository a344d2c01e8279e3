"""The materialised analytics (sql/analytics_tables.sql): criterion, node and text scores,
disqualifier hits and pairwise verdicts, kept as tables so that questions over millions of
judgments read them instead of recomputing every text's score from all of its judgments.

How they stay current: every write that changes what a text's scores are made of marks the text
in `stale_texts` (the marking is in that write's own `.sql` file) and calls `refresh` inside the
same transaction, which recomputes the marked texts only (sql/analytics_refresh*.sql). A crash
rolls both back together. A write that marks a whole corpus (an ingest, a first run's pattern
counts) commits its marks and then recomputes them in batches (`refresh_in_batches`). `rebuild`
recomputes everything from the raw rows; a writer does that by itself when the definitions
changed since the tables were built (or the warehouse predates them).
"""

from __future__ import annotations

import hashlib
import time

import duckdb

from . import judgment_constraints
from .sqlfiles import run_sql, sql, transaction

ALL = 2**62  # a batch with no limit
# Texts per transaction in refresh_in_batches. Each batch reads what it cannot skip of the corpus's
# tables (the stale marks, the texts), so the batches' count multiplies the corpus: at 10,000, the
# 1,000,000-transcript bench's two refreshes were 200 batches, most of its ingest and checks' time
# growing as the corpus squared; at 50,000 a batch of 9 criteria holds ~+75 MiB (bench/traces.py).
BATCH = 50_000
DEFINITIONS = (
    "analytics_tables.sql",
    "analytics_refresh.sql",
    "analytics_refresh_pairs.sql",
    "analytics_refresh_runs.sql",
)
TABLES = (
    "mat_criterion_scores", "mat_node_scores", "mat_disqualifier_hits", "mat_text_scores", "mat_ok_cells",
    "mat_run_stats", "mat_pair_verdicts", "mat_constraint_warnings",
)  # fmt: skip
COUNTS = (  # what `rubricflow rebuild` reports
    "SELECT (SELECT count(*) FROM current_texts), (SELECT count(*) FROM judgment_sets), "
    "(SELECT count(*) FROM mat_criterion_scores), (SELECT count(*) FROM mat_text_scores)"
)


def definition_sha() -> str:
    """What the tables were built by: a change to either file means a rebuild."""
    return hashlib.sha256("".join(sql(name) for name in DEFINITIONS).encode()).hexdigest()


def refresh(con: duckdb.DuckDBPyConnection, lag_s: float = 0.0, batch: int = ALL) -> int:
    """Recompute the texts (and runs, for run_summary) marked stale, at most `batch` texts; call
    inside the transaction of the write that marked them. With `lag_s`, a refresh less than that
    long ago leaves the marks for the next one (a run's shard loads: each refresh scans the
    judgments, so one every few seconds costs a run far less than one per shard); the marks are
    committed with the write, so a crash loses none. Returns how many marks were recomputed."""
    (stale, runs) = con.execute(
        "SELECT (SELECT count(*) FROM stale_texts) + (SELECT count(*) FROM stale_runs), (SELECT count(*) FROM stale_runs)"
    ).fetchone() or (0, 0)
    if stale and lag_s:
        (recent,) = con.execute(
            "SELECT count(*) FROM analytics_refreshes WHERE refreshed_at > current_timestamp - to_seconds($lag)",
            {"lag": lag_s},
        ).fetchone() or (0,)
        stale = 0 if recent else stale
    if stale:
        started = time.perf_counter()
        judgment_constraints.register(con)
        recompute(con, batch, runs=bool(runs))
        stale = min(stale, batch)
        con.execute(
            "INSERT INTO analytics_refreshes VALUES (current_timestamp, $texts, $seconds)",
            {"texts": stale, "seconds": time.perf_counter() - started},
        )
    return int(stale)


def recompute(con: duckdb.DuckDBPyConnection, batch: int, runs: bool) -> None:
    """The refresh's files: the marked texts' analytics, then their pairs' verdicts only when the
    scope holds a pair's text, and the marked runs' stats only when `runs` (stale_runs is not
    empty): with nothing to do, each of those files still cost a refresh ~10 ms of planning, and a
    run's shard loads and a corpus's batches refresh often."""
    run_sql(con, "analytics_refresh.sql", batch=batch)
    (pairs,) = con.execute(
        "SELECT count(*) FROM refresh_scope WHERE regexp_matches(text_id, ':(ab|ba)$')"
    ).fetchone() or (0,)
    if pairs:
        run_sql(con, "analytics_refresh_pairs.sql")
    con.execute("DROP TABLE refresh_scope")
    if runs:
        run_sql(con, "analytics_refresh_runs.sql")


def refresh_in_batches(con: duckdb.DuckDBPyConnection, batch: int | None = None, lag_s: float = 0.0) -> int:
    """Recompute every marked text, `batch` texts per transaction (call outside one): DuckDB holds
    a transaction's new rows in memory, so a write that marks a whole corpus (its ingest, a first
    run's pattern counts) refreshed at once set a 100k-text run's peak memory (+150 MiB). The marks
    not yet done are committed, so a crash between batches loses none: the next writer's open
    recomputes them. `lag_s` as in `refresh`. Returns how many marks were recomputed."""
    total = 0
    while True:
        with transaction(con):
            done = refresh(con, lag_s=lag_s, batch=batch or BATCH)
        if not done:
            return total
        total += done


def rebuild(con: duckdb.DuckDBPyConnection) -> float:
    """Drop and recompute every materialised table from the raw rows, in one transaction; returns
    the seconds it took."""
    started = time.perf_counter()
    with transaction(con):
        for table in TABLES:
            con.execute(f"DROP TABLE IF EXISTS {table}")
        run_sql(con, "analytics_tables.sql")
        con.execute("DELETE FROM stale_texts")
        con.execute("DELETE FROM stale_runs")
        con.execute("INSERT INTO stale_texts SELECT corpus_id, text_id FROM texts")
        con.execute("INSERT INTO stale_runs SELECT run_id FROM runs")
        judgment_constraints.register(con)
        recompute(con, ALL, runs=True)
        con.execute("DELETE FROM analytics_state")
        con.execute("INSERT INTO analytics_state VALUES ($sha, current_timestamp)", {"sha": definition_sha()})
    return time.perf_counter() - started


def ensure_current(con: duckdb.DuckDBPyConnection, lag_s: float = 0.0) -> None:
    """On a writer's open: rebuild when the tables were built by other definitions (or never),
    else recompute the texts a lagging refresh left marked (see `refresh`; with `lag_s`, only
    when the last refresh is older: a run's shard loads, each in a writer of its own)."""
    stored = con.execute("SELECT definition_sha FROM analytics_state").fetchall()
    if stored != [(definition_sha(),)]:
        rebuild(con)
        return
    refresh_in_batches(con, lag_s=lag_s)
