"""`rf.Warehouse`: the DuckDB file the CLI uses, from Python.

Every method opens its connection and closes it before returning, so a notebook beside a terminal
never holds the file between calls; a writer that finds it busy waits (db.connect). Ingest and
score run the same Prefect flows as `rubricflow ingest` / `rubricflow score`, on the same local
Prefect server (tasks/runtime/prefect_server).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rubricflow.api_frames import check_columns, table_of
from rubricflow.errors import InputError
from rubricflow.flows.deploy_params import refuse_unset
from rubricflow.tasks.judging.config import JudgeConfig, checked
from rubricflow.tasks.judging.run import RunSummary as Run  # one finished run, as the flow summarised it
from rubricflow.tasks.judging.run_options import RunOptions
from rubricflow.tasks.stats import compare_defaults

if TYPE_CHECKING:
    import polars as pl

    from rubricflow.api_judge import Judge
    from rubricflow.api_rubric import RubricLike
    from rubricflow.tasks.stats.calibration import Calibration
    from rubricflow.tasks.stats.compare import Comparison


@dataclass(frozen=True)
class Ingested:
    """What an ingest loaded: texts, quarantined rows (with the file that names each and why)."""

    corpus_id: str
    rows_ok: int
    rows_quarantined: int
    duplicates_identical: int
    quarantine: str
    reasons: dict[str, int] = field(default_factory=dict)
    split: str | None = None  # the split read from a Hugging Face dataset folder
    removed: int = 0  # the corpus's texts the source no longer holds, marked removed

    def __repr__(self) -> str:
        bad = f", {self.rows_quarantined} quarantined ({self.quarantine})" if self.rows_quarantined else ""
        gone = f", {self.removed} marked removed" if self.removed else ""
        return f"<Ingested {self.corpus_id}: {self.rows_ok} texts{bad}{gone}>"


class Warehouse:
    """A warehouse file (default: $RUBRICFLOW_WAREHOUSE or warehouse/rubricflow.duckdb)."""

    def __init__(self, path: str | Path | None = None) -> None:
        from rubricflow.warehouse.db import default_path

        if isinstance(path, str):
            refuse_unset(path=path)  # "" is the current folder, not the default warehouse
        self.path = Path(path) if path is not None else default_path()

    def __repr__(self) -> str:
        return f"<Warehouse {self.path}>"

    def ingest(
        self,
        data: Any,
        corpus: str,
        text: str | None = None,
        id: str | None = None,
        input: str | None = None,
        context: str | None = None,
        genre: str | None = None,
        max_chars: int = 1_000_000,
        limit: int | None = None,
        split: str | None = None,
        allow_removal: bool = False,
        format: str | None = None,
    ) -> Ingested:
        """Load a corpus: a file or folder path, a polars or pandas DataFrame, an Arrow table or a
        list of dicts. `text`, `id`, `input`, `context`, `genre` name the columns holding each (by
        default the columns of those names). A Hugging Face dataset folder (`save_to_disk`, or the
        Hub's Parquet shards) is a corpus too: `split` picks its split (default "train", or the only
        one). Data in memory is checked whole first: a missing column or a text that is not a string
        raises an InputError naming it, and nothing is written. A `messages` column (chat messages,
        tool calls and results) and no text column make a corpus of transcripts (docs/transcripts.md).
        An ingest that would mark more than half the corpus's texts removed (the wrong file or folder)
        is refused unless `allow_removal`. `format` names an agent-trace file's format (otel,
        openinference, inspect, atif, openai; default: detected from the file)."""
        from rubricflow.tasks.loaders.ingest import check_corpus_id

        refuse_unset(corpus=corpus, **({"source": data} if isinstance(data, str) else {}))
        check_corpus_id(corpus)
        mapping = {"input": input, "context": context, "genre": genre}
        roles = {k: v for k, v in mapping.items() if v}
        if isinstance(data, str | Path):
            source = Path(data)
        elif split is not None:
            raise InputError("split= applies to a Hugging Face dataset folder, not to data in memory")
        else:
            table = table_of(data)
            text = check_columns(table, text, id, roles)
            source = self.path.parent / "corpora" / corpus / "source.parquet"
            source.parent.mkdir(parents=True, exist_ok=True)
            import pyarrow.parquet as pq

            pq.write_table(table, source)
        report = run_ingest(
            source,
            self.path,
            corpus,
            text,
            id,
            roles,
            max_chars,
            limit,
            split=split,
            allow_removal=allow_removal,
            trace_format=format,
        )
        return Ingested(**{f.name: report[f.name] for f in fields(Ingested)})

    def score(
        self,
        corpus: str,
        rubric: RubricLike,
        judge: Judge,
        workers: int = 0,
        **options: Any,
    ) -> Run:
        """Score a corpus through the scoring flow (landed cells are reused: re-running costs nothing).
        `options` are run-wide settings, RunOptions' fields (shard_size, skip_disqualified,
        max_cells, ...), checked like the command line's. An interrupt (Ctrl-C, a kernel interrupt)
        closes the run `interrupted`; what landed stays."""
        from rubricflow.api_rubric import flow_reference

        refuse_unset(corpus=corpus, **({"rubric": rubric} if isinstance(rubric, str) else {}))
        ref = flow_reference(rubric, self.path.parent / "rubrics")
        summary = run_score(self.path, corpus, ref, judge.config, checked(RunOptions, options), workers)
        return Run(warehouse=self.path, **summary)

    def best_of(self, corpus: str, rubric: RubricLike, judge: Judge, workers: int = 0, **options: Any) -> pl.DataFrame:
        """Best of n, as `rubricflow best-of`: each candidate set of the corpus judged in ONE call by
        the rubric's best-of form (a judgment per candidate and the winner); one row per candidate
        (set_id, candidate, system, score, winner, is_winner, label) from `best_of_candidates`."""
        from rubricflow.api_rubric import load_rubric
        from rubricflow.tasks.pipeline.best_of import best_of_form, set_size

        if judge.config.strategy != "holistic":
            raise InputError("strategy: best-of judges each set in one call (holistic); other strategies split it")
        loaded = load_rubric(rubric)
        target, bundle = best_of_form(loaded.rubric, loaded.source or loaded.id, self.path, set_size(self.path, corpus))
        run_score(self.path, corpus, str(target), judge.config, checked(RunOptions, options), workers)
        return self._frame(
            "best_of_candidates_of.sql", corpus=corpus, rubric=bundle.hash, judge=judge.config.judge_hash()
        )

    def query(self, sql: str) -> pl.DataFrame:
        """One read-only SELECT over the warehouse's tables and views, as a polars DataFrame."""
        import polars as pl

        from rubricflow.warehouse import db

        return pl.DataFrame(pl.from_arrow(db.read_only_query(self.path, sql)))

    def text_scores(
        self, corpus: str | None = None, rubric: RubricLike | None = None, judge_hash: str | None = None
    ) -> pl.DataFrame:
        """Every text's score, label, pass and disqualifiers, narrowed by corpus, rubric (id,
        id@version, hash prefix or a loaded rubric) and judge hash."""
        from rubricflow.api_rubric import CompiledRubric

        ref = rubric.hash if isinstance(rubric, CompiledRubric) else (str(rubric) if rubric is not None else None)
        return self._frame("api_text_scores.sql", corpus=corpus, rubric=ref, judge=judge_hash)

    def runs(self, limit: int = 20) -> pl.DataFrame:
        """The latest runs with their counts, tokens and coverage, and their prompt tokens (sent,
        cached, the minimum, what the cache saved), as `rubricflow runs` shows them in two tables."""
        prompts = self._frame("run_prompts.sql", limit=limit)
        return self._frame("recent_runs.sql", limit=limit).join(prompts, on="run_id", how="left", maintain_order="left")

    def compare(
        self,
        corpus: str,
        a: RubricLike,
        b: RubricLike | None = None,
        judge: Judge | None = None,
        judge_b: Judge | None = None,
        top: int = compare_defaults.TOP,
    ) -> Comparison:
        """A/B two rubric versions (or two judges) on one corpus, as `rubricflow compare`: with a
        judge, the missing cells of both sides are judged first; without, landed judgments only."""
        from rubricflow.api_rubric import CompiledRubric, flow_reference

        folder = self.path.parent / "rubrics"
        if judge is None:  # no judging: name each side as the warehouse knows it
            refs = [r.hash if isinstance(r, CompiledRubric) else str(r) for r in (a, b if b is not None else a)]
        else:
            refs = [flow_reference(r, folder) for r in (a, b if b is not None else a)]
        start_flows()
        from rubricflow.flows.compare import compare_flow

        judges = [j.config if j else None for j in (judge, judge_b or judge)]
        return compare_flow(corpus, refs[0], refs[1], str(self.path), judges[0], judges[1], judge is not None, top=top)

    def calibrate(
        self,
        corpus: str,
        rubric: RubricLike | None = None,
        judge: str | None = None,
        human: list[str] | None = None,
        model: str | None = None,
        step: float = 1.0,
        score: str = "sampled",
    ) -> Calibration:
        """Agreement of a judge (a label rater, or a rubric's judgments; by default the corpus's own
        judgments) with human labels, per criterion, as `rubricflow calibrate`; the result is kept in
        the `calibrations` table."""
        from rubricflow.api_rubric import CompiledRubric
        from rubricflow.tasks.stats.calibration import calibration, record
        from rubricflow.warehouse import db

        ref = rubric.hash if isinstance(rubric, CompiledRubric) else (str(rubric) if rubric is not None else None)
        with db.reader(self.path) as con:
            result = calibration(con, corpus, judge, human, ref, model, step, score)
        with db.writer(self.path) as con:
            record(con, result)
        return result

    def import_labels(self, data: Any, corpus: str, rater: str | None = None) -> int:
        """`rubricflow labels import`: a label file, or labels in memory (long: text_id, criterion,
        score[, rater]; or wide: an id and a column per criterion). Returns how many were stored."""
        from rubricflow.api_improve import import_labels

        return import_labels(self.path, data, corpus, rater)

    def evolve(
        self, corpus: str, rubric: RubricLike, judge: Judge, labels: str = "human:overall", **options: Any
    ) -> dict:
        """`rubricflow improve evolve` on labels already imported (`import_labels`): options as
        rubricflow.api_improve.evolve names them (reflection, max_rounds, invariants, objectives, ...)."""
        from rubricflow.api_improve import evolve

        return evolve(self.path, corpus, rubric, judge, labels, **options)

    def _frame(self, name: str, **params: Any) -> pl.DataFrame:
        import polars as pl

        from rubricflow.warehouse import db
        from rubricflow.warehouse.sqlfiles import statements

        with db.reader(self.path) as con:
            [(statement, used)] = statements(con, name, params)
            return pl.DataFrame(pl.from_arrow(db.portable(con.sql(statement, params=used)).to_arrow_table()))


def start_flows() -> None:
    from rubricflow.cli.flow_start import start_flows as start

    start()


def run_ingest(
    source: Path,
    warehouse: Path,
    corpus: str | None,
    text: str | None = None,
    id: str | None = None,
    fields: dict[str, str] | None = None,
    max_chars: int = 1_000_000,
    limit: int | None = None,
    encoding: str | None = None,
    split: str | None = None,
    allow_removal: bool = False,
    trace_format: str | None = None,
) -> dict:
    """The ingest flow, as `rubricflow ingest` and `Warehouse.ingest` both run it."""
    if not source.exists():
        raise InputError(f"{source}: no such file or folder")
    if split is not None or source.is_dir():
        from rubricflow.tasks.loaders.ingest import corpus_records

        corpus_records(source, encoding, split)  # a split that cannot be read fails before Prefect starts
    if trace_format is not None:
        from rubricflow.tasks.loaders.trace_formats import check_format

        check_format(trace_format)
    start_flows()
    from rubricflow.flows.ingest import ingest_flow

    return ingest_flow(
        str(source),
        str(warehouse),
        corpus,
        text,
        max_chars,
        limit,
        id,
        encoding,
        fields or None,
        split,
        allow_removal,
        trace_format=trace_format,
    )


def run_score(
    warehouse: Path,
    corpus: str,
    rubric: str,
    judge: JudgeConfig,
    options: RunOptions,
    workers: int = 0,
) -> dict:
    """The scoring flow, as `rubricflow score` and `Warehouse.score` both run it."""
    start_flows()
    from rubricflow.flows.score import scoring_flow

    return scoring_flow(workers)(corpus, rubric, str(warehouse), judge, options, workers=workers)
