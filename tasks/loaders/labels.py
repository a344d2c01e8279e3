"""Human (or external judge) labels into the warehouse: CSV, JSONL or Parquet with text_id,
criterion, score and rater columns, and the Topical-Chat release with its published judge scores."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING

from rubricflow.errors import InputError

if TYPE_CHECKING:
    import polars as pl


class LabelError(InputError):
    """A label file that cannot be read: missing columns, scores that are not numbers."""


ID_COLUMNS = ("text_id", "id")  # the text's id, as `ingest` reads it
RATER_COLUMNS = ("rater", "annotator", "worker_id", "judge")
TEXT_COLUMNS = ("text", "input", "context", "source", "output", "response", "reference", "system", "model")
# names a wide file's column has for another use than a criterion's: read as one only where the corpus knows it
RESERVED = {"an id": ID_COLUMNS, "a rater": RATER_COLUMNS, "a text": TEXT_COLUMNS}


MAX_SCORE = 1e9  # a rating is a point on a scale; past this, statistics over it overflow


def _read_csv(path: Path) -> pl.DataFrame:
    """A label CSV as text (ids stay as written): UTF-8, or UTF-16 after its byte-order mark (Excel's
    "Unicode Text"), separated by commas, semicolons or tabs, as `ingest` reads a corpus CSV."""
    import polars as pl

    from .ingest import csv_delimiter, csv_encoding

    raw = path.read_bytes()
    text = raw.decode(csv_encoding(raw))
    return pl.read_csv(text.encode(), separator=csv_delimiter(text.split("\n", 1)[0]), infer_schema=False)


def _read_jsonl(path: Path) -> pl.DataFrame:
    """A label JSONL read line by line by Python's json, as `ingest` reads a corpus: a byte-order mark
    and CRLF line ends are read, and a line that is not a JSON object is refused naming its line
    (polars said "failed to determine supertype of struct[4] and list[str]", or "TapeError" at a BOM)."""
    import polars as pl

    records = []
    with open(path, encoding="utf-8-sig") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise LabelError(f"{path}: line {number}: not JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise LabelError(f"{path}: line {number}: a JSON {type(record).__name__}, not an object")
            records.append(record)
    return pl.DataFrame(records, infer_schema_length=None, strict=False)


def read_labels(path: str | Path, rater: str | None = None, known: Collection[str] = ()) -> pl.DataFrame:
    """Rows of (text_id, criterion_id, rater, score); a bad file or row is refused with its name and row.
    Long files (text_id, criterion, score[, rater]) and wide ones (an id, one numeric column per
    criterion[, a rater]) are read; `rater` names the rater of a file that names none (None: not
    given, `human`); `known`: the criteria the corpus already has (see `_from_wide`)."""
    return label_frame(_read_file(Path(path)), Path(path), rater, known)[0]


def _read_file(path: Path) -> pl.DataFrame:
    """The label file's rows as written: refused when it is missing, of no known format or empty."""
    import polars as pl  # imported when used: it starts threads, and the warm worker forks with none alive

    if not path.is_file():
        raise LabelError(f"{path}: no such file")
    readers: dict[str, Callable[[Path], pl.DataFrame]] = {  # a CSV is read as text: ids stay as written
        ".csv": _read_csv,
        ".jsonl": _read_jsonl,
        ".ndjson": _read_jsonl,
        ".parquet": pl.read_parquet,
    }
    if path.suffix.lower() not in readers:
        raise LabelError(f"{path}: unsupported label format {path.suffix!r} (use .csv, .jsonl or .parquet)")
    try:
        frame = readers[path.suffix.lower()](path)
    except LabelError:
        raise
    except Exception as exc:  # polars raises several error types for unreadable files
        raise LabelError(f"{path}: cannot be read: {exc}") from None
    if not frame.height:  # a header alone: "0 labels stored" and exit 0 said nothing was wrong
        raise LabelError(f"{path}: no labels: the file has no rows")
    return frame


def label_frame(
    frame: pl.DataFrame, path: Path, rater: str | None, known: Collection[str]
) -> tuple[pl.DataFrame, list[str]]:
    """(the labels of a file's rows, checked, one per row; notes: one line each on what of the file
    was not read as labels, for the command to say)."""
    import polars as pl

    frame, notes = _long(frame, path, rater, set(known))
    _scalars_only(frame, path)
    frame = frame.select(
        pl.col("text_id").cast(pl.Utf8),
        pl.col("criterion").cast(pl.Utf8).alias("criterion_id"),
        pl.col("rater").cast(pl.Utf8),
        pl.col("score").cast(pl.Float64, strict=False).alias("score"),
        pl.col("score").alias("raw"),
    )
    for column, named in (("text_id", "text_id"), ("criterion_id", "criterion"), ("rater", "rater")):
        empty = frame.with_row_index("row", offset=1).filter(
            pl.col(column).is_null() | (pl.col(column).str.strip_chars() == "")
        )
        if empty.height:  # an empty id: one line, not a NOT NULL ConstraintException traceback
            raise LabelError(
                f"{path}: row {empty['row'][0]}: {named} is empty ({empty.height} such rows); every label needs one"
            )
    _finite_scores(frame, path)
    return _one_label_each(frame.drop("raw"), path), notes


def _finite_scores(frame: pl.DataFrame, path: Path) -> None:
    """Every score a finite number, and one on some scale; else refused naming the first bad row."""
    import polars as pl

    bad = frame.with_row_index("row", offset=1).filter(pl.col("score").is_null() | ~pl.col("score").is_finite())
    if bad.height:
        first = bad.row(0, named=True)
        raise LabelError(
            f"{path}: row {first['row']}: score {first['raw']!r} is not a finite number ({bad.height} such rows)"
        )
    huge = frame.with_row_index("row", offset=1).filter(pl.col("score").abs() > MAX_SCORE)
    if huge.height:  # +-1e308 would be stored, then calibrate's sums of squares overflowed to a traceback
        first = huge.row(0, named=True)
        raise LabelError(
            f"{path}: row {first['row']}: score {first['raw']!r} is no rating on any scale (beyond +-{MAX_SCORE:g}; "
            f"{huge.height} such rows)"
        )


def _one_label_each(frame: pl.DataFrame, path: Path) -> pl.DataFrame:
    """A text's label on a criterion by a rater, once: written twice alike it is kept once; twice
    unlike, the file is refused naming both rows (the first silently won within a file, the last
    across files, and the count said 3 labels where 2 were stored)."""
    import polars as pl

    key = ["text_id", "criterion_id", "rater"]
    numbered = frame.with_row_index("row", offset=1)
    clash = numbered.filter(pl.col("score").n_unique().over(key) > 1).sort("row")
    if clash.height:
        first = clash.row(0, named=True)
        other = clash.filter(pl.all_horizontal(pl.col(k) == first[k] for k in key))
        rows = other["row"].to_list()
        raise LabelError(
            f"{path}: rows {rows[0]} and {rows[1]}: text {first['text_id']!r}, criterion {first['criterion_id']!r}, "
            f"rater {first['rater']!r} labelled {other['score'][0]:g} and {other['score'][1]:g}; keep one"
        )
    return frame.unique(subset=key, keep="first", maintain_order=True)


def _scalars_only(frame: pl.DataFrame, path: Path) -> None:
    """A label's id, criterion, rater and score are single values; a list or an object there (a
    JSON file's `"score": {"a": 1}`) is refused naming the column and row, not cast."""
    import polars as pl

    for column in ("text_id", "criterion", "rater", "score"):
        if isinstance(frame.schema[column], (pl.List, pl.Struct, pl.Array)):
            row = frame.with_row_index("row", offset=1).filter(pl.col(column).is_not_null())["row"]
            at = f"row {row[0]}: " if row.len() else ""
            raise LabelError(f"{path}: {at}{column} holds a list or an object; a label's {column} is one value")


def _long(frame: pl.DataFrame, path: Path, rater: str | None, known: set[str]) -> tuple[pl.DataFrame, list[str]]:
    """The labels one per row (text_id, criterion, score, rater), whichever layout the file has: long
    with a `criterion` column, or a `score` one that is no criterion the corpus knows; else wide."""
    columns = set(frame.columns)
    if "criterion" in columns or ("score" in columns and not _known_numbers(frame, "score", known, path)):
        return _from_long(frame, path, rater)
    return _from_wide(frame, path, rater, known)


def _from_long(frame: pl.DataFrame, path: Path, rater: str | None) -> tuple[pl.DataFrame, list[str]]:
    """A long file's labels: every one of its columns is needed (a rater's, or `rater`, the file's)."""
    import polars as pl

    found = list(frame.columns)
    ident = next((c for c in ID_COLUMNS if c in found), None)
    missing = [c for c in ("text_id", "criterion", "score") if c not in found and not (c == "text_id" and ident)]
    if missing:
        wide = (
            "; a wide file's column 'score' is read as a criterion only where the corpus has one of that name "
            "(a rubric that scored it, or its labels): else give those labels in the long format"
            if "criterion" in missing and "score" in found
            else ""
        )
        raise LabelError(
            f"{path}: missing columns {missing} (long: text_id, criterion, score[, rater]); found {found}{wide}"
        )
    named = next((c for c in RATER_COLUMNS if c in found), None)
    notes = []
    if named is None:
        frame = frame.with_columns(pl.lit(rater or "human").alias("rater"))
    elif rater is not None:  # the flag was ignored without a word
        notes.append(_unused_rater(path, rater, named))
    frame = frame.rename({named: "rater"}) if named and named != "rater" else frame
    return (frame.rename({ident: "text_id"}) if ident and ident != "text_id" else frame), notes


def _from_wide(frame: pl.DataFrame, path: Path, rater: str | None, known: set[str]) -> tuple[pl.DataFrame, list[str]]:
    """A wide file's labels: an id, a column per criterion, the rater from a rater column or `rater`.
    A column named like an id's, a rater's or a text's is read as a criterion only when the corpus
    knows a criterion of that name (`known`: a rubric that scored it, its labels) and it holds
    numbers; every other column that is not read is named in a note."""
    import polars as pl

    found = list(frame.columns)
    ident = next((c for c in ID_COLUMNS if c in found), None)
    if ident is None:
        raise LabelError(f"{path}: no text id column ({' or '.join(ID_COLUMNS)}); found {found}")
    by_column, notes = _rater_column(frame, path, rater, known)
    criteria: list[str] = []
    skipped: list[str] = []
    for column in found:
        if column in (ident, by_column):
            continue
        reason = _not_a_criterion(frame, path, column, known)
        (skipped if reason else criteria).append(f"{column!r} ({reason})" if reason else column)
    if not criteria:
        raise LabelError(
            f"{path}: neither long (text_id, criterion, score[, rater]) nor wide (an id and one numeric column "
            f"per criterion): found columns {found}" + (f"; not read: {', '.join(skipped)}" if skipped else "")
        )
    if skipped:
        notes.append(f"{path}: columns not read as labels: {', '.join(skipped)}")
    who = pl.col(by_column).cast(pl.Utf8) if by_column else pl.lit(rater or "human")
    long = pl.concat(  # a criterion may be named `rater` or `text_id`: no column of the file is renamed
        frame.select(
            pl.col(ident).cast(pl.Utf8).alias("text_id"),
            who.alias("rater"),
            pl.lit(c).alias("criterion"),
            pl.col(c).cast(pl.Utf8).alias("score"),
        )
        for c in criteria
    )
    return long.filter(pl.col("score").is_not_null() & (pl.col("score").str.strip_chars() != "")), notes  # not rated


def _rater_column(frame: pl.DataFrame, path: Path, rater: str | None, known: set[str]) -> tuple[str | None, list[str]]:
    """A wide file's column naming each row's rater (rater, annotator, worker_id or judge, the first
    there), or None for `rater` (given, or `human`); and a note when a given `rater` is not used.
    A column that holds numbers under such a name is ambiguous: with `rater` given it is the
    criterion of that name when the corpus knows one, else the file is refused naming it."""
    named = next((c for c in RATER_COLUMNS if c in frame.columns), None)
    if named is None:
        return None, []
    if _known_numbers(frame, named, known, path):
        if rater is None:
            raise LabelError(
                f"{path}: column {named!r} is both a criterion of the corpus and a rater column's name: give "
                f"--rater NAME to read it as the criterion, or use the long format (text_id, criterion, score, rater)"
            )
        return None, []
    numbers = _numbers(frame[named])
    if rater is None:  # numbers as raters' names: said, in case they are a criterion's scores
        said = f"{path}: column {named!r} holds numbers, read as the raters' names; if they are a criterion's scores, "
        return named, [said + "give them in the long format (text_id, criterion, score, rater)"] if numbers else []
    if numbers:  # `--rater ann` and raters 0.0, 0.25... read from a criterion's scores
        raise LabelError(
            f"{path}: column {named!r} holds numbers, not raters' names, and --rater {rater} names the rater: the "
            f"corpus has no criterion {named!r} (no rubric that scored it, no label), so give its labels in the "
            "long format (text_id, criterion, score, rater), or leave out --rater to read the column as the raters"
        )
    return named, [_unused_rater(path, rater, named)]


def _unused_rater(path: Path, rater: str, column: str) -> str:
    """The note for a `--rater` the file overrides: its rater column names each label's rater."""
    return f"{path}: --rater {rater} not used: column {column!r} names each label's rater"


def _not_a_criterion(frame: pl.DataFrame, path: Path, column: str, known: set[str]) -> str | None:
    """Why a wide file's column is not read as a criterion's labels (None: it is one)."""
    role = next((r for r, names in RESERVED.items() if column in names), None)
    if role and column not in known:
        if not _numbers(frame[column]):
            return "not numbers"
        return f"{role} column's name, and no criterion of the corpus has it: give its labels in the long format"
    return None if _numeric(frame[column], path, column) else "not numbers"


def _known_numbers(frame: pl.DataFrame, column: str, known: set[str], path: Path) -> bool:
    """A column named after a criterion the corpus knows, holding its numbers (a word among them refused)."""
    return column in known and _numeric(frame[column], path, column)


def _numbers(column) -> bool:
    """Every non-empty value a number, and one at least (never refused: a text or rater column's test)."""
    import polars as pl

    if column.dtype.is_numeric():
        return column.drop_nulls().len() > 0
    if column.dtype != pl.Utf8:
        return False
    values = column.str.strip_chars()
    numbers = values.cast(pl.Float64, strict=False)
    return numbers.drop_nulls().len() > 0 and numbers.drop_nulls().len() == values.filter(values != "").len()


def _numeric(column, path: Path, name: str) -> bool:
    """A column of numbers (CSV columns are read as text: every non-empty value parses as one). A
    column mostly of numbers with a word among them is refused naming its row: one `n/a` cell
    dropped the whole criterion's labels, 11 good ones with it, without a word."""
    import polars as pl

    if column.dtype.is_numeric():
        return True
    if column.dtype != pl.Utf8:
        return False
    values = column.str.strip_chars()
    numbers = values.cast(pl.Float64, strict=False)
    words = values.is_not_null() & (values != "") & numbers.is_null()
    if not words.any():
        return numbers.drop_nulls().len() > 0
    if numbers.drop_nulls().len() >= words.sum():
        row = words.arg_true()[0]
        raise LabelError(
            f"{path}: row {row + 1}: column {name!r} holds {values[row]!r}, not a number (its other values are "
            "numbers: a criterion's column); leave the cell empty for no label"
        )
    return False


def topical_chat(folder: str | Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(texts, labels) of a UniEval-style release (Topical-Chat's, or UniEval's SummEval / SFHOT
    sets with `reference` for `context`): averaged human scores (rater `human`) and the UniEval
    judge's published scores (rater `unieval`, where the file has them)."""
    import polars as pl  # imported when used: it starts threads, and the warm worker forks with none alive

    folder = Path(folder)
    path = folder / "judge_predictions.json"
    rows = json.loads(path.read_text(encoding="utf-8"))
    texts, labels = [], []
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or not isinstance(r.get("system_output"), str) or "scores" not in r:
            raise LabelError(f"{path}: row {i + 1} has no `system_output` text or no `scores`")
        # Topical-Chat's fact is `context`; UniEval's other sets (SummEval, SFHOT...) give a `reference`
        text_id = f"tc-{i:03d}" if "context" in r else f"row-{i:04d}"
        context = r.get("context", r.get("reference"))
        texts.append({"text_id": text_id, "text": r["system_output"], "input": r.get("source"), "context": context})
        for rater, field in (("human", "scores"), ("unieval", "predict_scores")):
            if field not in r:
                continue  # a release without the judge's predictions: the human scores only
            scores = r[field] if isinstance(r[field], dict) else ast.literal_eval(r[field])
            labels += [
                {"text_id": text_id, "criterion_id": c, "rater": rater, "score": float(v)} for c, v in scores.items()
            ]
    return pl.DataFrame(texts), pl.DataFrame(labels)


def import_labels(
    path: str | Path, corpus_id: str, warehouse_path: str | Path, rater: str | None = None
) -> tuple[int, list[str], list[str], list[str]]:
    """Read a label file and store it in one transaction: (labels stored, raters, criteria, notes).
    Raters and criteria are said so that one read otherwise than meant is seen; each note is a line
    on what of the file was not read (a wide file's column, an unused `rater`). `rater`: the rater of
    a file that names none (None: not given, `human`); a wide file's columns named like a rater's or
    a text's are read against the criteria the corpus already knows (see `_from_wide`)."""
    from rubricflow.warehouse import db, steps

    path = Path(path)
    raw = _read_file(path)  # an unreadable file is refused before the warehouse is opened
    with db.writer(warehouse_path) as con:
        frame, notes = label_frame(raw, path, rater, known_criteria(con, corpus_id))
        n = steps.load_labels(con, corpus_id, frame, str(path))
    return n, sorted(set(frame["rater"].to_list())), sorted(set(frame["criterion_id"].to_list())), notes


def known_criteria(con, corpus_id: str) -> set[str]:
    """The criteria a corpus already has: those of every rubric a run scored it with, and its labels'."""
    from rubricflow.warehouse.sqlfiles import fetch_tuples

    return {row[0] for row in fetch_tuples(con, "corpus_criteria.sql", corpus=corpus_id)}


def import_topical_chat(folder: str | Path, corpus_id: str, warehouse_path: str | Path) -> None:
    """The Topical-Chat release's texts and labels into the warehouse as corpus `corpus_id`."""
    from rubricflow.warehouse import db, steps

    folder = Path(folder)
    if not (folder / "judge_predictions.json").is_file():
        raise LabelError(f"{folder}: no judge_predictions.json (expected a UniEval-style release, e.g. Topical-Chat's)")
    texts, labels = topical_chat(folder)
    with db.writer(warehouse_path) as con:
        steps.load_texts(con, corpus_id, texts, str(folder))
        steps.load_labels(con, corpus_id, labels, str(folder))


def import_graded_tree(
    path: str | Path, corpus_id: str, warehouse_path: str | Path, text_id: str | None = None, rater: str = "grader"
) -> tuple[int, str, list[dict]]:
    """A hand-graded PaperBench tree (expected_result.json): its rubric registered in the warehouse,
    and every node's grade stored as a label of one submission (`text_id`, default the file's stem),
    the leaves as criterion scores and the internal nodes as the grader's aggregates. Returns
    (labels stored, rubric hash, the internal-node check: the grader's score beside the tree's
    aggregate of the leaf grades, from the `graded_nodes` view)."""
    import polars as pl  # imported when used: it starts threads, and the warm worker forks with none alive

    from rubricflow.rubrics.compiler import compile_or_raise
    from rubricflow.rubrics.formats import load_rubric
    from rubricflow.rubrics.importers.paperbench import is_graded_tree, node_grades
    from rubricflow.warehouse import db, steps

    path = Path(path)
    try:
        tree = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LabelError(f"{path}: cannot be read as JSON: {exc}") from None
    if not is_graded_tree(tree):
        raise LabelError(
            f"{path}: not a graded PaperBench tree (a task node with `requirements`, `sub_tasks` and `score`)"
        )
    bundle = compile_or_raise(load_rubric(path), source=str(path))
    submission = text_id or path.name.split(".")[0]
    frame = pl.DataFrame(
        [
            {"text_id": submission, "criterion_id": node, "rater": rater, "score": score}
            for node, score in node_grades(tree).items()
        ]
    )
    with db.writer(warehouse_path) as con:
        db.register_rubric(con, bundle, str(path))
        n = steps.load_labels(con, corpus_id, frame, str(path))
        check = db.fetch(con, "graded_nodes.sql", corpus=corpus_id, rubric=bundle.hash, rater=rater, text=submission)
    return n, bundle.hash, check
