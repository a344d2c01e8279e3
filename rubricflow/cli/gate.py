"""`rubricflow gate`: score a corpus, then turn thresholds and a regression check against a
baseline into an exit code, a JUnit XML file and a Markdown summary for CI (docs/gate.md)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from rubricflow.errors import InputError, RubricflowError

from .common import (
    WarehouseOpt,
    err,
    judge_settings,
    out,
    print_rows,
    warehouse_path,
)
from .judge_options import judge_options


@judge_options()
def gate(
    corpus: str = typer.Option(..., "--corpus", "-c", help="Corpus id (see `rubricflow ingest`)."),
    rubric: str = typer.Option(..., "--rubric", "-r", help="Rubric file or library name to gate."),
    config: Path = typer.Option(..., "--config", help="Gate file (YAML): thresholds, regression, coverage_floor."),
    junit: Path | None = typer.Option(None, "--junit", help="Write the checks as JUnit XML here."),
    summary: Path | None = typer.Option(
        None, "--summary", help="Write a Markdown summary here (e.g. $GITHUB_STEP_SUMMARY; appended to)."
    ),
    model: str | None = typer.Option(None, help="Judge model (default: the offline stand-in)."),
    base_url: str | None = typer.Option(None, help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)."),
    no_score: bool = typer.Option(False, "--no-score", help="Gate landed judgments only; judge nothing."),
    warehouse: Path | None = WarehouseOpt,
    judge: dict | None = None,
) -> None:
    """Check a corpus's scores against a gate file. Exit 0: every check passed; 1: a threshold or
    a significant regression failed; 2: unusable input or usage; 3: the gate could not evaluate
    (coverage below the floor, the run scored nothing, no baseline text to pair with)."""
    from rubricflow.tasks.stats import gate as gating

    settings = gating.load_config(config)  # a bad gate file is refused before any call
    for option, report in (("--junit", junit), ("--summary", summary)):
        _check_writable(option, report)  # before any call: not "passed (exit 0)", then exit 2
    path = warehouse_path(warehouse)
    try:
        judge = judge_settings(model, base_url, **(judge or {}))  # the run refuses no endpoint if it has cells
        result = gating.evaluate(path, corpus, _gated_set(corpus, rubric, path, judge, no_score), settings)
    except InputError as exc:  # exit 2 in one line, CI's report (saying exit 2) written all the same
        _report(gating.unevaluated(corpus, rubric, f"refused (exit 2): {exc}", refused=True), junit, summary)
        raise
    except RubricflowError as exc:  # the run failed: the gate cannot pass on it (exit 3)
        result = gating.unevaluated(corpus, rubric, f"failed: {exc}")
    _report(result, junit, summary)
    raise typer.Exit(result.exit_code)


def _check_writable(option: str, path: Path | None) -> None:
    """A report path CI cannot get is bad usage found before judging, not after the gate's outcome
    was printed; a file the check creates is removed again (the report writes it at the end)."""
    if path is None:
        return
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise InputError(f"{option} {path}: cannot write there ({exc.strerror or exc})") from None
    if not existed:
        path.unlink()


def _gated_set(corpus: str, rubric: str, warehouse: Path, judge: dict, no_score: bool) -> tuple[str, str]:
    """The judgment set to gate: the one a scoring run now lands, or (--no-score) the landed one."""
    if not no_score:
        from .score import run_score

        ran = run_score(corpus, rubric, warehouse, judge)
        return ran["rubric_hash"], ran["judge_hash"]
    from rubricflow.tasks.judging.config import JudgeConfig
    from rubricflow.tasks.stats.compare import CompareError, judgment_sets
    from rubricflow.warehouse import db

    judge_hash = JudgeConfig(**judge).judge_hash() if judge.get("model") else None
    with db.reader(warehouse) as con:
        [found] = db.fetch(con, "corpus_known.sql", corpus=corpus)
        if not found["known"]:
            raise InputError(f"no corpus {corpus!r} in {warehouse} (corpora: {found['corpora'] or 'none'})")
        try:
            return judgment_sets(con, corpus, rubric, judge_hash, False, "gated")[0]
        except CompareError as exc:  # a misspelled rubric, or one never scored here: bad usage, exit 2
            raise InputError(str(exc).replace("side gated: ", "")) from None


def _report(result, junit: Path | None, summary: Path | None) -> None:
    """The checks' table and outcome line, the JUnit file and the summary: the files first, so the
    printed "(exit N)" is never followed by another exit when one cannot be written."""
    from rubricflow.tasks.presentation.gate_report import headline, junit_xml, markdown

    if junit:
        junit.parent.mkdir(parents=True, exist_ok=True)
        junit.write_text(junit_xml(result), encoding="utf-8")
        err.print(f"wrote {escape(str(junit))}")
    if summary:
        summary.parent.mkdir(parents=True, exist_ok=True)
        with summary.open("a", encoding="utf-8") as fh:  # CI step summaries collect several steps' text
            fh.write(markdown(result) + "\n")
        err.print(f"wrote {escape(str(summary))}")
    print_rows(
        f"gate {result.rubric} on {result.corpus}",
        [{"check": c.name, "result": c.status, "detail": c.message} for c in result.checks],
    )
    out.print(f"gate {headline(result)} (exit {result.exit_code})", markup=False, highlight=False)
