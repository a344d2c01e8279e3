"""The DuckDB warehouse: open it (one writer process at a time), apply the schema, register rubrics.

DuckDB allows a single writer per file. Only the flow's own process writes, in short steps
(register, plan, load); shard workers write Parquet and never open the warehouse.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from rubricflow.errors import CheckFailed, InputError, TransientError
from rubricflow.rubrics.compiler import Bundle, rubric_document
from rubricflow.rubrics.model import Rubric
from rubricflow.rubrics.regex import re2_errors
from rubricflow.rubrics.scoring import DEFAULT_PASS
from rubricflow.settings import path_setting, settings

from . import analytics
from .private_files import owner_only
from .sqlfiles import SQL_DIR, fetch, fetch_tuples, literal, run_sql, sql, statements, transaction

__all__ = [
    "SQL_DIR",
    "fetch",
    "fetch_tuples",
    "run_sql",
    "sql",
    "statements",
    "transaction",
]  # the .sql helpers, for callers of db

DEFAULT_PATH = Path("warehouse") / "rubricflow.duckdb"
ROOT_NODE = "__root__"


class WarehouseError(InputError):
    """No warehouse at the path given, or a query that cannot run on it."""


class WarehouseLocked(WarehouseError, TransientError):
    """Another process holds the warehouse; trying again later may succeed."""


def disk_full(exc: BaseException) -> bool:
    """A full disk, as Python's write or DuckDB's (a load's or a commit's WAL write) says it."""
    import errno

    if isinstance(exc, OSError):
        return exc.errno == errno.ENOSPC
    return isinstance(exc, duckdb.Error) and "No space left" in str(exc)


def default_path() -> Path:
    return Path(path_setting(settings().warehouse, "RUBRICFLOW_WAREHOUSE") or DEFAULT_PATH)


LOCK_WAIT_ENV = "RUBRICFLOW_LOCK_WAIT_S"
WRITER_MARK_FRESH_S = 5.0  # a waiting writer refreshes its mark at least every second
DEFAULT_LOCK_WAIT_S = 60.0


def lock_wait_s() -> float:
    """How long to wait for another process's hold on the warehouse ($RUBRICFLOW_LOCK_WAIT_S, default 60)."""
    try:
        return max(0.0, float(settings().lock_wait_s or DEFAULT_LOCK_WAIT_S))
    except ValueError:
        raise InputError(f"${LOCK_WAIT_ENV} must be a number of seconds") from None


MEMORY_ENV = "RUBRICFLOW_DUCKDB_MEMORY"
MEMORY_SIZE = re.compile(r"\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", re.IGNORECASE)


def memory_config() -> dict:
    """DuckDB's memory limit for this process's warehouse connections: $RUBRICFLOW_DUCKDB_MEMORY
    (e.g. 1GB), past which DuckDB spills to disk; unset, DuckDB's default (80% of the machine's
    memory), which a large step fills with cache (1M texts: a run's preparation 2,018 MiB; 1GB: 1,295)."""
    limit = (settings().duckdb_memory or "").strip()
    if limit and not MEMORY_SIZE.fullmatch(limit):
        raise InputError(f"${MEMORY_ENV} must be a size such as 1GB or 512MB, not {limit[:40]!r}")
    return {"memory_limit": limit} if limit else {}


def writer_waiting(path: Path) -> Path:
    """The mark a writer leaves while another process holds the file: long-lived readers (the
    viewer) see it, close their connection and let the writer in."""
    return path.with_name(path.name + ".writer-waiting")


def connect(
    path: Path, read_only: bool, config: dict | None = None, wait_s: float | None = None
) -> duckdb.DuckDBPyConnection:
    """A connection to the warehouse file, waiting with backoff while another process holds it
    (DuckDB allows one writing process, or several readers): a `query` or a second command
    delays a running score by a moment instead of failing it. `wait_s` overrides how long."""
    waits_s = lock_wait_s() if wait_s is None else wait_s
    deadline = time.monotonic() + waits_s
    config = {**memory_config(), **(config or {})}
    pause = 0.05
    mark = None
    try:
        while True:
            try:
                if read_only:
                    return duckdb.connect(str(path), read_only=True, config=config)
                return _attach_writer(path, config)
            except duckdb.IOException as exc:
                if _held(exc):  # a reader too: the viewer may hold a writer for labels
                    mark = _mark_waiting(path)
                _wait_or_raise(path, exc, deadline, pause, waits_s)
                if pause == 0.05:  # the first wait: say who holds the file, once
                    _say_waiting(path, exc, deadline)
                pause = min(1.0, pause * 2)
    finally:
        if mark is not None:
            mark.unlink(missing_ok=True)


# Rows per row group in the warehouse file (DuckDB's default is 122,880). A checkpoint merges a
# table's small row groups up to this size, and a merge holds its row groups in memory: with the
# default, the checkpoint after a run's 50th shard load rewrote 64,000 raw completions at once
# (+340 MiB, growing with the run); at this size no merge is larger, whatever the run's size (#22).
ROW_GROUP_ROWS = 16_384
WAREHOUSE_ALIAS = "warehouse"

# One DuckDB instance per warehouse file writes in this process (DuckDB allows one); every writer
# connection in the process is a cursor of it, as DuckDB's own instance cache would give.
_writers: dict[Path, tuple[duckdb.DuckDBPyConnection, int]] = {}
_writers_lock = threading.Lock()


def _attach_writer(path: Path, config: dict) -> duckdb.DuckDBPyConnection:
    """A read-write connection to the file, attached with ROW_GROUP_SIZE (a setting DuckDB takes
    per attach, not per file); shares this process's instance of the file when one is open."""
    key = path.resolve()
    with _writers_lock:
        if key in _writers:
            hub, users = _writers[key]
        else:
            # spills beside the file (an in-memory hub would spill to .tmp in the working folder)
            spill = {"temp_directory": str(path.with_name(path.name + ".tmp"))}
            hub, users = duckdb.connect(":memory:", config={**spill, **config}), 0
            try:
                hub.execute(f"ATTACH {literal(path)} AS {WAREHOUSE_ALIAS} (ROW_GROUP_SIZE {ROW_GROUP_ROWS})")
            except duckdb.Error:
                hub.close()
                raise
        _writers[key] = (hub, users + 1)
        con = hub.cursor()
    con.execute(f"USE {WAREHOUSE_ALIAS}")
    return con


def _release_writer(path: Path) -> None:
    """The last writer connection of the process closed: detach the file (DuckDB checkpoints it
    and releases its lock for other processes)."""
    key = path.resolve()
    with _writers_lock:
        hub, users = _writers.pop(key)
        if users > 1:
            _writers[key] = (hub, users - 1)
        else:
            hub.close()


def _mark_waiting(path: Path) -> Path:
    """Leave (or refresh: a mark older than WRITER_MARK_FRESH_S is a dead writer's) the waiting mark."""
    mark = writer_waiting(path)
    try:
        mark.touch()
    except OSError:
        pass  # a folder the writer cannot write to: the connection itself will say so
    return mark


def writer_waits(path: Path) -> bool:
    """Whether a live writer waits for the file (its mark is fresh)."""
    try:
        return time.time() - writer_waiting(path).stat().st_mtime < WRITER_MARK_FRESH_S
    except OSError:
        return False


HOLDER = re.compile(r"held in (.+?) \(PID (\d+)\)")


def _say_waiting(path: Path, exc: duckdb.IOException, deadline: float) -> None:
    """One line on stderr while a call waits for the file, naming the process that holds it (a
    notebook's query or a terminal's run), so a wait is never a silent hang."""
    found = HOLDER.search(str(exc))
    holder = f"process {found.group(2)} ({Path(found.group(1)).name})" if found else "another process"
    left = max(0.0, deadline - time.monotonic())
    print(
        f"rubricflow: waiting for {path}: held by {holder}; waiting up to {seconds(left)}", file=sys.stderr, flush=True
    )


def seconds(value: float) -> str:
    """A duration as a message says it: '0.3 s', '12 s', '1.5 s' (rounded to a tenth, never '0 s'
    for a wait of a fraction of a second, nor the configured wait for one cut short)."""
    return f"{max(0.1, round(value, 1)) if value > 0 else 0:g} s"


def _wait_or_raise(path: Path, exc: duckdb.IOException, deadline: float, pause: float, waited_s: float) -> None:
    """Sleep before the next try while the file is locked and time is left; else raise, saying how
    long this call waited (`waited_s`: its own wait, which a caller may set; the viewer's short
    waits said the default 60 s). Only a lock is waited for: a folder or a file that is not DuckDB's
    was reported as locked, which sent the user to look for a process that did not exist."""
    if not _held(exc):
        raise _not_a_warehouse(path, exc) from None
    if time.monotonic() >= deadline:
        raise WarehouseLocked(
            f"warehouse {path} is locked by another process (DuckDB allows one writer, or readers only)"
            f" (waited {seconds(waited_s)}; ${LOCK_WAIT_ENV} sets how long); wait for it to finish"
            f" or use another --warehouse. ({exc})"
        ) from None
    time.sleep(min(pause, max(0.0, deadline - time.monotonic())))


def _held(exc: duckdb.IOException) -> bool:
    """Whether DuckDB refused the file because another process holds its lock (a bare "lock" also
    matched a path such as /srv/blocks/x.duckdb, which then waited out the full lock wait)."""
    said = str(exc).lower()
    return "could not set lock" in said or "conflicting lock" in said


def _not_a_warehouse(path: Path, exc: duckdb.IOException) -> WarehouseError:
    """The error for a file DuckDB cannot open for a reason other than a lock: waiting would not help."""
    if path.is_dir():
        return WarehouseError(f"warehouse {path} is a folder, not a warehouse file; give the path of a .duckdb file")
    if "not a valid duckdb database" in str(exc).lower():
        return WarehouseError(f"warehouse {path} is not a DuckDB warehouse; give a .duckdb file or a new path")
    return WarehouseError(f"warehouse {path} cannot be opened: {exc}")


def no_progress_bar(con: duckdb.DuckDBPyConnection) -> None:
    """DuckDB's progress bar off; inside a Jupyter kernel without ipywidgets DuckDB refuses to change
    the setting at all (and shows no bar there), which is no reason to fail the call."""
    try:
        con.execute("SET enable_progress_bar = false")
    except duckdb.InvalidInputException as exc:
        if "ipywidgets" not in str(exc):
            raise


@contextmanager
def writer(
    path: str | Path | None = None, check_analytics: bool = True, refresh_lag_s: float = 0.0
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection, schema applied, the materialised analytics rebuilt if they were
    built by other definitions (`check_analytics`: `rebuild` does that itself) and the texts a
    lagging refresh left marked recomputed (`refresh_lag_s`: only if the last refresh is older);
    waits for another process's hold (see connect)."""
    path = Path(path or default_path())
    with _session_of(path):
        with _writer(path, check_analytics, refresh_lag_s) as con:
            yield con


def held_writer(path: str | Path) -> contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]:
    """A writer a long-lived holder enters in one thread and leaves in another (the viewer keeps one
    between a rater's answers and its idle watcher closes it): no per-thread session lock, which only
    its entering thread could release; the holder serialises its own use of the connection."""
    return _writer(Path(path), True, 0.0)


def _session_of(path: Path) -> threading.RLock:
    """This process's writer sessions on one file, one at a time (a thread's own nested ones
    pass): two threads' sessions are cursors of one DuckDB instance, and ran their analytics
    refreshes at once (`Warehouse.score` from two threads: a function registered twice, write
    conflicts on the analytics tables)."""
    key = path.resolve()
    with _writers_lock:
        return _sessions.setdefault(key, threading.RLock())


_sessions: dict[Path, threading.RLock] = {}
_tightened: set[Path] = set()


def corpus_files(path: Path) -> list[Path]:
    """The corpora's folders and normalised texts rubricflow keeps beside a warehouse (corpora/<id>/)."""
    folders = [f for f in (path.parent / "corpora").glob("*") if f.is_dir()]
    return folders + [f for folder in folders for f in folder.iterdir() if f.is_file()]


@contextmanager
def _writer(path: Path, check_analytics: bool, refresh_lag_s: float) -> Iterator[duckdb.DuckDBPyConnection]:
    new_folder = not path.parent.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    con = connect(path, read_only=False)
    wal = path.with_name(path.name + ".wal")  # DuckDB makes it under the umask: a folder made here is 0700
    owner_only(*([path.parent] if new_folder else []), path, wal)  # an existing file made looser, too
    if path not in _tightened:  # once a process: what rubricflow made beside it under an older umask
        _tightened.add(path)
        owner_only(*corpus_files(path))
    try:
        no_progress_bar(con)
        ensure_schema(con)
        if check_analytics:
            analytics.ensure_current(con, lag_s=refresh_lag_s)
        yield con
    finally:
        owner_only(wal)  # one left beside the file (a checkpoint normally removes it)
        con.close()
        _release_writer(path)


SCHEMA_FILES = ("001_schema.sql", "analytics_tables.sql", "views.sql")


def schema_sha() -> str:
    """sha256 of the files that define the warehouse's tables, views and macros."""
    return hashlib.sha256("".join(sql(name) for name in SCHEMA_FILES).encode()).hexdigest()


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Run the schema files on a writer's open, unless this file was last brought up to these very
    files (their hash in schema_state): replaying their DDL cost every open ~0.5 s, and a command or
    a test opens a writer many times. The hash is written last, so an open killed midway replays."""
    sha = schema_sha()
    row = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND table_name = 'schema_state'"
    ).fetchone()
    if row and row[0] and con.execute("SELECT definition_sha FROM schema_state").fetchall() == [(sha,)]:
        return
    con.execute(sql("001_schema.sql"))
    _drop_primary_keys(con)
    con.execute(sql("analytics_tables.sql"))
    con.execute(sql("views.sql"))
    with transaction(con):
        con.execute("DELETE FROM schema_state")
        con.execute("INSERT INTO schema_state VALUES ($sha)", {"sha": sha})


# Tables that had a primary key in warehouses made before #22 (001_schema.sql says why not now).
UNKEYED = ("completions", "judgments", "pattern_hits")


def _drop_primary_keys(con: duckdb.DuckDBPyConnection) -> None:
    """An older warehouse's tables in UNKEYED rebuilt without their primary key, rows unchanged:
    DuckDB cannot drop a key in place, so each is renamed, made again by the schema and refilled."""
    keyed = [
        name
        for (name,) in con.execute(
            "SELECT DISTINCT table_name FROM duckdb_constraints() WHERE database_name = current_database() "
            "AND constraint_type = 'PRIMARY KEY' AND list_contains($tables, table_name)",
            {"tables": list(UNKEYED)},
        ).fetchall()
    ]
    if not keyed:
        return
    with transaction(con):
        for name in keyed:
            con.execute(f"ALTER TABLE {name} RENAME TO {name}_keyed")
        con.execute(sql("001_schema.sql"))
        for name in keyed:
            con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM {name}_keyed")
            con.execute(f"DROP TABLE {name}_keyed")


@contextmanager
def reader(path: str | Path | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection: any statement that writes is refused by DuckDB itself. It waits for
    another thread's writer session in this process (DuckDB refuses a second instance of a file
    one of the process's instances has attached: "Unique file handle conflict")."""
    path = Path(path or default_path())
    if not path.exists():
        raise WarehouseError(f"no warehouse at {path}; run `rubricflow ingest` / `rubricflow score` first")
    with _session_of(path):
        con = connect(path, read_only=True)
        try:
            no_progress_bar(con)
            yield con
        finally:
            con.close()


class QueryRefused(CheckFailed):
    """User SQL that is not one read-only SELECT, or that failed to run."""


# User SQL runs on a connection that cannot read or write files, reach the network, or change its
# own settings: only the warehouse's tables and views are in reach.
SANDBOX_CONFIG = {"enable_external_access": False}


def check_select(statement: str) -> None:
    """One statement, and a SELECT (with or without CTEs); anything else is refused by type."""
    try:
        parsed = duckdb.extract_statements(statement)
    except duckdb.Error as exc:
        raise QueryRefused(f"query refused: {exc}") from None
    if len(parsed) != 1:
        raise QueryRefused(f"query refused: one statement at a time (read-only), found {len(parsed)}")
    kind = parsed[0].type
    if kind != duckdb.StatementType.SELECT:
        raise QueryRefused(
            f"query refused: only SELECT runs here (the warehouse is read-only to queries); this is {kind.name}"
        )


def read_only_query(path: str | Path, statement: str):
    """The result of one user SELECT as an Arrow table, on a sandboxed read-only connection that
    is closed before returning (so a writer waits for it at most as long as the query runs)."""
    check_select(statement)
    path = Path(path)
    if not path.exists():
        raise WarehouseError(f"no warehouse at {path}; run `rubricflow ingest` / `rubricflow score` first")
    con = connect(path, read_only=True, config=SANDBOX_CONFIG)
    try:
        no_progress_bar(con)
        con.execute("SET lock_configuration = true")  # from here on no SET can undo the sandbox
        relation = con.sql(statement)
        if repeated := sorted({c for c in relation.columns if relation.columns.count(c) > 1}):
            raise QueryRefused(
                f"query refused: columns {', '.join(map(repr, repeated))} appear twice; name each with AS"
            )
        return portable(relation).to_arrow_table()
    except duckdb.Error as exc:
        raise QueryRefused(f"query refused: {exc}") from None
    finally:
        con.close()


# Types that leave DuckDB as Arrow types polars, CSV or JSON writers cannot take: sent as text.
UNPORTABLE_TYPES = re.compile(r"\b(INTERVAL|UNION|BLOB|VARIANT|BIT|UUID|U?HUGEINT|ENUM|GEOMETRY|WITH TIME ZONE)\b")


def portable(relation: duckdb.DuckDBPyRelation) -> duckdb.DuckDBPyRelation:
    """The relation with every column of an unportable type (or holding one) cast to VARCHAR, which
    DuckDB writes the way it prints it; columns taken by position, so duplicate names are no matter."""
    casts = []
    for position, (name, kind) in enumerate(zip(relation.columns, relation.types, strict=True), start=1):
        bare = re.sub(r"'(?:[^']|'')*'", "''", str(kind))  # an ENUM's values are not types
        alias = '"' + name.replace('"', '""') + '"'
        casts.append(
            f"CAST(#{position} AS VARCHAR) AS {alias}" if UNPORTABLE_TYPES.search(bare) else f"#{position} AS {alias}"
        )
    return relation.project(", ".join(casts))


def scale_geometry(scale) -> tuple[float | None, float | None, float | None]:
    """(native min, native max, one step in unit terms) of a scale, for agreement statistics."""
    if scale.kind == "binary":
        return 0.0, 1.0, 1.0
    if scale.kind == "ordinal":
        return float(scale.low), float(scale.high), 1.0 / (scale.high - scale.low)
    if scale.kind == "numeric":
        return scale.min, scale.max, (scale.step or 1.0) / (scale.max - scale.min)
    return None, None, None


def register_rubric(con: duckdb.DuckDBPyConnection, bundle: Bundle, source: str = "") -> None:
    """Store a compiled rubric and its tree once; a hash already present is left as it is."""
    h = bundle.hash
    if con.execute("SELECT 1 FROM rubrics WHERE rubric_hash = ?", [h]).fetchall():
        return
    r = bundle.rubric
    with transaction(con):
        con.execute(
            "INSERT INTO rubrics (rubric_hash, rubric_id, version, title, profile, method, is_flat, invert, pass_threshold, "
            "essential_minimum, disqualified_label, source, document, registered_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, current_timestamp)",
            _rubric_row(bundle, source),
        )
        con.executemany(
            "INSERT INTO rubric_nodes (rubric_hash, node_id, parent_id, is_leaf, aggregation, weight) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            _node_rows(h, r),
        )
        con.executemany(
            "INSERT INTO criteria (rubric_hash, criterion_id, title, description, scale_kind, weight, importance, "
            "pass_threshold, points, genre, scale_min, scale_max, unit_step) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            _criterion_rows(h, r),
        )
        if r.patterns:
            refused = re2_errors([p.effective_regex() for p in r.patterns])
            con.executemany(
                "INSERT INTO rubric_patterns (rubric_hash, pattern_id, regex, engine) VALUES (?, ?, ?, ?)",
                [
                    (h, p.id, p.effective_regex(), "regex" if refused[p.effective_regex()] else "re2")
                    for p in r.patterns
                ],
            )
        if r.disqualifiers:
            con.executemany(
                "INSERT INTO rubric_disqualifiers (rubric_hash, disqualifier_id, kind, patterns, criterion_id, threshold, "
                "description) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(h, d.id, d.kind, list(d.patterns), d.criterion, d.threshold, d.description) for d in r.disqualifiers],
            )
        if r.decision_labels():  # the rubric's, or seed 001's defaults where its surface asks
            con.executemany(
                "INSERT INTO rubric_labels (rubric_hash, label, min_score) VALUES (?, ?, ?)",
                [(h, lab.label, lab.min) for lab in r.decision_labels()],
            )
        run_sql(con, "mark_labelled_texts.sql", rubric=h)
        analytics.refresh(con)


def _rubric_row(bundle: Bundle, source: str) -> list:
    r, s = bundle.rubric, bundle.rubric.scoring
    return [
        bundle.hash,
        r.metadata.id,
        r.metadata.version,
        r.metadata.title,
        bundle.profile,
        s.method,
        not r.groups,
        s.invert,
        s.pass_threshold,
        s.essential_minimum,
        s.disqualified_label,
        source,
        json.dumps(rubric_document(r), ensure_ascii=False),
    ]


def _node_rows(h: str, r: Rubric) -> list[tuple[str, str, str | None, bool, str | None, float]]:
    """The rubric's tree: criteria (leaves) and groups, under one ROOT_NODE unless a group is the root."""
    parent = {child: g.id for g in r.groups for child in g.children}
    root = r.scoring.root
    top_parent = None if root else ROOT_NODE
    nodes: list[tuple[str, str, str | None, bool, str | None, float]] = [
        (h, c.id, parent.get(c.id, top_parent), True, None, c.weight) for c in r.criteria
    ]
    nodes += [
        (h, g.id, parent.get(g.id, None if g.id == root else top_parent), False, g.aggregation, g.weight)
        for g in r.groups
    ]
    if not root:
        nodes.append((h, ROOT_NODE, None, False, r.scoring.method, 1.0))
    return nodes


def _criterion_rows(h: str, r: Rubric) -> list[tuple]:
    return [
        (
            h,
            c.id,
            c.title,
            c.description,
            c.scale.kind,
            c.weight,
            c.importance,
            c.pass_threshold if c.pass_threshold is not None else DEFAULT_PASS,
            c.points,
            list(c.genre),
            *scale_geometry(c.scale),
        )
        for c in r.criteria
    ]
