"""OpenAI chat JSONL to a corpus folder's Parquet files (texts, messages, bodies, transcripts) by
DuckDB, in parallel and in columns, instead of a Python loop per message: at a million ~40-message
transcripts the row-by-row path (tasks/loaders/transcripts.py) spends ~15 minutes of one core,
this one a few (bench/traces.py). Both write the same files; a file this path does not read the way
the row-by-row path would (content parts, a legacy function_call, a bad row to quarantine, a duplicated
id, a key given twice) is left to that path whole, so what is ingested never depends on which path ran."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb

from .sqlfiles import fetch, literal, sql

OUTPUTS = ("texts", "messages", "bodies", "transcripts")
MEMORY_LIMIT = "1536MB"  # the staging spills past this: the 1M-transcript bench's 4 GB RSS budget
# Transcripts per row group of the staged file: DuckDB reads a Parquet file a row group per thread, so
# the default (122,880 transcripts, ~1 GB of messages) read a 100,000-transcript file on one core.
STAGED_ROW_GROUP = 4096


@dataclass(frozen=True)
class ChatFiles:
    """What the DuckDB path wrote: its transcripts and their messages."""

    transcripts: int
    messages: int


def normalise_chat_jsonl(source: Path, out_dir: Path, max_chars: int) -> ChatFiles | None:
    """Write out_dir/{texts,messages,bodies,transcripts}.parquet from the chat JSONL `source`, or
    None (nothing written) when the file needs the row-by-row path: a line DuckDB cannot read as a
    chat, or one that path would read differently or quarantine."""
    work = out_dir / ".chats.tmp"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        with duckdb.connect(config={"memory_limit": MEMORY_LIMIT, "temp_directory": str(work / "spill")}) as con:
            staged = work / "staged.parquet"
            con.execute(f"SET VARIABLE source = {literal(source)}")
            con.execute(f"SET VARIABLE staged = {literal(staged)}")
            con.execute(f"SET VARIABLE max_chars = {int(max_chars)}")
            con.execute(sql("chats_odd.sql"))
            if not _read_alike(con):
                return None
            try:
                _copy(con, "chats_stage.sql", staged, compression="lz4_raw", row_group=STAGED_ROW_GROUP)
            except duckdb.Error:
                return None  # not JSON lines DuckDB reads as chats: the row-by-row path says which line
            [found] = fetch(con, "chats_problems.sql")
            if found["odd"] or found["duplicates"] or found["too_long"] or not found["transcripts"]:
                return None
            for name in OUTPUTS:
                _copy(con, f"chats_{name}.sql", work / f"{name}.parquet")
        for name in OUTPUTS:
            os.replace(work / f"{name}.parquet", out_dir / f"{name}.parquet")
        return ChatFiles(found["transcripts"], found["messages"])
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _read_alike(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether Python's json reads the file's fields as DuckDB does: a key given twice (DuckDB keeps
    the first, Python the last) or a message whose calls share an id needs the row-by-row path."""
    try:
        [found] = fetch(con, "chats_keys.sql")
    except duckdb.Error:
        return False  # a duplicated key, or a line of another shape: the row-by-row path reads it
    return not found["shared_ids"]


def _copy(
    con: duckdb.DuckDBPyConnection, query: str, path: Path, compression: str = "zstd", row_group: int = 122_880
) -> None:
    """One query's rows to a Parquet file (COPY takes no parameters: the query reads variables)."""
    statement = sql(query).strip().rstrip(";")
    options = f"FORMAT parquet, COMPRESSION {compression}, ROW_GROUP_SIZE {int(row_group)}"
    con.execute(f"COPY ({statement}) TO {literal(path)} ({options})")
