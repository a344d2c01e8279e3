"""The writer's steps of a scoring run: load a corpus, count pattern hits, plan cells, load landed
shards. Each is one `.sql` file run on the single writer connection."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from rubricflow.errors import InputError
from rubricflow.rubrics.compiler import Bundle
from rubricflow.rubrics.regex import backtracking, backtracking_hits, re2_errors
from rubricflow.rubrics.render import render

from . import analytics
from .run_folder import RunFolder
from .sqlfiles import fetch, fetch_tuples, literal, run_sql, sql, transaction


def load_corpus(
    con: duckdb.DuckDBPyConnection,
    corpus_id: str,
    source: str,
    parquet: Path,
    rows_ok: int,
    rows_quarantined: int,
    keep_absent: bool = False,
) -> None:
    """Texts into `texts`; a corpus of transcripts also its messages (the files beside texts.parquet).
    `keep_absent`: the source was read in part (`--limit`), so a text it does not hold is not removed."""
    with transaction(con):
        run_sql(con, "load_corpus.sql", corpus=corpus_id, parquet=str(parquet), keep_absent=keep_absent)
        load_transcripts(con, corpus_id, parquet.parent)
        run_sql(
            con,
            "register_corpus.sql",
            corpus=corpus_id,
            source=source,
            parquet=str(parquet),
            rows_ok=rows_ok,
            rows_quarantined=rows_quarantined,
        )
    analytics.refresh_in_batches(con)


# The share of a corpus's texts one ingest may mark removed unless asked (--allow-removal): a source
# path that read the wrong file or folder marked a whole nightly series removed.
MAX_REMOVAL_SHARE = 0.5


def removals(con: duckdb.DuckDBPyConnection, corpus_id: str, source: str, parquet: Path, refuse: bool) -> int:
    """How many of the corpus's texts an ingest of `parquet` marks removed (the ingest says so); with
    `refuse`, one that would mark more than MAX_REMOVAL_SHARE of them is refused before anything is
    written."""
    [found] = fetch(con, "corpus_removals.sql", corpus=corpus_id, parquet=str(parquet))
    if refuse and found["live"] and found["removed"] / found["live"] > MAX_REMOVAL_SHARE:
        raise InputError(
            f"{source}: this ingest would mark {found['removed']} of corpus {corpus_id}'s {found['live']} texts "
            f"removed (more than {MAX_REMOVAL_SHARE:.0%}): is it the right file or folder? Nothing was loaded; "
            "pass --allow-removal (allow_removal=True) to remove them"
        )
    return found["removed"]


def load_transcripts(con: duckdb.DuckDBPyConnection, corpus_id: str, folder: Path) -> None:
    """The corpus's messages, bodies and transcripts from its folder's Parquet files, or none (a
    corpus of plain texts)."""
    files = {n: folder / f"{n}.parquet" for n in ("messages", "bodies", "transcripts")}
    if not files["messages"].exists():
        run_sql(con, "clear_transcripts.sql", corpus=corpus_id)
        return
    run_sql(con, "load_transcripts.sql", corpus=corpus_id, **{n: str(p) for n, p in files.items()})


def count_pattern_hits(con: duckdb.DuckDBPyConnection, corpus_id: str, bundle: Bundle) -> None:
    """Each pattern's hits in every text that has no count for its current version: in SQL with
    RE2, or, for a pattern RE2 cannot run (look-around...), in Python with the `regex` engine."""
    refused = re2_errors([p.effective_regex() for p in bundle.rubric.patterns])
    for p in bundle.rubric.patterns:
        # One transaction per pattern: DuckDB holds a transaction's new rows in memory, and all
        # patterns at once set a 100k-text run's peak memory (+310 MiB; one at a time +210 MiB).
        # A crash between patterns loses nothing: the next run counts what has no count yet.
        with transaction(con):
            run_sql(con, "pattern_hits_clear.sql", corpus=corpus_id, rubric=bundle.hash, pattern=p.id)
            if refused[p.effective_regex()] is None:
                run_sql(
                    con,
                    "pattern_hits.sql",
                    corpus=corpus_id,
                    rubric=bundle.hash,
                    pattern=p.id,
                    regex=p.effective_regex(),
                )
            else:
                _count_backtracking(con, corpus_id, bundle.hash, p.id, p.effective_regex())
    analytics.refresh_in_batches(con)


def _count_backtracking(
    con: duckdb.DuckDBPyConnection, corpus_id: str, rubric_hash: str, pattern_id: str, source: str, page: int = 5_000
) -> None:
    """One page of texts at a time (keyset by text_id), so a large corpus never sits in memory;
    a text whose match runs past the time limit gets no count (its hits stay unknown)."""
    compiled = backtracking(source)
    if compiled is None:  # the compiler refuses such a rubric; nothing to count
        return
    after = ""
    while rows := fetch(
        con, "pattern_hits_todo.sql", corpus=corpus_id, rubric=rubric_hash, pattern=pattern_id, after=after, page=page
    ):
        counted = [
            (corpus_id, r["text_id"], r["sha256"], rubric_hash, pattern_id, backtracking_hits(compiled, r["text"]))
            for r in rows
        ]
        known = [c for c in counted if c[-1] is not None]
        if known:
            con.executemany(sql("record_pattern_hits.sql"), known)
            con.executemany("INSERT INTO stale_texts VALUES (?, ?)", [(c[0], c[1]) for c in known])
        after = rows[-1]["text_id"]


@dataclass
class Plan:
    files: list[Path]
    cells: int  # cells to judge now
    total: int  # cells the run covers, landed or not
    text_chars: int = 0  # characters of text, input and context the cells to judge carry (for the estimate)
    adopted: int = 0  # cells copied from another rubric version with the same unit fingerprint
    deferred: int = 0  # cells the run's options leave for the next run (max_cells)
    texts: int = 0  # distinct texts the cells to judge are of
    texts_chars: int = 0  # their characters (text, input, context), each text once
    layout: str = "rubric-first"  # the prompts' cache layout the cells were ordered for (layout_plan.py)

    @property
    def skipped(self) -> int:
        """Cells the run covers that are landed already (judged or adopted)."""
        return self.total - self.cells - self.deferred


def register_units(
    con: duckdb.DuckDBPyConnection, bundle: Bundle, strategy: str, rendering: Any = None
) -> list[tuple[str, str, str]]:
    """Record each call unit's fingerprint as the rubric renders it now (`rubric_units`): the views
    count a judgment only where its unit's fingerprint is current (views.sql, current_rendering).
    Every writer of judgments registers them first: a plan, and the reward server's ledger."""
    rendering = render(bundle.rubric, strategy) if rendering is None else rendering
    units = [(g, u.unit.id, u.fingerprint) for (g, _), u in rendering.units.items()]
    if units:  # none when every criterion is a check or scoped: the judge reads nothing of the texts
        con.executemany(
            "INSERT OR REPLACE INTO rubric_units (rubric_hash, genre_key, unit_id, unit_hash) VALUES (?, ?, ?, ?)",
            [(bundle.hash, *u) for u in units],
        )
    return units


def plan_cells(
    con: duckdb.DuckDBPyConnection,
    corpus_id: str,
    bundle: Bundle,
    judge_hash: str,
    strategy: str,
    samples: int,
    out_dir: Path,
    options: dict[str, Any],
    run_id: str | None = None,
    texts: list[str] | None = None,
) -> Plan:
    """Write the cells still to judge as Parquet plan files of at most `shard_size` cells.
    `options` are the run's options (RunOptions as a dict), each a parameter of plan_cells.sql. With a
    run id, cells another rubric version judged with the same unit fingerprint are adopted first.
    With `texts`, only those texts are planned (a sequential A/B judges its batches so)."""
    rendering = render(bundle.rubric, strategy)  # the units as the judge will send them
    genres = sorted(rendering.genres)
    units = register_units(con, bundle, strategy, rendering)
    adopted = _adopt(con, corpus_id, bundle.hash, judge_hash, samples, run_id) if run_id is not None else 0
    # Built from list parameters, not a registered Arrow table: that would import pandas (~0.5 s a process).
    con.execute(
        "CREATE OR REPLACE TEMP TABLE plan_units AS "
        "SELECT unnest($genres::VARCHAR[]) AS genre_key, unnest($units::VARCHAR[]) AS unit_id, "
        "unnest($hashes::VARCHAR[]) AS unit_hash",
        {"genres": [g for g, _, _ in units], "units": [u for _, u, _ in units], "hashes": [h for _, _, h in units]},
    )
    con.execute(
        "CREATE OR REPLACE TEMP TABLE plan_texts AS SELECT unnest($t::VARCHAR[]) AS text_id", {"t": texts or []}
    )
    try:
        run_sql(
            con,
            "plan_cells.sql",
            corpus=corpus_id,
            rubric=bundle.hash,
            judge=judge_hash,
            samples=samples,
            genres=genres,
            only_texts=texts is not None,
            **options,
        )
        deferred = con.execute("SELECT count(*) FROM plan WHERE NOT due").fetchall()[0][0]
        con.execute("DELETE FROM plan WHERE NOT due")
        total = con.execute(
            "SELECT count(*) * $samples FROM texts t JOIN plan_units u ON u.genre_key = "
            "CASE WHEN list_contains($genres, t.genre) THEN t.genre ELSE '' END "
            "WHERE t.corpus_id = $corpus AND t.removed_at IS NULL "
            "AND (NOT $only OR t.text_id IN (SELECT text_id FROM plan_texts))",
            {"samples": samples, "genres": genres, "corpus": corpus_id, "only": texts is not None},
        ).fetchall()[0][0]
    finally:
        con.execute("DROP TABLE plan_units")
        con.execute("DROP TABLE plan_texts")
    [(texts_planned, texts_chars)] = fetch_tuples(con, "plan_shape.sql", corpus=corpus_id)
    files, cells, chars = _write_plan(con, corpus_id, out_dir)
    return Plan(files, cells, total, chars, adopted, deferred, texts_planned, int(texts_chars))


def layout_shape(con: duckdb.DuckDBPyConnection, corpus_id: str, texts: list[str] | None) -> tuple[int, int]:
    """The corpus's texts (or just `texts`) and their characters, before a plan: the layout planner's input."""
    [(count, chars)] = fetch_tuples(
        con, "layout_shape.sql", corpus=corpus_id, only_texts=texts is not None, texts=texts or []
    )
    return int(count), int(chars)


def _adopt(
    con: duckdb.DuckDBPyConnection, corpus_id: str, rubric_hash: str, judge_hash: str, samples: int, run_id: str
) -> int:
    """Copy the cells another rubric version judged with the same unit fingerprint, and the cells
    another corpus judged for the same texts, into this run (they ask the same question); returns how many."""
    with transaction(con):
        run_sql(
            con, "adopt_cells.sql", corpus=corpus_id, rubric=rubric_hash, judge=judge_hash, samples=samples, run=run_id
        )
        adopted = con.execute("SELECT count(*) FROM adopted").fetchall()[0][0]
        con.execute("DROP TABLE adopted")
        run_sql(  # the same text in another corpus (one file ingested under two ids)
            con,
            "adopt_corpus_cells.sql",
            corpus=corpus_id,
            rubric=rubric_hash,
            judge=judge_hash,
            samples=samples,
            run=run_id,
        )
        adopted += con.execute("SELECT count(*) FROM adopted_corpus").fetchall()[0][0]
        con.execute("DROP TABLE adopted_corpus")
        analytics.refresh(con)
    return adopted


def _write_plan(con: duckdb.DuckDBPyConnection, corpus_id: str, out_dir: Path) -> tuple[list[Path], int, int]:
    """The `plan` table as one Parquet file per shard, each with its texts (old plan files
    removed); returns the files, the cells and the characters of text they carry. Drops `plan`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("*.parquet"):
        old.unlink()
    shards, cells, chars = con.execute(
        "SELECT count(DISTINCT p.shard), count(*), coalesce(sum(length(t.text) + length(coalesce(t.input, '')) "
        "+ length(coalesce(t.context, ''))), 0) FROM plan p JOIN texts t ON t.corpus_id = $corpus AND t.text_id = p.text_id",
        {"corpus": corpus_id},
    ).fetchall()[0]
    files = []
    for index in range(shards):  # DuckDB writes the files itself: the plan never passes through Python
        path = out_dir / f"shard-{index:05d}.parquet"
        con.execute(
            f"COPY ({sql('plan_shard.sql')}) TO {literal(path)} (FORMAT parquet)",
            {"corpus": corpus_id, "shard": index},
        )
        files.append(path)
    con.execute("DROP TABLE plan")
    return files, cells, int(chars)


# A run's shard loads refresh the analytics at most this often (warehouse/analytics.refresh), their
# writers' opens included; the run's end, any other write and any other writer's open catch up.
LOAD_REFRESH_LAG_S = 10.0


def load_landed(con: duckdb.DuckDBPyConnection, completions_file: Path) -> int:
    """Load one landed part in one transaction, then remove its files. Returns the cells loaded."""
    judgments_file = RunFolder.judgments_of(completions_file)
    with transaction(con):
        run_sql(con, "load_landed.sql", completions=str(completions_file), judgments=str(judgments_file))
        cells = con.execute("SELECT count(*) FROM read_parquet($f)", {"f": str(completions_file)}).fetchall()[0][0]
        analytics.refresh(con, lag_s=LOAD_REFRESH_LAG_S)
    RunFolder.forget(completions_file)  # after the commit: a crash before this only reloads the same rows
    return cells


def load_pending(con: duckdb.DuckDBPyConnection, runs_root: Path) -> int:
    """Load parts an interrupted run landed but never loaded (crash recovery). Parts of a run
    that is still going (another rubric or judge, in another process) are that run's to load."""
    live = {r["run_id"] for r in fetch(con, "running_runs.sql")}
    loaded = sum(load_landed(con, f) for f in RunFolder.unloaded(runs_root, live))
    RunFolder.prune(runs_root, live)
    return loaded


def load_legacy(con: duckdb.DuckDBPyConnection, legacy_root: Path) -> int:
    """Landed shards left in the runs folder of before (`runs/<run id>/`, shared by every warehouse
    in the folder) by a run of this warehouse that stopped before loading them: only runs this
    warehouse registered and that are not live, so another warehouse's shards are never taken."""
    if not legacy_root.is_dir():
        return 0
    live = {r["run_id"] for r in fetch(con, "running_runs.sql")}
    ours = {r[0] for r in con.execute("SELECT run_id FROM runs").fetchall()} - live
    others = {p.name for p in legacy_root.iterdir()} - ours
    loaded = sum(load_landed(con, f) for f in RunFolder.unloaded(legacy_root, others))
    RunFolder.prune(legacy_root, live=others)  # ours only
    return loaded


def load_labels(con: duckdb.DuckDBPyConnection, corpus_id: str, labels, source: str) -> int:
    """Insert or replace labels (a frame of text_id, criterion_id, rater, score) in one transaction;
    refused whole when the corpus has texts and some label names none of them."""
    con.register("incoming_labels", labels)
    try:
        (check,) = fetch(con, "labels_unmatched.sql", corpus=corpus_id)
        if check["unmatched"]:
            raise InputError(
                f"{source}: {check['unmatched']} of {check['label_ids']} labelled text ids match no text of "
                f"corpus {corpus_id!r} (e.g. {', '.join(map(repr, check['examples']))}); nothing was stored. "
                "Check the corpus (-c) and the ids (`rubricflow ingest --id-field`)"
            )
        with transaction(con):
            con.execute(
                "INSERT OR REPLACE INTO labels (corpus_id, text_id, criterion_id, rater, score, source) "
                "SELECT $corpus, text_id, criterion_id, rater, score, $source FROM incoming_labels",
                {"corpus": corpus_id, "source": source},
            )
            con.execute(
                "INSERT INTO stale_texts SELECT DISTINCT $corpus, text_id FROM incoming_labels", {"corpus": corpus_id}
            )
            analytics.refresh(con)
    finally:
        con.unregister("incoming_labels")
    return len(labels)


def load_texts(con: duckdb.DuckDBPyConnection, corpus_id: str, texts, source: str) -> None:
    """Texts that arrive with a label set (not through ingest): id, text, input, context.
    Call inside a transaction (the refresh of their analytics goes with them)."""
    con.register("incoming_texts", texts)
    try:
        con.execute(
            "INSERT OR REPLACE INTO texts (corpus_id, text_id, sha256, text, input, context, genre, metadata, "
            "removed_at) SELECT $corpus, text_id, sha256(text), text, input, context, NULL, NULL, NULL "
            "FROM incoming_texts",
            {"corpus": corpus_id},
        )
        run_sql(
            con,
            "register_corpus.sql",
            corpus=corpus_id,
            source=source,
            parquet="",
            rows_ok=len(texts),
            rows_quarantined=0,
        )
        con.execute("INSERT INTO stale_texts SELECT $corpus, text_id FROM incoming_texts", {"corpus": corpus_id})
        analytics.refresh(con)
    finally:
        con.unregister("incoming_texts")


def record_upload(
    con: duckdb.DuckDBPyConnection,
    input_file_id: str,
    run_id: str,
    corpus_id: str,
    rubric_hash: str,
    judge_hash: str,
    cells,
) -> None:
    """An uploaded batch file and its requests, in one transaction, before its batch is bought: under
    the file's id, status 'uploaded', until `record_created` names the batch (a run killed in between
    leaves a row the next run resolves, not cells it would submit again)."""
    requests = pa.table(
        {
            "cell_key": [c.cell_key for c in cells],
            "text_id": [c.text_id for c in cells],
            "text_sha256": [c.text_sha256 for c in cells],
            "unit_id": [c.unit_id for c in cells],
            "sample": pa.array([c.sample for c in cells], pa.int32()),
        }
    )
    con.register("incoming_requests", requests)
    try:
        with transaction(con):
            con.execute(
                "INSERT INTO batches (batch_id, input_file_id, run_id, corpus_id, rubric_hash, judge_hash, cells, "
                "status, online_cells, submitted_at, finished_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 'uploaded', NULL, current_timestamp, NULL)",
                [input_file_id, input_file_id, run_id, corpus_id, rubric_hash, judge_hash, len(cells)],
            )
            con.execute(
                "INSERT INTO batch_requests (batch_id, cell_key, text_id, text_sha256, unit_id, sample) "
                "SELECT ?, cell_key, text_id, text_sha256, unit_id, sample FROM incoming_requests",
                [input_file_id],
            )
    finally:
        con.unregister("incoming_requests")


def record_created(con: duckdb.DuckDBPyConnection, input_file_id: str, batch_id: str) -> None:
    """The uploaded file's batch was bought: its row and requests take the batch's id."""
    with transaction(con):
        con.execute(
            "UPDATE batches SET batch_id = ?, status = 'submitted' WHERE batch_id = ? AND status = 'uploaded'",
            [batch_id, input_file_id],
        )
        con.execute("UPDATE batch_requests SET batch_id = ? WHERE batch_id = ?", [batch_id, input_file_id])


def record_lost_upload(con: duckdb.DuckDBPyConnection, input_file_id: str) -> None:
    """The provider no longer has an uploaded file whose batch was never recorded: its cells are free."""
    con.execute(
        "UPDATE batches SET status = 'lost', finished_at = current_timestamp WHERE batch_id = ? AND status = 'uploaded'",
        [input_file_id],
    )


def pending_batches(
    con: duckdb.DuckDBPyConnection, corpus_id: str, rubric_hash: str, judge_hash: str, status: str = "submitted"
) -> list[str]:
    """This corpus, rubric and judge's batches in `status`, never landed: 'submitted' ones to
    collect, 'uploaded' ones (by file id) whose batch an earlier run may have bought unrecorded."""
    return [
        r[0]
        for r in con.execute(
            "SELECT batch_id FROM batches WHERE corpus_id = ? AND rubric_hash = ? AND judge_hash = ? "
            "AND status = ? ORDER BY submitted_at",
            [corpus_id, rubric_hash, judge_hash, status],
        ).fetchall()
    ]


# --------------------------------------------------------------------------- a run's bookkeeping


def corpus_exists(con: duckdb.DuckDBPyConnection, corpus_id: str) -> bool:
    return bool(fetch(con, "corpus_exists.sql", corpus=corpus_id)[0]["found"])


def live_texts(con: duckdb.DuckDBPyConnection, corpus_id: str) -> int:
    """How many texts of the corpus are live (not marked removed)."""
    return int(fetch(con, "corpus_live_texts.sql", corpus=corpus_id)[0]["texts"])


def corpus_texts(con: duckdb.DuckDBPyConnection, corpus_id: str, warehouse: str | Path) -> list[str]:
    """The live texts of a corpus, by id (a cascade's or sequential A/B's order is seeded from them);
    a corpus the warehouse does not hold is an error naming both."""
    if not corpus_exists(con, corpus_id):
        raise InputError(f"no corpus {corpus_id!r} in {warehouse}; run `rubricflow ingest` first")
    return [r["text_id"] for r in fetch(con, "sequential_texts.sql", corpus=corpus_id)]


def route_texts(con: duckdb.DuckDBPyConnection, corpus_id: str) -> list[tuple]:
    """(text_id, genre, metadata) of a corpus's live texts, for `score --route` to choose from."""
    return fetch_tuples(con, "route_texts.sql", corpus=corpus_id)


def record_routes(con: duckdb.DuckDBPyConnection, corpus_id: str, selector: str, rows: list[tuple]) -> None:
    """The routes chosen, (text_id, value, choice, rubric_hash) each, replacing the corpus's earlier ones."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE routes (text_id VARCHAR, value VARCHAR, choice VARCHAR, rubric_hash VARCHAR)"
    )
    con.executemany("INSERT INTO routes VALUES (?, ?, ?, ?)", rows)
    with transaction(con):
        run_sql(con, "record_routes.sql", corpus=corpus_id, selector=selector)
    con.execute("DROP TABLE routes")


def mean_completion_tokens(con: duckdb.DuckDBPyConnection, rubric_hash: str, judge_hash: str) -> float | None:
    return fetch(con, "mean_completion_tokens.sql", rubric=rubric_hash, judge=judge_hash)[0]["mean_tokens"]


def start_run(con: duckdb.DuckDBPyConnection, **run) -> None:
    """The run's row, status 'running'; the fields are start_run.sql's parameters. Call inside a
    transaction (the first run of a judgment set refreshes the corpus's analytics)."""
    unplanned = {"layout": None, "layout_reason": None, "minimum_prompt_tokens": None}  # a run made without the planner
    run_sql(con, "start_run.sql", **(unplanned | run))
    analytics.refresh(con)


def record_price(con: duckdb.DuckDBPyConnection, price) -> None:
    """Keep the price (tasks.costs.Price) a run was costed with, for the cost views."""
    run_sql(
        con,
        "record_price.sql",
        model=price.model,
        input_per_mtok=price.input_per_mtok,
        output_per_mtok=price.output_per_mtok,
        cached_input_per_mtok=price.cached_input_per_mtok,
        source=price.source,
    )


def finish_run(con: duckdb.DuckDBPyConnection, run_id: str, status: str, message: str | None) -> None:
    """The run's end; the texts its last loads left marked are recomputed with it."""
    with transaction(con):
        run_sql(con, "finish_run.sql", run=run_id, status=status, message=message)
        analytics.refresh(con)


def finish_unfinished_run(con: duckdb.DuckDBPyConnection, run_id: str, status: str, message: str) -> None:
    """The run's end, unless one is recorded already (an interrupt during the finish step)."""
    with transaction(con):
        run_sql(con, "finish_unfinished_run.sql", run=run_id, status=status, message=message)
        analytics.refresh(con)


def finish_batch(con: duckdb.DuckDBPyConnection, batch_id: str, status: str, online_cells: int) -> None:
    """A batch's end; the texts its load left marked are recomputed with it."""
    with transaction(con):
        run_sql(con, "finish_batch.sql", batch=batch_id, status=status, online_cells=online_cells)
        analytics.refresh(con)


def corpus_digest(con: duckdb.DuckDBPyConnection, corpus_id: str) -> str | None:
    rows = fetch(con, "corpus_digest.sql", corpus=corpus_id)
    return rows[0]["source_sha256"] if rows else None


def set_corpus_digest(con: duckdb.DuckDBPyConnection, corpus_id: str, digest: str) -> None:
    run_sql(con, "set_corpus_digest.sql", corpus=corpus_id, digest=digest)


def close_stale_runs(con: duckdb.DuckDBPyConnection, warehouse_path: Path) -> list[str]:
    """Mark runs 'interrupted' whose process is gone (no live process holds their work's lock
    under their run id), remove their plan files, and return their ids. Their landed parts stay
    for `load_pending`."""
    from .locks import holder

    stale = [
        r["run_id"]
        for r in fetch(con, "running_runs.sql")
        if holder(warehouse_path, r["corpus_id"], r["rubric_hash"], r["judge_hash"]) != r["run_id"]
    ]
    for run_id in stale:
        run_sql(con, "interrupt_run.sql", run=run_id)
        RunFolder.of(warehouse_path, run_id).drop_plan()
    return stale
