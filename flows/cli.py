"""The `rubricflow` command: ingest, score, runs, show, query, judge-server, demo, and `rubric ...`."""

from __future__ import annotations

import os

# Set before Prefect is imported: no telemetry (there is no network here), a patient ephemeral server.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Optional  # noqa: E402

import duckdb  # noqa: E402
import typer  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn  # noqa: E402
from rich.table import Table  # noqa: E402

from rubrics.cli import app as rubric_app  # noqa: E402
from tasks.judge_server import TRANSIENT_FAULTS  # noqa: E402
from warehouse import db  # noqa: E402

app = typer.Typer(help="rubricflow: rubric-driven LLM judging of large text corpora.", no_args_is_help=True)
app.add_typer(rubric_app, name="rubric")
out = Console()
err = Console(stderr=True)

WarehouseOpt = typer.Option(None, "--warehouse", "-w", help="DuckDB file (default: $RUBRICFLOW_WAREHOUSE or warehouse/rubricflow.duckdb).")
SAMPLE_CORPUS = Path(__file__).parent / "samples" / "demo_corpus.jsonl"
DEMO_RUBRICS = ("llm-slop", "writing-quality")


def fail(message: str, code: int = 2) -> None:
    err.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def _warehouse(path: Optional[Path]) -> Path:
    return Path(path) if path else db.default_path()


# --------------------------------------------------------------------------- ingest


@app.command()
def ingest(source: Path = typer.Argument(..., help="JSONL, CSV, Parquet, or a folder of .txt/.md files."),
           corpus: Optional[str] = typer.Option(None, "--corpus", "-c", help="Corpus id (default: from the file name)."),
           text_field: Optional[str] = typer.Option(None, help="Column holding the text (default: text/output/completion/response/content)."),
           max_chars: int = typer.Option(1_000_000, help="Rows with longer texts are quarantined."),
           allow_quarantine: bool = typer.Option(False, help="Exit 0 even when rows were quarantined."),
           warehouse: Optional[Path] = WarehouseOpt) -> None:
    """Load a corpus into normalised Parquet and the warehouse; bad rows go to a quarantine file.
    Exits 1 when any row was quarantined (the good rows are loaded all the same)."""
    from flows.ingest import ingest_flow
    from tasks.ingest import CorpusError

    if not source.exists():
        fail(f"{source}: no such file or folder")
    try:
        report = ingest_flow(str(source), str(_warehouse(warehouse)), corpus, text_field, max_chars)
    except (CorpusError, db.WarehouseError) as exc:
        fail(str(exc))
    _print_ingest(report)
    if report["rows_quarantined"] and not allow_quarantine:
        fail(f"{report['rows_quarantined']} rows of {source} were quarantined (the other rows are loaded); "
             "fix them or pass --allow-quarantine", code=1)


def _print_ingest(report: dict) -> None:
    out.print(f"corpus [bold]{report['corpus_id']}[/]: {report['rows_ok']} texts loaded, "
              f"{report['rows_quarantined']} rows quarantined, {report['duplicates_identical']} identical duplicates skipped")
    if report["rows_quarantined"]:
        reasons = ", ".join(f"{k}: {v}" for k, v in report["reasons"].items())
        out.print(f"  quarantine: {report['quarantine']} ({reasons})")
        with open(report["quarantine"], encoding="utf-8") as fh:
            for line in list(fh)[:5]:
                row = json.loads(line)
                err.print(f"  {row['source']}: row {row['row']}: {row['reason']}", highlight=False, markup=False)


# --------------------------------------------------------------------------- score


@app.command()
def score(corpus: str = typer.Option(..., "--corpus", "-c", help="Corpus id (see `rubricflow ingest`)."),
          rubric: list[str] = typer.Option(..., "--rubric", "-r", help="Rubric file or library name (repeatable)."),
          model: Optional[str] = typer.Option(None, help="Judge model (default: the offline stand-in)."),
          base_url: Optional[str] = typer.Option(None, help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)."),
          strategy: str = typer.Option("holistic", help="per_criterion, grouped or holistic."),
          samples: int = typer.Option(1, help="Judgments per cell (repeat sampling)."),
          temperature: float = typer.Option(0.0),
          seed: Optional[int] = typer.Option(None),
          max_tokens: int = typer.Option(1024),
          rpm: Optional[float] = typer.Option(None, help="Requests per minute limit."),
          tpm: Optional[float] = typer.Option(None, help="Tokens per minute limit (estimated from the prompt)."),
          max_in_flight: int = typer.Option(64, help="Calls in flight at once."),
          timeout: float = typer.Option(60.0, help="Seconds per call before it counts as timed out."),
          shard_size: int = typer.Option(2000, help="Cells per Prefect task."),
          skip_disqualified: bool = typer.Option(False, help="Skip texts a pattern disqualifier already fails."),
          warehouse: Optional[Path] = WarehouseOpt) -> None:
    """Judge a corpus with one or more rubrics; landed cells are reused (re-running costs nothing)."""
    judge = {"strategy": strategy, "samples": samples, "temperature": temperature, "seed": seed,
             "max_tokens": max_tokens, "rpm": rpm, "tpm": tpm, "max_in_flight": max_in_flight, "timeout_s": timeout}
    if model:
        judge["model"] = model
    if base_url:
        judge["base_url"] = base_url
    elif not model and not os.environ.get("OPENAI_BASE_URL"):
        fail("no judge endpoint: pass --base-url (or set OPENAI_BASE_URL), or run `rubricflow judge-server` "
             "and point --base-url at it, or try `rubricflow demo`")
    for ref in rubric:
        summary = run_score(corpus, ref, _warehouse(warehouse), judge, shard_size, skip_disqualified)
        print_run(_warehouse(warehouse), summary["run_id"])


def run_score(corpus: str, rubric: str, warehouse: Path, judge: dict, shard_size: int = 2000,
              skip_disqualified: bool = False) -> dict:
    """Run the scoring flow with a live progress bar: calls/s, tokens, errors, ETA."""
    from flows import score as score_module
    from rubrics.compiler import RubricCompileError
    from rubrics.formats import RubricImportError
    from rubrics.library import LibraryError

    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[rate]:>6.1f} calls/s  {task.fields[tokens]:>9,} tokens  "
                                   "{task.fields[errors]} errors"), TimeElapsedColumn(), TextColumn("ETA"),
                        TimeRemainingColumn(), console=err, transient=False)
    state = {"task": None, "tokens": 0, "errors": 0, "calls": 0, "t0": time.monotonic()}

    def hook(event: str, payload) -> None:
        if event == "plan":
            state["task"] = progress.add_task(f"{rubric}", total=payload["cells"], rate=0.0, tokens=0, errors=0)
            state["t0"] = time.monotonic()
        elif event == "cell" and state["task"] is not None:
            state["calls"] += payload["attempts"]
            state["tokens"] += (payload["prompt_tokens"] or 0) + (payload["completion_tokens"] or 0)
            state["errors"] += payload["status"] != "ok"
            rate = state["calls"] / max(1e-6, time.monotonic() - state["t0"])
            progress.update(state["task"], advance=1, rate=rate, tokens=state["tokens"], errors=state["errors"])

    score_module.progress_hook = hook
    try:
        with progress:
            return score_module.score_corpus(corpus, rubric, str(warehouse), judge, shard_size, skip_disqualified)
    except (RubricImportError, LibraryError, RubricCompileError, db.WarehouseError, ValueError) as exc:
        fail(str(exc))
        raise
    finally:
        score_module.progress_hook = None


def print_run(warehouse: Path, run_id: str) -> None:
    with db.reader(warehouse) as con:
        r = con.execute("SELECT * FROM run_summary WHERE run_id = ?", [run_id]).fetchall()[0]
        cols = [d[0] for d in con.description]
        run = dict(zip(cols, r))
        rubric_id = con.execute("SELECT rubric_id, version FROM rubrics WHERE rubric_hash = ?", [run["rubric_hash"]]).fetchall()[0]
        out.print(f"\n[bold]run {run_id}[/]  rubric {rubric_id[0]} v{rubric_id[1]} ({run['rubric_hash'][:12]})  "
                  f"model {run['model']}  status {run['status']}")
        out.print(f"cells: {run['planned_cells']} planned, {run['skipped_cells']} reused from earlier runs, "
                  f"{run['landed_cells']} judged now ({run['ok_cells']} ok, {run['failed_cells']} failed"
                  f"{'; ' + run['errors'] if run['errors'] else ''}); calls {run['calls']} (retries {run['retries']}); "
                  f"tokens {run['prompt_tokens'] + run['completion_tokens']:,}; coverage {run['coverage'] or 0:.0%}")
        key = [run["corpus_id"], run["rubric_hash"], run["judge_hash"]]
        _table(con, "labels", """
            SELECT coalesce(label, '(no label)') AS label, count(*) AS texts, round(avg(score), 3) AS mean_score,
                   count(*) FILTER (WHERE passed) AS passed, round(avg(coverage), 3) AS coverage
            FROM text_scores WHERE corpus_id = ? AND rubric_hash = ? AND judge_hash = ?
            GROUP BY ALL ORDER BY mean_score DESC NULLS LAST""", key)
        _table(con, "criteria", """
            SELECT criterion_id, round(avg(unit_score), 3) AS mean_unit_score, sum(scored) AS scored,
                   sum(judgments) - sum(scored) AS unscored, count(*) FILTER (WHERE passed) AS texts_passing
            FROM criterion_scores WHERE corpus_id = ? AND rubric_hash = ? AND judge_hash = ?
            GROUP BY ALL ORDER BY criterion_id""", key)
        _table(con, "disqualifiers", """
            SELECT disqualifier_id, kind, count(DISTINCT text_id) AS texts
            FROM disqualifier_hits WHERE corpus_id = ? AND rubric_hash = ? AND judge_hash = ?
            GROUP BY ALL ORDER BY texts DESC""", key)
        _table(con, "top pattern hits", """
            SELECT pattern_id, texts_hit, total_hits, round(hit_rate, 3) AS hit_rate
            FROM pattern_summary WHERE corpus_id = ? AND rubric_hash = ? AND texts_hit > 0
            ORDER BY texts_hit DESC LIMIT 8""", key[:2])


def _table(con: duckdb.DuckDBPyConnection, title: str, query: str, params: list) -> None:
    rows = con.execute(query, params).fetchall()
    if not rows:
        return
    table = Table(title=title, title_justify="left")
    for d in con.description:
        table.add_column(d[0])
    for row in rows:
        table.add_row(*["" if v is None else str(v) for v in row])
    out.print(table)


# --------------------------------------------------------------------------- reading the warehouse


@app.command()
def runs(warehouse: Optional[Path] = WarehouseOpt, limit: int = typer.Option(20)) -> None:
    """Recent runs with their counts, tokens and coverage."""
    with _reading(warehouse) as con:
        _table(con, "runs", """
            SELECT s.run_id, s.corpus_id, r.rubric_id || ' v' || r.version AS rubric, s.model, s.status,
                   s.planned_cells AS planned, s.skipped_cells AS reused, s.landed_cells AS judged,
                   s.failed_cells AS failed, s.calls, s.prompt_tokens + s.completion_tokens AS tokens,
                   round(s.coverage, 3) AS coverage, round(s.wall_s, 1) AS wall_s
            FROM run_summary s JOIN rubrics r USING (rubric_hash)
            ORDER BY s.started_at DESC LIMIT ?""", [limit])


@app.command()
def show(text_id: str, corpus: Optional[str] = typer.Option(None, "--corpus", "-c"),
         warehouse: Optional[Path] = WarehouseOpt) -> None:
    """One text: its scores under every rubric, and each criterion's judgment and rationale."""
    with _reading(warehouse) as con:
        where, params = "text_id = ?", [text_id]
        if corpus:
            where, params = where + " AND corpus_id = ?", params + [corpus]
        texts = con.execute(f"SELECT corpus_id, text, genre FROM texts WHERE {where}", params).fetchall()
        if not texts:
            fail(f"no text {text_id!r}" + (f" in corpus {corpus!r}" if corpus else ""), code=1)
        for corpus_id, text, genre in texts:
            out.print(f"[bold]{corpus_id}/{text_id}[/]" + (f" (genre {genre})" if genre else ""))
            out.print(text if len(text) < 1200 else text[:1200] + " ...", markup=False, highlight=False)
            _table(con, "scores", """
                SELECT rubric_id, version, left(judge_hash, 8) AS judge, round(score, 3) AS score, label, passed,
                       disqualifiers, round(coverage, 3) AS coverage
                FROM text_scores WHERE corpus_id = ? AND text_id = ?""", [corpus_id, text_id])
            _table(con, "judgments", """
                SELECT r.rubric_id, j.criterion_id, j.sample, j.value, round(j.unit_score, 3) AS unit, j.status,
                       coalesce(j.reason, j.rationale) AS rationale_or_reason
                FROM judgments j JOIN rubrics r USING (rubric_hash)
                WHERE j.corpus_id = ? AND j.text_id = ? ORDER BY r.rubric_id, j.criterion_id, j.sample""",
                   [corpus_id, text_id])


@app.command()
def query(sql_text: str = typer.Argument(..., metavar="SQL"),
          format: str = typer.Option("table", "--format", "-f", help="table, csv, json or parquet."),
          output: Optional[Path] = typer.Option(None, "--out", "-o", help="File to write (required for parquet)."),
          warehouse: Optional[Path] = WarehouseOpt) -> None:
    """Run read-only SQL against the warehouse (statements that write are refused)."""
    import polars as pl

    if format not in ("table", "csv", "json", "parquet"):
        fail(f"unknown format {format!r}; use table, csv, json or parquet")
    if format == "parquet" and output is None:
        fail("--format parquet needs --out FILE")
    with _reading(warehouse) as con:
        try:
            result = con.sql(sql_text)
        except duckdb.Error as exc:
            fail(f"query refused: {exc}", code=1)
        if result is None:
            fail("the statement returned no rows (only queries that read are allowed)", code=1)
        frame = pl.from_arrow(result.to_arrow_table())
    if format == "table":
        table = Table(show_lines=False)
        for name in frame.columns:
            table.add_column(name)
        for row in frame.head(1000).iter_rows():
            table.add_row(*["" if v is None else str(v) for v in row])
        out.print(table)
        if frame.height > 1000:
            err.print(f"({frame.height} rows; first 1000 shown: use --format csv for all)")
        return
    target = output or sys.stdout
    if format == "csv":
        frame.write_csv(target)
    elif format == "json":
        frame.write_ndjson(target)
    else:
        frame.write_parquet(output)
    if output:
        err.print(f"wrote {frame.height} rows to {output}")


def _reading(warehouse: Optional[Path]):
    try:
        return db.reader(_warehouse(warehouse))
    except db.WarehouseError as exc:
        fail(str(exc))
        raise


# --------------------------------------------------------------------------- labels and calibration


@app.command("labels")
def labels_import(path: Path = typer.Argument(..., help="CSV, JSONL or Parquet with text_id, criterion, score, rater."),
                  corpus: str = typer.Option(..., "--corpus", "-c"),
                  warehouse: Optional[Path] = WarehouseOpt) -> None:
    """Import human (or another judge's) labels into the warehouse."""
    from tasks.labels import LabelError, read_labels
    from warehouse import steps

    try:
        frame = read_labels(path)
        with db.writer(_warehouse(warehouse)) as con:
            n = steps.load_labels(con, corpus, frame, str(path))
    except (LabelError, db.WarehouseError) as exc:
        fail(str(exc))
    raters = ", ".join(sorted(set(frame["rater"].to_list())))
    out.print(f"{n} labels for corpus {corpus} from {path} (raters: {raters})")


@app.command()
def calibrate(corpus: str = typer.Option("topical-chat", "--corpus", "-c"),
              judge: str = typer.Option("unieval", help="Rater whose scores are checked."),
              human: str = typer.Option("human", help="Reference rater."),
              topical_chat: Optional[Path] = typer.Option(None, help="Import the Topical-Chat release from this folder first."),
              warehouse: Optional[Path] = WarehouseOpt) -> None:
    """Sample-level agreement between a judge's and humans' scores: Pearson, Spearman, Kendall tau-b."""
    from tasks.agreement import correlations
    from tasks.labels import topical_chat as read_topical_chat
    from warehouse import steps

    path = _warehouse(warehouse)
    if topical_chat is not None:
        if not (topical_chat / "judge_predictions.json").is_file():
            fail(f"{topical_chat}: no judge_predictions.json (expected the Topical-Chat release)")
        texts, labels = read_topical_chat(topical_chat)
        with db.writer(path) as con:
            steps.load_texts(con, corpus, texts, str(topical_chat))
            steps.load_labels(con, corpus, labels, str(topical_chat))
    with _reading(path) as con:
        pairs = con.execute(db.sql("label_pairs.sql"), {"corpus": corpus, "a": judge, "b": human}).fetchall()
    if not pairs:
        fail(f"no texts of corpus {corpus!r} scored by both {judge!r} and {human!r}", code=1)
    table = Table(title=f"{judge} vs {human} on {corpus} (sample level, pooled)", title_justify="left")
    for col in ("criterion", "n", "Pearson", "Spearman", "Kendall tau-b"):
        table.add_column(col, justify="right" if col != "criterion" else "left")
    for c in correlations(pairs):
        table.add_row(c.criterion_id, str(c.n), f"{c.pearson:.6f}", f"{c.spearman:.6f}", f"{c.kendall_tau_b:.6f}")
    out.print(table)


# --------------------------------------------------------------------------- the offline judge and the demo


@app.command("judge-server")
def judge_server(port: int = typer.Option(8765, help="Port on 127.0.0.1 (0: any free port)."),
                 latency_ms: float = typer.Option(0.0, help="Added latency per answer."),
                 rpm: Optional[float] = typer.Option(None, help="Enforce this requests/min limit with 429s."),
                 no_retry_after: bool = typer.Option(False, help="Send 429s without a Retry-After header."),
                 fault_rate: float = typer.Option(0.0, help="Share of requests that get an injected fault."),
                 faults: str = typer.Option(",".join(TRANSIENT_FAULTS), help="Which faults to inject (comma-separated)."),
                 fault_attempts: int = typer.Option(1, help="How many attempts of a faulty request fail."),
                 stall_s: float = typer.Option(3.0, help="How long a `timeout` fault stalls."),
                 supports: str = typer.Option("json_schema", help="Richest output mode accepted: json_schema, tools or text.")) -> None:
    """Serve the OFFLINE judge: a deterministic, model-free stand-in (pattern hits and text statistics)."""
    from tasks.judge_server import FAULTS, JudgeServer, ServerConfig, bind, make_server

    chosen = tuple(f.strip() for f in faults.split(",") if f.strip())
    unknown = [f for f in chosen if f not in FAULTS]
    if unknown:
        fail(f"unknown faults {unknown}; choose from {', '.join(FAULTS)}")
    config = ServerConfig(latency_ms=latency_ms, rpm=rpm, retry_after=not no_retry_after, fault_rate=fault_rate,
                          faults=chosen, fault_attempts=fault_attempts, stall_s=stall_s, supports=supports)
    try:
        sock = bind(port=port)
    except OSError as exc:
        fail(f"cannot listen on 127.0.0.1:{port}: {exc}")
    print(f"rubricflow offline judge (a deterministic stand-in, not a model) listening on "
          f"http://127.0.0.1:{sock.getsockname()[1]}/v1", flush=True)
    make_server(JudgeServer(config)).run(sockets=[sock])


@app.command()
def demo(warehouse: Path = typer.Option(Path("warehouse") / "demo.duckdb", "--warehouse", "-w"),
         fresh: bool = typer.Option(True, help="Start from an empty demo warehouse.")) -> None:
    """The whole job offline: start the offline judge, ingest the sample corpus, score it with two
    built-in rubrics, and print summary tables read from the warehouse."""
    import shutil

    from flows.ingest import ingest_flow
    from tasks.judge_server import RunningServer

    if fresh:
        for leftover in (warehouse, warehouse.with_name(warehouse.name + ".wal")):
            leftover.unlink(missing_ok=True)
        shutil.rmtree(warehouse.parent / "runs", ignore_errors=True)
    out.print("[bold]rubricflow demo[/]: judging with the OFFLINE judge, a deterministic stand-in (no model, no network)")
    with RunningServer() as server:
        out.print(f"offline judge on {server.base_url}")
        report = ingest_flow(str(SAMPLE_CORPUS), str(warehouse), "demo")
        _print_ingest(report)
        for rubric in DEMO_RUBRICS:
            summary = run_score("demo", rubric, warehouse, {"base_url": server.base_url})
            print_run(warehouse, summary["run_id"])
    out.print(f"\nwarehouse: {warehouse}   try: rubricflow query -w {warehouse} \"SELECT * FROM text_scores LIMIT 5\"")


@app.callback()
def _root() -> None:
    """rubricflow: rubric-driven LLM judging of large text corpora."""


def main() -> None:
    app()
