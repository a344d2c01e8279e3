"""Exports for other tools: a run's text scores or judgments, or an A/B comparison, as Parquet,
CSV or JSONL, each carrying its run's metadata (rubric, hashes, model, parameters, coverage): in
the Parquet file's key-value metadata (key `rubricflow`), and for CSV and JSONL, which have no
place for it, in a `FILE.meta.json` beside the file. The rows themselves name their run too."""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import NamedTuple

import polars as pl

from rubricflow.errors import InputError
from rubricflow.tasks.stats.compare import Comparison
from rubricflow.warehouse import db

FORMATS = {".parquet": "parquet", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
RUN_KINDS = {"scores": "export_scores.sql", "judgments": "export_judgments.sql"}
METADATA_KEY = "rubricflow"


def format_of(path: Path, given: str | None) -> str:
    """The format asked for, else the one the file's suffix names."""
    fmt = given or FORMATS.get(path.suffix.lower())
    if fmt not in ("parquet", "csv", "jsonl"):
        raise InputError(f"{path}: say --format parquet, csv or jsonl (or end the file in .parquet, .csv, .jsonl)")
    return fmt


def check_target(path: Path, warehouse: str | Path, force: bool, fmt: str) -> None:
    """Refuse to write over the warehouse (or its write-ahead log), ever, and over any existing
    file (or its metadata beside it) unless `force`: `--out` used to overwrite whatever it named,
    the warehouse included ("not a valid DuckDB database file" after)."""
    whole = Path(warehouse)
    targets = [path] + ([metadata_path(path)] if fmt != "parquet" else [])
    for target in targets:
        if target.exists() and any(
            kept.exists() and target.samefile(kept) for kept in (whole, whole.with_name(whole.name + ".wal"))
        ):
            raise InputError(f"{target}: that is the warehouse; export to another file")
        if target.is_dir():
            raise InputError(f"{target}: is a folder; name a file to write")
    if not force and (existing := [t for t in targets if t.exists()]):
        raise InputError(f"{existing[0]}: exists; pass --force to overwrite it")
    _refuse_unwritable(path)


def _refuse_unwritable(path: Path) -> None:
    """A folder no file can be written in, refused before the query and without leaving anything:
    polars' write error names no file, so `-o /proc/x.csv` ended in a traceback after the work."""
    folder = path.absolute().parent
    while not folder.exists() and folder != folder.parent:  # a missing folder is made by `write`
        folder = folder.parent
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise InputError(f"{path}: cannot write there ({exc.strerror or exc})") from None


FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as the start of a formula


def formula_safe(frame: pl.DataFrame) -> pl.DataFrame:
    """Text cells that a spreadsheet would run as a formula (`=HYPERLINK(...)` in a judged text or a
    rationale), prefixed with `'` so they open as text (OWASP's advice for CSV injection)."""
    texts = [c for c, t in frame.schema.items() if t == pl.Utf8]
    leads = "^[" + "".join(FORMULA_LEADS).replace("-", "\\-").replace("+", "\\+") + "]"
    return frame.with_columns(
        pl.when(pl.col(c).str.contains(leads)).then(pl.lit("'") + pl.col(c)).otherwise(pl.col(c)).alias(c)
        for c in texts
    )


class Exported(NamedTuple):
    """What an export wrote and how much of it is scored: a partial set is said on the terminal."""

    rows: int  # rows written
    texts: int  # the corpus's current texts
    scored: int  # of them, those with a score
    coverage: float  # criteria scored of those planned, over the judgment set


def export_run(warehouse: str | Path, kind: str, run_id: str, path: Path, fmt: str) -> Exported:
    """A run's judgment set (`scores` or `judgments`) written to `path`, with how much of it is scored."""
    with db.reader(warehouse) as con:
        found = db.fetch(con, "export_run.sql", run=run_id)
        if not found:
            raise InputError(f"no run {run_id!r} in {warehouse}; `rubricflow runs` lists them")
        texts, scored, coverage = _scored(con, found[0])
        relation = con.sql(db.sql(RUN_KINDS[kind]), params={"run": run_id})
        frame = pl.DataFrame(pl.from_arrow(db.portable(relation).to_arrow_table()))
    write(frame, path, fmt, _metadata(kind, found[0]))
    return Exported(frame.height, texts, scored, coverage)


def _scored(con, run: dict) -> tuple[int, int, float]:
    """(texts, texts scored, coverage) of the run's judgment set; one with no scored text is refused:
    a failed run's blank rows were written with exit 0, said `failed` only in the metadata."""
    relation = con.sql(db.sql(RUN_KINDS["scores"]), params={"run": run["run_id"]})
    [(texts, scored, coverage)] = relation.aggregate(
        "count(*), count(score), coalesce(sum(scored_criteria) / nullif(sum(planned_criteria), 0), 0)"
    ).fetchall()
    if not scored:
        raise InputError(
            f"nothing scored: no text of corpus {run['corpus_id']!r} has a score under {run['rubric']} "
            f"(run {run['run_id']}: {run['status']}); nothing exported: score it again first"
        )
    return texts, scored, float(coverage)


def export_comparison(c: Comparison, path: Path, fmt: str) -> int:
    """An A/B as rows (the text level first, criterion NULL, then one row per criterion), its
    summary and sides in the metadata."""
    s = c.summary
    rows = [_ab_row(None, s["texts_paired"], s["mean_a"], s["mean_b"], s["mean_delta"], s["mean_delta_ci"])]
    rows[0] |= {"pass_to_fail": s["pass_to_fail"], "fail_to_pass": s["fail_to_pass"], "mcnemar_p": None}
    for r in c.criteria:
        row = _ab_row(r["criterion_id"], r["n"], r.get("mean_a"), r.get("mean_b"), r["mean_delta"], r["mean_delta_ci"])
        rows.append(row | {k: r[k] for k in ("pass_to_fail", "fail_to_pass", "mcnemar_p")})
    sides = {"a": [list(x) for x in c.a], "b": [list(x) for x in c.b]}
    meta = {"kind": "comparison", "corpus_id": c.corpus, "rubric_a": c.rubric_a, "rubric_b": c.rubric_b}
    meta |= {"sides": sides, "summary": s} | _provenance()
    frame = pl.DataFrame(rows, infer_schema_length=None)
    write(frame, path, fmt, meta)
    return frame.height


def _ab_row(criterion, n, mean_a, mean_b, delta, ci) -> dict:
    return {
        "criterion_id": criterion,
        "n": n,
        "mean_a": mean_a,
        "mean_b": mean_b,
        "mean_delta": delta,
        "ci_low": ci[0] if ci else None,
        "ci_high": ci[1] if ci else None,
    }


def _metadata(kind: str, run: dict) -> dict:
    run = dict(run)
    run["parameters"] = json.loads(run["parameters"]) if isinstance(run["parameters"], str) else run["parameters"]
    return {"kind": kind, "run": run} | _provenance()


def _provenance() -> dict:
    try:
        ours = version("rubricflow")
    except PackageNotFoundError:  # run from a source folder that was never installed
        ours = "unknown"
    return {"rubricflow_version": ours, "exported_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}


def metadata_path(path: Path) -> Path:
    return path.with_name(path.name + ".meta.json")


def write(frame: pl.DataFrame, path: Path, fmt: str, metadata: dict) -> None:
    """The rows in the format, with the metadata where the format keeps it (see the module doc); a
    refused write said in one line naming the file (polars' errors name none: a traceback)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_rows(frame, path, fmt, metadata)
    except OSError as exc:
        if db.disk_full(exc):  # the CLI says a full disk its own way
            raise
        reason = exc.strerror or str(exc).split(" (os error")[0]
        raise InputError(f"{path}: cannot write there ({reason})") from None


def _write_rows(frame: pl.DataFrame, path: Path, fmt: str, metadata: dict) -> None:
    """Each format's own writer; CSV and JSONL have no place for metadata, so it goes beside them."""
    text = json.dumps(metadata, default=str, ensure_ascii=False)
    if fmt == "parquet":
        frame.write_parquet(path, metadata={METADATA_KEY: text})
        return
    if fmt == "csv":  # CSV has no nested values: lists and structs are written as JSON
        nested = [c for c, t in frame.schema.items() if t.is_nested()]
        frame = frame.with_columns(
            pl.col(c).map_elements(lambda v: json.dumps(v.to_list(), ensure_ascii=False), return_dtype=pl.Utf8)
            for c in nested
        )
        formula_safe(frame).write_csv(path)
    else:
        frame.write_ndjson(path)
    metadata_path(path).write_text(json.dumps(metadata, default=str, ensure_ascii=False, indent=2), encoding="utf-8")
