"""Corpora given as data in memory (polars or pandas DataFrames, Arrow tables, lists of dicts),
as one Arrow table, checked whole before anything is written."""

from __future__ import annotations

import json
from typing import Any

from rubricflow.errors import InputError

TEXT_COLUMNS = ("text", "output", "completion", "response", "content")  # as tasks/loaders/ingest.TEXT_FIELDS


def table_of(data: Any) -> Any:
    """An Arrow table of `data`; anything else is refused, naming what it is. A `messages` column
    (a corpus of transcripts) becomes JSON text, so messages of different shapes make one column
    (and, from rows, its `tools`: see _dumped_messages)."""
    import pyarrow as pa

    if isinstance(data, pa.Table):
        return messages_as_json(data)
    if isinstance(data, list | tuple):
        rows = [_dumped_messages(r) for r in data]
        return _from_records(rows)
    module = type(data).__module__.split(".")[0]
    if module == "polars" and hasattr(data, "to_arrow"):
        return messages_as_json(data.to_arrow())
    if module == "pandas" and hasattr(data, "columns"):
        for column in ("messages", "tools") if "messages" in data.columns else ():
            if column in data.columns:
                data = data.assign(**{column: [_json_or_none(v) for v in data[column]]})
        return _from_pandas(data)
    raise InputError(
        f"cannot ingest a {type(data).__name__}: pass a path, a polars or pandas DataFrame, an Arrow table "
        "or a list of dicts"
    )


def _json_or_none(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if hasattr(value, "tolist"):  # a numpy array of dicts (pandas from Parquet)
        value = value.tolist()
    return json.dumps(value, ensure_ascii=False, default=str)


def _dumped_messages(row: Any) -> Any:
    """A row's messages and tools as JSON text: as Arrow objects, every row's would carry the other
    rows' keys as nulls (a tool schema gained the other tools' properties)."""
    if isinstance(row, dict) and isinstance(row.get("messages"), list):
        tools = row.get("tools")
        return {**row, "messages": _json_or_none(row["messages"])} | (
            {"tools": _json_or_none(tools)} if isinstance(tools, list | dict) else {}
        )
    return row


def messages_as_json(table: Any) -> Any:
    """The table with its `messages` column (lists of message structs) as JSON text."""
    import pyarrow as pa

    if "messages" not in table.column_names or pa.types.is_string(table.schema.field("messages").type):
        return table
    from rubricflow.tasks.loaders.transcripts import unmerged

    values = [_json_or_none(unmerged({"messages": v})["messages"]) for v in table.column("messages").to_pylist()]
    return table.set_column(table.column_names.index("messages"), "messages", pa.array(values, pa.string()))


def _from_records(rows: list) -> Any:
    import pyarrow as pa

    for n, row in enumerate(rows):
        if not isinstance(row, dict):
            raise InputError(f"row {n + 1}: a dict is required, found {type(row).__name__}")
    try:
        return pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:  # a column of mixed types: name it and the row
        raise InputError(_mixed_column(rows) or f"the rows cannot form one table: {exc}") from None


def _from_pandas(frame: Any) -> Any:
    """A pandas frame as Arrow; an object column mixing kinds (a text column holding a number) is
    refused naming the column and the row (Arrow's own error named neither row nor id)."""
    import pyarrow as pa

    objects = [c for c in frame.columns if frame[c].dtype == object or c == "id"]  # only these can mix kinds
    found = _mixed_column(frame[objects].to_dict("records"))
    if found:
        raise InputError(found)
    try:
        return pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise InputError(f"the DataFrame cannot be ingested: {exc}; nothing was ingested") from None


def _mixed_column(rows: list[dict]) -> str | None:
    """Which column holds values of two types, and the first row where the second appears."""
    first: dict[str, type] = {}
    for n, row in enumerate(rows):
        for name, value in row.items():
            if value is None or value != value:  # missing (pandas writes NaN)
                continue
            kind = first.setdefault(name, type(value))
            if type(value) is not kind:
                where = f" (id {row['id']!r})" if row.get("id") is not None else ""
                return (
                    f"row {n + 1}{where}: column {name!r} holds a {type(value).__name__} where earlier rows hold "
                    f"{kind.__name__}; nothing was ingested"
                )
    return None


def check_columns(table: Any, text: str | None, id: str | None, roles: dict[str, str]) -> str | None:
    """The text column's name (None: a corpus of transcripts, a `messages` column and no text); a
    named column missing, or a text that is not a non-empty string, raises an InputError naming the
    column, the row and its id."""
    columns = list(table.column_names)
    if text is None:
        text = next((c for c in TEXT_COLUMNS if c in columns), None)
        if text is None and "messages" in columns:
            return None
        if text is None:
            raise InputError(f"no text column ({' or '.join(TEXT_COLUMNS)}): pass text=; columns are {columns}")
    for role, name in {"text": text, "id": id, **roles}.items():
        if name is not None and name not in columns:
            raise InputError(f"no column {name!r} (the {role} column); columns are {columns}")
    ids = table.column(id).to_pylist() if id else [None] * table.num_rows
    for n, value in enumerate(table.column(text).to_pylist()):
        if not isinstance(value, str) or not value.strip():
            what = "empty" if isinstance(value, str) else "missing" if value is None else f"a {type(value).__name__}"
            named = f" (id {ids[n]!r})" if ids[n] is not None else ""
            raise InputError(f"row {n + 1}{named}: column {text!r} is {what}, not a text; nothing was ingested")
    for name in roles.values():
        for n, value in enumerate(table.column(name).to_pylist()):
            if value is not None and not isinstance(value, str):
                raise InputError(f"row {n + 1}: column {name!r} holds a {type(value).__name__}, not a string")
    return text
