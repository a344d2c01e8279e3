"""Corpora to normalised Parquet, streamed in batches so memory stays flat.

Reads JSONL, CSV, Parquet, a folder of .txt/.md files or a Hugging Face dataset folder
(tasks/loaders/hf_datasets.py). Every bad row goes to a quarantine file
with its row number and reason; nothing is dropped silently.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import itertools
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rubricflow.errors import InputError
from rubricflow.tasks.loaders.candidates import expand_sets, is_candidate_set
from rubricflow.tasks.loaders.hf_datasets import dataset_records, find_dataset
from rubricflow.tasks.loaders.pairs import expand_pairs, is_pair_record
from rubricflow.tasks.loaders.trace_formats import detect_format, first_record, trace_records
from rubricflow.tasks.loaders.transcripts import (
    TranscriptWriter,
    id_text,
    is_transcript_record,
    json_or_as_is,
    parse_messages,
    remove_transcript_files,
    transcript_of,
    unmerged,
)
from rubricflow.warehouse.chat_files import OUTPUTS, normalise_chat_jsonl
from rubricflow.warehouse.private_files import owner_only

SCHEMA = pa.schema(
    [
        ("text_id", pa.string()),
        ("text", pa.string()),
        ("input", pa.string()),
        ("context", pa.string()),
        ("genre", pa.string()),
        ("metadata", pa.string()),  # JSON object of the row's other fields
        ("sha256", pa.string()),
        ("row", pa.int64()),
    ]
)
TEXT_FIELDS = ("text", "output", "completion", "response", "content")
ID_FIELDS = ("text_id", "id")
TRANSCRIPT_ID_FIELDS = ("transcript_id", "text_id", "id", "session_id", "trace_id")
KNOWN = {"text_id", "id", "text", "input", "context", "genre"}
TRANSCRIPT_KNOWN = {*TRANSCRIPT_ID_FIELDS, "messages", "tools", "genre"}
ROLES = ("input", "context", "genre")  # optional columns a corpus may map from columns of other names
DEFAULT_MAX_CHARS = 1_000_000
BATCH_ROWS = 20_000


class CorpusError(InputError):
    """The corpus as a whole cannot be read (missing file, no text column, unknown format)."""


@dataclass
class IngestReport:
    source: str
    parquet: Path
    quarantine: Path
    rows_ok: int = 0
    rows_quarantined: int = 0
    duplicates_identical: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    split: str | None = None  # the split read, when the source is a Hugging Face dataset
    transcripts: int = 0  # texts that are transcripts (rows with `messages`)
    messages: int = 0  # their messages, in messages.parquet beside texts.parquet


BOM = "\ufeff"  # a byte-order mark: not part of the first field or text


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


COMPRESSIONS = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd", ".bz2": "bz2"}  # read by pyarrow's streams


def _kind(path: Path) -> tuple[str, str | None]:
    """The format's suffix and the compression: `replies.jsonl.gz` is (".jsonl", "gzip")."""
    suffixes = [s.lower() for s in path.suffixes]
    if len(suffixes) >= 2 and suffixes[-1] in COMPRESSIONS:
        return suffixes[-2], COMPRESSIONS[suffixes[-1]]
    return path.suffix.lower(), None


def _open(path: Path, compression: str | None):
    """The file's bytes, decompressed as they are read (gzip, zstd, bz2)."""
    return pa.input_stream(str(path), compression=compression) if compression else path.open("rb")


def _lines(stream) -> Iterator[bytes]:
    """The lines of a decompressing stream (pyarrow's streams read, but do not iterate by line)."""
    rest = b""
    while chunk := stream.read(1 << 20):
        *lines, rest = (rest + chunk).split(b"\n")
        yield from (line + b"\n" for line in lines)
    if rest:
        yield rest


def unreadable_json(exc: BaseException) -> str:
    """Why Python's JSON reader gave up on a row, in a few words (its own messages run long)."""
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply to read"
    return f"a number too long to read ({str(exc).split(':')[0].lower()})"


def _encodable(value: Any) -> bool:
    """Whether every string in `value` is valid Unicode (a JSON `\\ud800` escape decodes to a lone surrogate)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _records(path: Path, encoding: str | None = None) -> Iterator[tuple[int, Any, str | None]]:
    """(row number, record or None, error) for every row; row numbers are 1-based lines/rows/files.
    A compressed file that is truncated or not what its suffix says is refused whole, in one line."""
    suffix, compression = _kind(path)
    if compression is None or path.is_dir():
        yield from _uncompressed_records(path, suffix, compression, encoding)
        return
    number = 0
    try:
        for number, record, error in _uncompressed_records(path, suffix, compression, encoding):
            yield number, record, error
    except (OSError, pa.ArrowException) as exc:
        where = f"after row {number}" if number else "before its first row"
        raise CorpusError(f"{path}: not a readable {compression} file ({where}): {exc}") from None


def _uncompressed_records(
    path: Path, suffix: str, compression: str | None, encoding: str | None
) -> Iterator[tuple[int, Any, str | None]]:
    if path.is_dir():
        yield from _folder_records(path)
    elif suffix in (".jsonl", ".ndjson"):
        yield from _jsonl_records(path, compression)
    elif suffix == ".json":  # one JSON array of records
        yield from _json_records(path, compression)
    elif suffix in (".csv", ".tsv", ".txt"):  # .txt: Excel's "Unicode Text" (UTF-16, tab-separated)
        yield from _csv_records(path, compression, encoding)
    elif suffix == ".parquet":
        yield from _parquet_records(path)
    else:
        raise CorpusError(
            f"{path}: unsupported corpus format {suffix!r} (use .jsonl, .json, .csv, .tsv, .txt, .parquet or a "
            "folder; JSONL, JSON and CSV may be compressed: .gz, .zst, .bz2)"
        )


def _parquet_records(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    """A Parquet file's rows; an empty, truncated or non-Parquet file is refused naming it."""
    number = 0
    try:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS):
            for record in batch.to_pylist():
                number += 1
                yield number, unmerged(record), None
    except (pa.ArrowException, OSError) as exc:
        where = f"after row {number}" if number else "before its first row"
        raise CorpusError(f"{path}: not a readable Parquet file ({where}): {exc}") from None


def _folder_records(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    files = sorted(_folder_files(path))
    if not files:
        raise CorpusError(
            f"{path}: folder holds no .txt or .md files and is no Hugging Face dataset "
            "(a save_to_disk folder or Parquet shards)"
        )
    for number, p in enumerate(files, start=1):
        if p.is_symlink():
            yield number, {"text_id": str(p.relative_to(path))}, "a symbolic link: not followed"
            continue
        try:
            text = p.read_bytes().decode("utf-8").removeprefix(BOM)
            yield number, {"text_id": str(p.relative_to(path)), "text": text}, None
        except UnicodeDecodeError as exc:
            yield number, {"text_id": str(p.relative_to(path))}, f"invalid UTF-8 at byte {exc.start}"


def _jsonl_records(path: Path, compression: str | None) -> Iterator[tuple[int, Any, str | None]]:
    with _open(path, compression) as fh:
        for number, raw in enumerate(fh if compression is None else _lines(fh), start=1):
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8").removeprefix(BOM if number == 1 else "")  # Excel and Notepad write one
                record = json.loads(line)
            except UnicodeDecodeError as exc:
                yield number, None, f"invalid UTF-8 at byte {exc.start}"
                continue
            except json.JSONDecodeError as exc:
                yield number, None, f"invalid JSON: {exc.msg} (column {exc.colno})"
                continue
            except (ValueError, RecursionError) as exc:  # a number of 5,000 digits, arrays nested 100,000 deep
                yield number, None, unreadable_json(exc)
                continue
            if "\\ud" in line.lower() and not _encodable(record):
                yield number, None, "a lone surrogate (such as \\ud800) in a string: not valid Unicode"
                continue
            if not isinstance(record, dict):
                yield number, None, f"a JSON object is required, found {type(record).__name__}"
                continue
            yield number, record, None


def _json_records(path: Path, compression: str | None) -> Iterator[tuple[int, Any, str | None]]:
    try:
        with _open(path, compression) as fh:
            rows = json.loads(fh.read().removeprefix(BOM.encode()))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorpusError(f"{path}: not a JSON array of records: {exc}") from None
    except (ValueError, RecursionError) as exc:  # one array: the whole file is refused
        raise CorpusError(f"{path}: not a readable JSON array of records: {unreadable_json(exc)}") from None
    if not _encodable(rows):
        raise CorpusError(f"{path}: a lone surrogate (such as \\ud800) in a string: not valid Unicode")
    if not isinstance(rows, list):
        raise CorpusError(f"{path}: a .json corpus is an array of records, found {type(rows).__name__}")
    for number, record in enumerate(rows, start=1):
        yield (
            (number, record, None)
            if isinstance(record, dict)
            else (number, None, f"a JSON object is required, found {type(record).__name__}")
        )


CSV_FIELD_LIMIT = 2**31 - 1  # Python's default (131,072) is below --max-chars: a longer field desynchronised the reader


def _folder_files(folder: Path) -> Iterator[Path]:
    """The .txt/.md files under a folder, without descending into linked folders; linked files are
    listed (and quarantined by the caller), so a link to /etc/hostname is never read."""
    for root, _dirs, names in os.walk(folder, followlinks=False):
        for name in names:
            candidate = Path(root) / name
            if candidate.suffix.lower() in (".txt", ".md"):
                yield candidate


CORPUS_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def check_corpus_id(corpus_id: str) -> str:
    """A corpus id names a folder under the warehouse: letters, digits, '.', '_' and '-' only."""
    if not CORPUS_ID.fullmatch(corpus_id) or ".." in corpus_id:
        raise CorpusError(
            f"corpus id {corpus_id!r} is not a name: use letters, digits, '.', '_' and '-' "
            "(at most 128, starting with a letter or digit)"
        )
    return corpus_id


def _csv_records(
    path: Path, compression: str | None = None, encoding: str | None = None
) -> Iterator[tuple[int, Any, str | None]]:
    """Rows of a CSV file, strictly: a row with the wrong number of fields or broken quoting is
    quarantined with its line, and a quote that never closes quarantines the rest of the file by
    name (it used to swallow the rows after it silently)."""
    csv.field_size_limit(max(csv.field_size_limit(), CSV_FIELD_LIMIT))
    raw = _open(path, compression)
    try:
        text, header = _csv_text(raw, encoding)
    except UnicodeDecodeError as exc:
        raw.close()
        raise not_decodable(path, compression, exc) from None
    reader = csv.DictReader(itertools.chain([header], text), delimiter=csv_delimiter(header), strict=True)
    width = None
    number = 0
    while True:
        first_line = reader.line_num + 1
        try:
            record = next(reader)
        except StopIteration:
            break
        except UnicodeDecodeError as exc:  # a file in another encoding: refused whole, naming the row
            raw.close()
            raise not_decodable(path, compression, exc) from None
        except csv.Error as exc:
            number += 1
            if "unexpected end of data" in str(exc):
                yield (
                    number,
                    None,
                    (
                        f"malformed CSV: a quoted field opened on line {first_line} never closes; "
                        f"line {first_line} to the end of the file was not read as rows"
                    ),
                )
                break
            yield number, None, f"malformed CSV on line {first_line}: {exc}"
            continue
        number += 1
        width = width or len(reader.fieldnames or [])
        fields = len(record) - 1 + len(record[None]) if None in record else sum(v is not None for v in record.values())
        if fields != width:
            yield number, None, f"row has {fields} field{'s' * (fields != 1)}, header has {width} (line {first_line})"
            continue
        yield number, record, None
    raw.close()


def _csv_text(raw, encoding: str | None = None) -> tuple[io.TextIOWrapper, str]:
    """The CSV as text and its header line: in `encoding` when given, else UTF-8 (an Excel "CSV
    UTF-8" export's BOM is not the id) or, after a UTF-16 byte-order mark, UTF-16 (Excel's
    "Unicode Text" export)."""
    buffered = raw if hasattr(raw, "peek") else io.BufferedReader(raw)
    chosen = encoding or csv_encoding(buffered.peek(2))
    text = io.TextIOWrapper(buffered, encoding=chosen, newline="", errors="strict")
    header = text.readline()
    return text, header.removeprefix(BOM)


def check_encoding(name: str) -> str:
    """A text encoding Python knows (cp1252, latin-1, utf-16...), else a CorpusError naming it."""
    try:
        return codecs.lookup(name).name
    except LookupError:
        raise CorpusError(
            f"--encoding {name!r}: not a text encoding Python knows (e.g. cp1252, latin-1, utf-16)"
        ) from None


def not_decodable(path: Path, compression: str | None, exc: UnicodeDecodeError) -> CorpusError:
    """The one-line error for a CSV that is not in the encoding read: the row and line where the
    first undecodable byte is (the reader decodes blocks ahead of the rows, so its own offset names
    no row), and what to pass (Excel's "CSV (Comma delimited)" is Windows-1252: --encoding cp1252)."""
    found: list = []

    def decoded() -> Iterator[str]:
        with _open(path, compression) as stream:
            for number, line in enumerate(_lines(stream), start=1):
                try:
                    yield line.decode(exc.encoding)
                except UnicodeDecodeError as bad:
                    found.append((number, line[bad.start : bad.start + 1].hex().upper()))
                    return

    try:
        records = sum(1 for _ in csv.reader(decoded()))  # the header and the rows before the bad line
    except csv.Error:
        records = 0
    if not found:
        return CorpusError(f"{path}: not {exc.encoding} ({exc.reason}): pass --encoding (e.g. cp1252)")
    line, byte = found[0]
    where = f"row {records} (line {line})" if records else f"the header (line {line})"
    return CorpusError(
        f'{path}: {where}: byte 0x{byte} is not {exc.encoding}; an Excel "CSV (Comma delimited)" file is '
        'Windows-1252: pass --encoding cp1252 (or save it as "CSV UTF-8")'
    )


def csv_encoding(head: bytes) -> str:
    """UTF-16 after its byte-order mark, else UTF-8 (a BOM dropped): from a file's first bytes."""
    return "utf-16" if head[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"


def csv_delimiter(header: str) -> str:
    """Comma, or the semicolon or tab an Excel export in another locale (or as "Unicode Text")
    writes: whichever the header line holds most of."""
    return max((",", ";", "\t"), key=header.count) if header.strip() else ","


def _text_column(record: dict, text_field: str | None) -> str | None:
    if text_field:
        return text_field
    return next((f for f in TEXT_FIELDS if f in record), None)


def ingest_corpus(
    source: str | Path,
    out_dir: str | Path,
    text_field: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    limit: int | None = None,
    id_field: str | None = None,
    encoding: str | None = None,
    fields: dict[str, str] | None = None,
    split: str | None = None,
    trace_format: str | None = None,
) -> IngestReport:
    """Write `out_dir/texts.parquet` and `out_dir/quarantine.jsonl`; both are replaced atomically.
    With `limit`, only the source's first `limit` rows are read. A text's id comes from `id_field`,
    else a `text_id` or `id` column, else the first 16 hex digits of the text's sha256 (stable
    across re-ingests of the same text). `encoding` is a CSV/TSV's text encoding (default: UTF-8, or
    UTF-16 after its byte-order mark); a name Python does not know is refused. `fields` maps input / context / genre to the
    source's columns of other names ({"input": "Customer message"}). `split` picks a Hugging Face
    dataset's split (default "train", or its only one). `trace_format` names an agent-trace format
    (tasks/loaders/trace_formats.FORMATS; default: detected from the file)."""
    source, out_dir = Path(source), Path(out_dir)
    if encoding is not None:
        check_encoding(encoding)
    if not source.exists():
        raise CorpusError(f"{source}: no such file or folder")
    split_read, records = corpus_records(source, encoding, split, trace_format)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = IngestReport(str(source), out_dir / "texts.parquet", out_dir / "quarantine.jsonl", split=split_read)
    plain = not (
        text_field or limit or id_field or encoding or split or any(v != k for k, v in check_fields(fields).items())
    )
    if plain and trace_format in (None, "openai") and _chats_in_columns(source, out_dir, report, max_chars):
        return report
    tmp_parquet = report.parquet.with_suffix(".parquet.tmp")
    tmp_quarantine = report.quarantine.with_suffix(".jsonl.tmp")
    try:
        mapped = check_fields(fields)
        _write(source, report, tmp_parquet, tmp_quarantine, text_field, max_chars, limit, id_field, records, mapped)
    except BaseException:
        tmp_parquet.unlink(missing_ok=True)
        tmp_quarantine.unlink(missing_ok=True)
        raise
    if report.rows_ok == 0 and report.rows_quarantined == 0:
        tmp_parquet.unlink(missing_ok=True)
        tmp_quarantine.unlink(missing_ok=True)
        raise CorpusError(f"{source}: empty corpus (no rows)")
    os.replace(tmp_parquet, report.parquet)
    os.replace(tmp_quarantine, report.quarantine)
    owner_only(out_dir, report.parquet, report.quarantine)  # the texts are the user's only, whatever the umask
    return report


def _chats_in_columns(source: Path, out_dir: Path, report: IngestReport, max_chars: int) -> bool:
    """An OpenAI chat JSONL file ingested by DuckDB (warehouse/chat_files.py), the files and `report`
    as the row-by-row path leaves them; False (nothing written) when that path must read it."""
    if source.is_dir() or _kind(source) != (".jsonl", None) or not _first_is_chat(source):
        return False
    found = normalise_chat_jsonl(source, out_dir, max_chars)
    if found is None:
        return False
    report.quarantine.write_text("", encoding="utf-8")
    owner_only(out_dir, report.parquet, report.quarantine, *(out_dir / f"{n}.parquet" for n in OUTPUTS))
    report.rows_ok = report.transcripts = found.transcripts
    report.messages = found.messages
    return True


def _first_is_chat(source: Path) -> bool:
    """Whether the file's first line is a transcript (a `messages` list, no text column, no pair)."""
    with source.open("rb") as fh:
        head = fh.readline(1 << 20)
    try:
        record = json.loads(head)
    except (ValueError, RecursionError):
        return False
    plain_texts = _text_column(record, None) is not None if isinstance(record, dict) else True
    shaped = is_pair_record(record) or is_candidate_set(record)
    return isinstance(record, dict) and is_transcript_record(record) and not plain_texts and not shaped


def corpus_records(
    source: Path, encoding: str | None, split: str | None, trace_format: str | None = None
) -> tuple[str | None, Iterator[tuple[int, Any, str | None]]]:
    """(the split read, the source's rows): a Hugging Face dataset folder's chosen split, an agent
    trace file's transcripts (tasks/loaders/trace_formats.py), else (None, the file or folder as
    `_records` reads it). `split` on anything else is an error, not ignored."""
    if trace_format == "openai" and not source.is_dir() and not is_transcript_record(first_record(source)):
        raise CorpusError(  # asked for chats, a file of plain texts loaded as plain texts: other work than asked
            f"{source}: --format openai: its first row is no chat transcript (a `messages` list of role/content "
            "messages); leave --format out for a corpus of texts"
        )
    trace_format = trace_format or detect_format(source)
    if trace_format not in (None, "openai"):
        return None, trace_records(source, trace_format)
    dataset = find_dataset(source, split) if source.is_dir() else None
    if dataset is not None:
        return dataset.split, dataset_records(dataset)
    if split is not None:
        raise CorpusError(
            f"{source}: --split applies to a Hugging Face dataset folder (save_to_disk or Parquet shards)"
        )
    return None, _records(source, encoding)


def check_fields(fields: dict[str, str] | None) -> dict[str, str]:
    """The column of each optional role (input, context, genre): the role's own name unless mapped."""
    unknown = sorted(set(fields or {}) - set(ROLES))
    if unknown:
        raise CorpusError(f"unknown column role(s) {unknown}: map only {', '.join(ROLES)}")
    return {role: (fields or {}).get(role) or role for role in ROLES}


def _check_columns(
    source: Path,
    number: int,
    record: dict,
    column: str | None,
    text_field: str | None,
    id_field: str | None,
    fields: dict[str, str] | None = None,
) -> bool:
    """The first good row must hold the text column (and the id and mapped columns asked for): a
    corpus of the wrong shape fails at once, by name, rather than quarantining every row."""
    if column is None or (text_field and text_field not in record):
        wanted = text_field or " or ".join(TEXT_FIELDS)
        raise CorpusError(f"{source}: row {number} has no text column ({wanted}); columns are {sorted(record)}")
    if id_field and id_field not in record:
        raise CorpusError(f"{source}: row {number} has no id column {id_field!r}; columns are {sorted(record)}")
    for role, name in (fields or {}).items():
        if name != role and name not in record:
            raise CorpusError(f"{source}: row {number} has no {role} column {name!r}; columns are {sorted(record)}")
    return True


def _text_row(
    number: int,
    record: dict,
    column: str | None,
    id_field: str | None,
    max_chars: int,
    fields: dict[str, str] | None = None,
) -> tuple[dict | None, str | None, Any]:
    """(row, None, id) for a text to keep, (None, reason, id) for one to quarantine."""
    text = record.get(column) if column else None
    text_id = next(
        (record[f] for f in ((id_field,) if id_field else ID_FIELDS) if record.get(f) not in (None, "")), None
    )
    if id_field and text_id is None:
        return None, f"missing or empty id ({id_field})", None
    if not isinstance(text, str) or not text.strip():
        return None, _why_no_text(text), text_id
    if len(text) > max_chars:
        return None, f"text over the size cap ({len(text)} > {max_chars} characters)", text_id
    digest = _sha(text)
    text_id = id_text(text_id) if text_id is not None else digest[:16]
    roles = fields or {role: role for role in ROLES}
    used = {column, *roles.values()}
    extra = {k: v for k, v in record.items() if k not in KNOWN and k not in used}
    row = {
        "text_id": text_id,
        "text": text,
        "input": _str_or_none(record.get(roles["input"])),
        "context": _str_or_none(record.get(roles["context"])),
        "genre": _str_or_none(record.get(roles["genre"])),
        "metadata": json.dumps(extra, ensure_ascii=False, default=str) if extra else None,
        "sha256": digest,
        "row": number,
    }
    return row, None, text_id


@dataclass
class _RowMaker:
    """Each good record's text row: a plain text's, or (when the first good record is a transcript:
    a `messages` list and no text column) a transcript's rendering, its messages kept for the writer."""

    source: Path
    out_dir: Path
    text_field: str | None
    id_field: str | None
    max_chars: int
    fields: dict[str, str] | None
    transcripts: TranscriptWriter | None = None
    checked: bool = False

    def row(self, number: int, record: dict) -> tuple[dict | None, str | None, Any, Any]:
        """(row, reason, id, transcript or None), as _text_row / _transcript_row give them."""
        column = _text_column(record, self.text_field)
        if not self.checked:
            # a first row with `messages` of another shape (null) is a transcript to quarantine, as any later one is
            if column is None and self.text_field is None and (is_transcript_record(record) or "messages" in record):
                self.transcripts, self.checked = TranscriptWriter(self.out_dir), True
            else:
                self.checked = _check_columns(
                    self.source, number, record, column, self.text_field, self.id_field, self.fields
                )
        if self.transcripts is not None:
            return _transcript_row(number, record, self.id_field, self.max_chars)
        return (*_text_row(number, record, column, self.id_field, self.max_chars, self.fields), None)


def _write(
    source: Path,
    report: IngestReport,
    tmp_parquet: Path,
    tmp_quarantine: Path,
    text_field: str | None,
    max_chars: int,
    limit: int | None,
    id_field: str | None,
    records: Iterator[tuple[int, Any, str | None]],
    fields: dict[str, str] | None = None,
) -> None:
    seen: dict[str, bytes] = {}
    batch: list[dict] = []
    maker = _RowMaker(source, report.parquet.parent, text_field, id_field, max_chars, fields)
    with (
        pq.ParquetWriter(tmp_parquet, SCHEMA, compression="zstd") as writer,
        tmp_quarantine.open("w", encoding="utf-8") as bad,
    ):

        def reject(number: int, reason: str, text_id: Any = None) -> None:
            report.rows_quarantined += 1
            key = reason.split(":")[0].split(" (")[0]
            report.reasons[key] = report.reasons.get(key, 0) + 1
            bad.write(json.dumps({"source": str(source), "row": number, "text_id": text_id, "reason": reason}) + "\n")

        def flush() -> None:
            writer.write_table(pa.Table.from_pylist(batch, schema=SCHEMA))
            report.rows_ok += len(batch)
            batch.clear()

        try:
            for number, record, error in _pairs_or_texts(records):
                if limit is not None and number > limit:
                    break
                if error:
                    reject(number, error, (record or {}).get("text_id"))
                    continue
                row, reason, text_id, transcript = maker.row(number, record)
                if row is not None and row["text_id"] in seen:
                    if seen[row["text_id"]] == bytes.fromhex(row["sha256"])[:16]:
                        report.duplicates_identical += 1
                        continue
                    row, reason = None, "duplicate text_id with different text"
                if row is None:
                    reject(number, reason or "", text_id)
                    continue
                seen[row["text_id"]] = bytes.fromhex(row["sha256"])[:16]
                batch.append(row)
                if transcript is not None:
                    maker.transcripts.add(transcript)  # type: ignore[union-attr]
                if len(batch) >= BATCH_ROWS:
                    flush()
            if batch:
                flush()
        except BaseException:
            if maker.transcripts is not None:
                maker.transcripts.close(keep=False)
            raise
    _finish_transcripts(report, maker.transcripts)


def _finish_transcripts(report: IngestReport, transcripts: TranscriptWriter | None) -> None:
    """Move the transcript files into place (or, for a corpus of plain texts, remove earlier ones)."""
    if transcripts is None:
        remove_transcript_files(report.parquet.parent)
        return
    transcripts.close(keep=True)
    report.transcripts = report.rows_ok
    report.messages = transcripts.messages_written


def _transcript_row(
    number: int, record: dict, id_field: str | None, max_chars: int
) -> tuple[dict | None, str | None, Any, Any]:
    """(row, None, id, transcript) for a transcript to keep, (None, reason, id, None) to quarantine.
    Its text is the canonical rendering; its other fields (not messages or tools) are metadata."""
    text_id = next(
        (record[f] for f in ((id_field,) if id_field else TRANSCRIPT_ID_FIELDS) if record.get(f) not in (None, "")),
        None,
    )
    if id_field and text_id is None:
        return None, f"missing or empty id ({id_field})", None, None
    try:  # a row of another shape (no messages, a part or call of another type) is the row's fault
        messages = parse_messages(record.get("messages"))
        tools = json_or_as_is(record.get("tools"))
        transcript = transcript_of(id_text(text_id) if text_id is not None else "", messages, tools)
    except (ValueError, TypeError, AttributeError, RecursionError) as exc:
        return None, f"bad transcript: {' '.join(str(exc).split())[:200]}", text_id, None
    text = transcript.rendering
    if len(text) > max_chars:
        return None, f"text over the size cap ({len(text)} > {max_chars} characters)", text_id, None
    digest = _sha(text)
    if text_id is None:
        transcript = transcript_of(digest[:16], messages, tools)
    extra = {k: v for k, v in record.items() if k not in TRANSCRIPT_KNOWN and k != id_field}
    row = {
        "text_id": transcript.transcript_id,
        "text": text,
        "input": None,
        "context": None,
        "genre": _str_or_none(record.get("genre")),
        # compact, as the DuckDB path (warehouse/chat_files.py) writes it
        "metadata": json.dumps(extra, ensure_ascii=False, default=str, separators=(",", ":")) if extra else None,
        "sha256": digest,
        "row": number,
    }
    return row, None, transcript.transcript_id, transcript


def _pairs_or_texts(records: Iterator[tuple[int, Any, str | None]]) -> Iterator[tuple[int, Any, str | None]]:
    """A pair corpus (rows with response_a / response_b, or preference pairs) becomes two texts per
    pair (tasks/loaders/pairs.py), a candidate-set corpus (rows with `candidates`) one text per set
    (tasks/loaders/candidates.py); any other corpus passes through as it is."""
    head: list[tuple[int, Any, str | None]] = []
    for row in records:
        head.append(row)
        if row[1] is not None and not row[2]:
            break
    rows = itertools.chain(head, records)
    if head and is_candidate_set(head[-1][1]):
        return expand_sets(rows)
    return expand_pairs(rows) if head and is_pair_record(head[-1][1]) else rows


def _str_or_none(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _why_no_text(value: object) -> str:
    """Why a row's text cannot be judged, naming what it is (a number is not "missing")."""
    if value is None:
        return "missing text"
    if isinstance(value, str):
        return "empty text"
    kind = {bool: "true/false", int: "a number", float: "a number", dict: "an object", list: "a list"}.get(
        type(value), type(value).__name__
    )
    return f"text is {kind} ({str(value)[:40]}), not a string"
