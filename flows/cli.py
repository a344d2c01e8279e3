"""The `rubricflow` command: ingest, score, runs, show, query, judge-server, demo, and `rubric ...`."""

from __future__ import annotations

import os

# Set before Prefect is imported: no telemetry (there is no network here), a patient ephemeral server.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

import json  # noqa: E402
from contextlib import contextmanager  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Optional  # noqa: E402

import duckdb  # noqa: E402
import typer  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn  # noqa: E402
from rich.table import Table  # noqa: E402

from flows.artifacts import show as show_value  # noqa: E402
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
          budget: Optional[float] = typer.Option(None, help="Stop before spending more than this many USD (per rubric run)."),
          prices: Optional[Path] = typer.Option(None, help="Price table YAML (default: built-in, or $RUBRICFLOW_PRICES)."),
          workers: int = typer.Option(0, help="Spread shards over this many local Dask worker processes (>= 2)."),
          batch: bool = typer.Option(False, "--batch", help="Judge through the Batch API (half price, within 24 h)."),
          batch_poll: float = typer.Option(30.0, help="Seconds between polls of a batch."),
          warehouse: Optional[Path] = WarehouseOpt) -> None:
    """Judge a corpus with one or more rubrics; landed cells are reused (re-running costs nothing).
    The cost estimate is printed before any call."""
    judge = {"strategy": strategy, "samples": samples, "temperature": temperature, "seed": seed,
             "max_tokens": max_tokens, "rpm": rpm, "tpm": tpm, "max_in_flight": max_in_flight, "timeout_s": timeout,
             "budget_usd": budget, "prices": str(prices) if prices else None, "batch": batch, "batch_poll_s": batch_poll}
    if model:
        judge["model"] = model
    if base_url:
        judge["base_url"] = base_url
    elif not model and not os.environ.get("OPENAI_BASE_URL"):
        fail("no judge endpoint: pass --base-url (or set OPENAI_BASE_URL), or run `rubricflow judge-server` "
             "and point --base-url at it, or try `rubricflow demo`")
    for ref in rubric:
        summary = run_score(corpus, ref, _warehouse(warehouse), judge, shard_size, skip_disqualified, workers)
        print_run(_warehouse(warehouse), summary["run_id"])


@app.command()
def compare(corpus: str = typer.Option(..., "--corpus", "-c", help="Corpus id."),
            a: str = typer.Option(..., "--a", help="Side A: rubric file or library name, or (with --no-score) id, id@version or hash prefix."),
            b: Optional[str] = typer.Option(None, "--b", help="Side B (default: the same rubric as A, e.g. with another --model-b)."),
            model: Optional[str] = typer.Option(None, help="Judge model for both sides."),
            model_a: Optional[str] = typer.Option(None, help="Judge model for side A."),
            model_b: Optional[str] = typer.Option(None, help="Judge model for side B."),
            base_url: Optional[str] = typer.Option(None, help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)."),
            strategy: str = typer.Option("holistic", help="per_criterion, grouped or holistic."),
            samples: int = typer.Option(1, help="Judgments per cell."),
            no_score: bool = typer.Option(False, "--no-score", help="Compare landed judgments only; judge nothing."),
            allow_mixed: bool = typer.Option(False, help="Allow a side to span several rubric versions or judges."),
            top: int = typer.Option(10, help="How many of the texts that moved most to list."),
            json_out: Optional[Path] = typer.Option(None, "--json", help="Also write every statistic as JSON here."),
            report: Optional[Path] = typer.Option(None, help="Also write the HTML report here."),
            warehouse: Optional[Path] = WarehouseOpt) -> None:
    """A/B two rubric versions (or two judges) on one corpus: judges only the missing cells, then
    prints score deltas with a bootstrap interval, correlations, per-criterion agreement, flips,
    McNemar, disqualifier/pattern rate changes and the texts that moved most."""
    from flows.compare import compare_flow

    judges = []
    for side_model in (model_a or model, model_b or model):
        judge = {"strategy": strategy, "samples": samples}
        if side_model:
            judge["model"] = side_model
        if base_url:
            judge["base_url"] = base_url
        judges.append(judge)
    if not no_score and not base_url and not os.environ.get("OPENAI_BASE_URL") and not (model_a or model_b or model):
        fail("no judge endpoint: pass --base-url (or set OPENAI_BASE_URL), or --no-score to compare landed judgments")
    with scoring_progress():
        result = compare_flow(corpus, a, b or a, str(_warehouse(warehouse)), judges[0], judges[1],
                              score=not no_score, allow_mixed=allow_mixed, top=top)
    print_comparison(result)
    if json_out:
        json_out.write_text(result.to_json(), encoding="utf-8")
        err.print(f"wrote {json_out}")
    if report:
        from flows.report import comparison_report
        _write_report(report, comparison_report(result))


def print_comparison(c) -> None:
    s = c.summary
    ci = s["mean_delta_ci"]
    out.print(f"\n[bold]A/B on {c.corpus}[/]: A = {c.rubric_a} ({c.a[0][0][:12]}, judge {c.a[0][1][:8]})  "
              f"B = {c.rubric_b} ({c.b[0][0][:12]}, judge {c.b[0][1][:8]})")
    out.print(f"texts paired {s['texts_paired']} of {s['texts_both_sides']}; mean A {show_value(s['mean_a'])}, "
              f"B {show_value(s['mean_b'])}; delta B-A {show_value(s['mean_delta'])} "
              f"(95% paired bootstrap {show_value(ci) if ci else 'n/a'})")
    out.print(f"Pearson {show_value(s['pearson'])}  Spearman {show_value(s['spearman'])}  "
              f"Kendall tau-b {show_value(s['kendall_tau_b'])}; "
              f"pass->fail {s['pass_to_fail']}, fail->pass {s['fail_to_pass']}, label changes {s['label_changes']}; "
              f"disqualified A {show_value(s['dq_rate_a'])} -> B {show_value(s['dq_rate_b'])}")
    if c.added_criteria or c.removed_criteria:
        out.print(f"criteria only in B: {', '.join(c.added_criteria) or '-'}; only in A: {', '.join(c.removed_criteria) or '-'}")
    print_rows("criteria (matched by id; * = wording changed between versions)", [
        {"criterion": r["criterion_id"] + (" *" if r["changed"] else ""), "n": r["n"], "delta": r["mean_delta"],
         "95% CI": r["mean_delta_ci"], "exact": r["exact_agreement"], "within one": r["within_one"], "QWK": r["qwk"],
         "pass->fail": r["pass_to_fail"], "fail->pass": r["fail_to_pass"], "McNemar p": r["mcnemar_p"]}
        for r in c.criteria])
    print_rows("label flips (A -> B)", c.flips)
    print_rows("disqualifier and pattern rates", c.rates)
    print_rows("texts that moved most", [
        {**{k: r[k] for k in ("text_id", "score_a", "score_b", "delta")},
         "why A": _clip(r["rationale_a"]), "why B": _clip(r["rationale_b"])} for r in c.movers])


def _clip(text: str | None, n: int = 160) -> str:
    return "" if text is None else text if len(text) <= n else text[: n - 3] + "..."


def run_score(corpus: str, rubric: str, warehouse: Path, judge: dict, shard_size: int = 2000,
              skip_disqualified: bool = False, workers: int = 0) -> dict:
    """Run the scoring flow with a live progress bar: calls/s, tokens, errors, ETA."""
    from flows.score import scoring_flow

    with scoring_progress():
        return scoring_flow(workers)(corpus, rubric, str(warehouse), judge, shard_size, skip_disqualified,
                                     workers=workers)


@contextmanager
def scoring_progress():
    """A progress bar per scoring run started inside (calls/s, tokens, errors, ETA); the errors a
    user can fix (a bad rubric, a locked warehouse, a missing corpus) end the command cleanly."""
    from flows import score as score_module
    from rubrics.compiler import RubricCompileError
    from rubrics.formats import RubricImportError
    from rubrics.library import LibraryError
    from tasks.compare import CompareError
    from tasks.costs import PriceError

    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[rate]:>6.1f} calls/s  {task.fields[tokens]:>9,} tokens  "
                                   "{task.fields[errors]} errors"), TimeElapsedColumn(), TextColumn("ETA"),
                        TimeRemainingColumn(), console=err, transient=False)
    state = {"task": None, "tokens": 0, "errors": 0, "calls": 0, "t0": time.monotonic()}

    def hook(event: str, payload) -> None:
        if event == "estimate":
            line = payload["estimate"].describe(payload["model"])
            if payload["budget"] is not None:
                line += f"; budget ${payload['budget']:,.4f}"
                if payload["estimate"].usd is not None and payload["estimate"].usd > payload["budget"]:
                    line += " (the estimate exceeds it: the run stops when the budget is spent)"
            err.print(line, highlight=False, markup=False)
        elif event == "shard" and state["task"] is not None:  # shards judged in other processes
            progress.update(state["task"], advance=payload.cells)
        elif event == "plan":
            state.update(tokens=0, errors=0, calls=0, t0=time.monotonic())
            state["task"] = progress.add_task(payload["rubric"], total=payload["cells"], rate=0.0, tokens=0, errors=0)
        elif event == "cell" and state["task"] is not None:
            state["calls"] += payload["attempts"]
            state["tokens"] += (payload["prompt_tokens"] or 0) + (payload["completion_tokens"] or 0)
            state["errors"] += payload["status"] != "ok"
            rate = state["calls"] / max(1e-6, time.monotonic() - state["t0"])
            progress.update(state["task"], advance=1, rate=rate, tokens=state["tokens"], errors=state["errors"])

    score_module.progress_hook = hook
    try:
        with progress:
            yield
    except (RubricImportError, LibraryError, RubricCompileError, db.WarehouseError, CompareError, PriceError,
            ValueError) as exc:
        fail(str(exc))
    finally:
        score_module.progress_hook = None


def print_run(warehouse: Path, run_id: str) -> None:
    with db.reader(warehouse) as con:
        run = db.fetch(con, "run_report.sql", run=run_id)[0]
        out.print(f"\n[bold]run {run_id}[/]  rubric {run['rubric']} ({run['rubric_hash'][:12]})  "
                  f"model {run['model']}  status {run['status']}")
        out.print(f"cells: {run['planned_cells']} planned, {run['skipped_cells']} reused from earlier runs, "
                  f"{run['landed_cells']} judged now ({run['ok_cells']} ok, {run['failed_cells']} failed"
                  f"{'; ' + run['errors'] if run['errors'] else ''}); calls {run['calls']} (retries {run['retries']}); "
                  f"tokens {run['prompt_tokens'] + run['completion_tokens']:,}; coverage {run['coverage'] or 0:.0%}")
        print_rows("labels", db.fetch(con, "run_labels.sql", run=run_id))
        criteria = db.fetch(con, "run_criteria.sql", run=run_id)
        if all(r["flip_rate"] is None for r in criteria):  # one sample per cell: no consistency to show
            criteria = [{k: v for k, v in r.items() if k not in ("sample_stddev", "flip_rate")} for r in criteria]
        print_rows("criteria", criteria)
        print_rows("disqualifiers", db.fetch(con, "run_disqualifiers.sql", run=run_id))
        print_rows("top pattern hits", db.fetch(con, "run_patterns.sql", run=run_id))


def print_rows(title: str, rows: list[dict]) -> None:
    if not rows:
        return
    table = Table(title=title, title_justify="left")
    for name in rows[0]:
        table.add_column(name)
    for row in rows:
        table.add_row(*[show_value(v) for v in row.values()])
    out.print(table)


def _table(con: duckdb.DuckDBPyConnection, title: str, query: str, params: list) -> None:
    cursor = con.execute(query, params)
    columns = [d[0] for d in cursor.description]
    print_rows(title, [dict(zip(columns, row)) for row in cursor.fetchall()])


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
              judge: str = typer.Option("unieval", help="Label rater whose scores are checked (ignored with --rubric)."),
              human: Optional[list[str]] = typer.Option(None, help="Reference raters (repeatable; default: every other rater)."),
              rubric: Optional[str] = typer.Option(None, help="Check this rubric's warehouse judgments instead of a label rater."),
              model: Optional[str] = typer.Option(None, help="With --rubric: the judge model whose judgments to check."),
              step: float = typer.Option(1.0, help="Category width for kappas and confusion matrices."),
              confusion: bool = typer.Option(False, help="Print the confusion matrices."),
              topical_chat: Optional[Path] = typer.Option(None, help="Import the Topical-Chat release from this folder first."),
              report: Optional[Path] = typer.Option(None, help="Also write the HTML report here."),
              warehouse: Optional[Path] = WarehouseOpt) -> None:
    """Agreement of a judge with human labels, per criterion: Pearson, Spearman, Kendall tau-b
    (sample level, pooled), Cohen's and quadratic weighted kappa, Fleiss' kappa and Krippendorff's
    alpha among the humans, and the human-vs-human baseline the judge should be held to."""
    from tasks.calibration import CalibrationError, calibration
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
        try:
            result = calibration(con, corpus, judge, human, rubric, model, step)
        except CalibrationError as exc:
            fail(str(exc), code=1)
    print_rows(f"{result.judge} vs {', '.join(result.humans)} on {corpus} (sample level, pooled)", [
        {"criterion": r.criterion_id, "n": r.n, "Pearson": f"{r.pearson:.6f}", "Spearman": f"{r.spearman:.6f}",
         "Kendall tau-b": f"{r.kendall_tau_b:.6f}"} for r in result.rows])
    print_rows(f"kappas (categories of width {step:g}) and the human baseline", [
        {"criterion ": r.criterion_id, "Cohen kappa": r.cohen_kappa, "QWK": r.qwk, "humans": r.humans,
         "Fleiss kappa": r.fleiss_kappa, "alpha humans": r.alpha_humans, "alpha +judge": r.alpha_with_judge,
         "human r": r.human_pearson, "human QWK": r.human_qwk} for r in result.rows])
    if confusion:
        for r in result.rows:
            print_rows(f"{r.criterion_id}: judge (rows) x humans (columns)",
                       [{"judge": lv, **{str(c): n for c, n in zip(r.levels, row)}} for lv, row in zip(r.levels, r.confusion)])
    if report:
        from flows.report import calibration_report
        _write_report(report, calibration_report(result))


# --------------------------------------------------------------------------- goldens


@rubric_app.command("test")
def rubric_test(refs: Optional[list[str]] = typer.Argument(None, help="Rubric files or library names; none = the whole library."),
                base_url: Optional[str] = typer.Option(None, help="Judge endpoint (default: $OPENAI_BASE_URL, else the offline judge)."),
                model: Optional[str] = typer.Option(None, help="Judge model."),
                strategy: str = typer.Option("holistic", help="per_criterion, grouped or holistic.")) -> None:
    """Run each rubric's goldens through the judge; exits 1 if any golden fails."""
    from contextlib import nullcontext

    from rubrics.compiler import RubricCompileError, compile_or_raise
    from rubrics.formats import RubricImportError
    from rubrics.library import Library, LibraryError, resolve
    from tasks.config import JudgeConfig
    from tasks.goldens import run_goldens
    from tasks.judge_server import RunningServer

    try:
        bundles = [compile_or_raise(resolve(r), source=r) for r in refs] if refs else \
            [compile_or_raise(e.rubric, source=str(e.path)) for e in Library().entries()]
    except (RubricImportError, LibraryError, RubricCompileError) as exc:
        fail(str(exc))
    offline = not base_url and not os.environ.get("OPENAI_BASE_URL")
    failures = total = 0
    with RunningServer() if offline else nullcontext() as server:
        judge = {"strategy": strategy, "base_url": server.base_url if offline else base_url}
        if model:
            judge["model"] = model
        config = JudgeConfig(**judge)
        if offline:
            out.print(f"judging goldens with the OFFLINE judge (a deterministic stand-in) on {server.base_url}")
        for bundle in bundles:
            if not bundle.rubric.goldens:
                out.print(f"{bundle.id}@{bundle.version}: no goldens")
                continue
            results = run_goldens(bundle, config)
            total += len(results)
            failures += sum(not r.ok for r in results)
            print_rows(f"{bundle.id}@{bundle.version}: {sum(r.ok for r in results)}/{len(results)} goldens pass", [
                {"golden": r.name, "expected": r.expected or "", "got": r.got or "", "score": r.score, "label": r.label,
                 "result": "PASS" if r.ok else "FAIL", "why": r.error or "; ".join(r.mismatches)} for r in results])
    out.print(f"{total - failures}/{total} goldens pass")
    if failures:
        raise typer.Exit(1)


# --------------------------------------------------------------------------- nightly


def _nightly_parameters(source: Path, corpus: str, rubric: list[str], model: Optional[str], base_url: Optional[str],
                        rpm: Optional[float], budget: Optional[float], min_coverage: float, canary: int,
                        warehouse: Optional[Path]) -> dict:
    judge: dict = {"rpm": rpm, "budget_usd": budget}
    if model:
        judge["model"] = model
    if base_url:
        judge["base_url"] = base_url
    return {"source": str(source.resolve()), "corpus_id": corpus, "rubrics": list(rubric),
            "warehouse_path": str(_warehouse(warehouse).resolve()), "judge": judge,
            "min_coverage": min_coverage, "canary_size": canary}


SourceOpt = typer.Option(..., "--source", help="The corpus file or folder, re-read every night.")
NightCorpusOpt = typer.Option(..., "--corpus", "-c", help="Corpus id.")
NightRubricOpt = typer.Option(..., "--rubric", "-r", help="Rubric file or library name (repeatable).")
MinCoverageOpt = typer.Option(0.95, help="Fail the night when a rubric's coverage is under this.")
CanaryOpt = typer.Option(20, help="Corpus texts re-judged every night with the goldens (0: no canary).")


@app.command()
def nightly(source: Path = SourceOpt, corpus: str = NightCorpusOpt, rubric: list[str] = NightRubricOpt,
            model: Optional[str] = typer.Option(None), base_url: Optional[str] = typer.Option(None),
            rpm: Optional[float] = typer.Option(None), budget: Optional[float] = typer.Option(None),
            min_coverage: float = MinCoverageOpt, canary: int = CanaryOpt,
            night: Optional[str] = typer.Option(None, help="Night label (default: today, UTC)."),
            warehouse: Optional[Path] = WarehouseOpt) -> None:
    """One night now: ingest if the source changed, score new or changed work, re-judge the canary,
    compare with the previous night; exit 1 when coverage is under --min-coverage."""
    from flows.nightly import CoverageError, nightly_scoring

    params = _nightly_parameters(source, corpus, rubric, model, base_url, rpm, budget, min_coverage, canary, warehouse)
    try:
        with scoring_progress():
            result = nightly_scoring(**params, night=night)
    except CoverageError as exc:
        fail(f"coverage dropped: {exc}", code=1)
    print_rows("night", result)


@app.command()
def serve(source: Path = SourceOpt, corpus: str = NightCorpusOpt, rubric: list[str] = NightRubricOpt,
          cron: str = typer.Option("0 2 * * *", help="When to run (cron, UTC)."),
          model: Optional[str] = typer.Option(None), base_url: Optional[str] = typer.Option(None),
          rpm: Optional[float] = typer.Option(None), budget: Optional[float] = typer.Option(None),
          min_coverage: float = MinCoverageOpt, canary: int = CanaryOpt,
          warehouse: Optional[Path] = WarehouseOpt) -> None:
    """Run the nightly job on this machine on a cron schedule (Prefect `flow.serve`; Ctrl-C stops)."""
    from flows.nightly import nightly_scoring

    if not os.environ.get("PREFECT_API_URL"):
        fail("serve needs a Prefect server for its scheduler (the ephemeral one cannot schedule): run "
             "`prefect server start` in another shell, then `export PREFECT_API_URL=http://127.0.0.1:4200/api`; "
             "or run one night now with `rubricflow nightly`")
    params = _nightly_parameters(source, corpus, rubric, model, base_url, rpm, budget, min_coverage, canary, warehouse)
    out.print(f"serving nightly scoring of {corpus} on cron '{cron}' (UTC); Ctrl-C stops", highlight=False)
    nightly_scoring.serve(name=f"nightly-{corpus}", cron=cron, parameters=params)


# --------------------------------------------------------------------------- reports

report_app = typer.Typer(help="Self-contained HTML reports with plots (no network needed to view them).", no_args_is_help=True)
app.add_typer(report_app, name="report")
ReportOut = typer.Option(..., "--out", "-o", help="HTML file to write.")


@report_app.command("run")
def report_run(run_id: str, output: Path = ReportOut, warehouse: Optional[Path] = WarehouseOpt) -> None:
    """One run: its counts, score distribution, labels and per-criterion scores and consistency."""
    from flows.report import run_report

    with _reading(warehouse) as con:
        try:
            page = run_report(con, run_id)
        except db.WarehouseError as exc:
            fail(str(exc), code=1)
    _write_report(output, page)


@report_app.command("compare")
def report_compare(corpus: str = typer.Option(..., "--corpus", "-c"), a: str = typer.Option(..., "--a"),
                   b: Optional[str] = typer.Option(None, "--b"), model_a: Optional[str] = typer.Option(None),
                   model_b: Optional[str] = typer.Option(None), allow_mixed: bool = typer.Option(False),
                   top: int = typer.Option(10), output: Path = ReportOut,
                   warehouse: Optional[Path] = WarehouseOpt) -> None:
    """An A/B of landed judgments (see `rubricflow compare`): distributions, deltas with intervals,
    flip matrix, score scatter, rates and the texts that moved most."""
    from flows.report import comparison_report
    from tasks.compare import CompareError, compare as compare_sets, judgment_sets
    from tasks.config import JudgeConfig

    with _reading(warehouse) as con:
        try:
            sides = [judgment_sets(con, corpus, ref, JudgeConfig(model=m).judge_hash() if m else None, allow_mixed, name)
                     for ref, m, name in ((a, model_a, "A"), (b or a, model_b, "B"))]
            result = compare_sets(con, corpus, *sides, top=top)
        except CompareError as exc:
            fail(str(exc), code=1)
    _write_report(output, comparison_report(result))


@report_app.command("calibration")
def report_calibration(corpus: str = typer.Option(..., "--corpus", "-c"), judge: str = typer.Option("unieval"),
                       human: Optional[list[str]] = typer.Option(None), rubric: Optional[str] = typer.Option(None),
                       model: Optional[str] = typer.Option(None), step: float = typer.Option(1.0),
                       output: Path = ReportOut, warehouse: Optional[Path] = WarehouseOpt) -> None:
    """Judge vs human agreement (see `rubricflow calibrate`): table, scatter plots, confusion matrices."""
    from flows.report import calibration_report
    from tasks.calibration import CalibrationError, calibration

    with _reading(warehouse) as con:
        try:
            result = calibration(con, corpus, judge, human, rubric, model, step)
        except CalibrationError as exc:
            fail(str(exc), code=1)
    _write_report(output, calibration_report(result))


def _write_report(path: Path, page: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    out.print(f"wrote {path} ({len(page) / 1024:.0f} KiB, self-contained)")


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
                 supports: str = typer.Option("json_schema", help="Richest output mode accepted: json_schema, tools or text."),
                 batch_delay: float = typer.Option(0.0, help="Seconds a Batch API batch stays in progress."),
                 batch_fail_rate: float = typer.Option(0.0, help="Share of batch lines answered with an error."),
                 batch_expire: bool = typer.Option(False, help="Batches end expired, with no output.")) -> None:
    """Serve the OFFLINE judge: a deterministic, model-free stand-in (pattern hits and text statistics)."""
    from tasks.batch_api import BatchConfig
    from tasks.judge_server import FAULTS, JudgeServer, ServerConfig, bind, make_server

    chosen = tuple(f.strip() for f in faults.split(",") if f.strip())
    unknown = [f for f in chosen if f not in FAULTS]
    if unknown:
        fail(f"unknown faults {unknown}; choose from {', '.join(FAULTS)}")
    config = ServerConfig(latency_ms=latency_ms, rpm=rpm, retry_after=not no_retry_after, fault_rate=fault_rate,
                          faults=chosen, fault_attempts=fault_attempts, stall_s=stall_s, supports=supports,
                          batch=BatchConfig(delay_s=batch_delay, fail_rate=batch_fail_rate, expire=batch_expire))
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
