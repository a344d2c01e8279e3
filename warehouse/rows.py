"""The two row types every judge call produces, defined once: a completion (one per cell: the
raw answer, tokens, attempts, error) and a judgment (one per criterion of the cell). Shards land
them as Parquet with these Arrow schemas; the warehouse loads them `BY NAME` into the tables of
the same names (001_schema.sql), and a test holds the two definitions to the same columns."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

COMPLETION = pa.schema(
    [
        ("cell_key", pa.string()),
        ("run_id", pa.string()),
        ("corpus_id", pa.string()),
        ("text_id", pa.string()),
        ("text_sha256", pa.string()),
        ("unit_id", pa.string()),
        ("rubric_hash", pa.string()),
        ("judge_hash", pa.string()),
        ("sample", pa.int32()),
        ("model", pa.string()),
        ("system_fingerprint", pa.string()),
        ("response_id", pa.string()),
        ("output_mode", pa.string()),
        ("prompt_layout", pa.string()),
        ("raw_response", pa.string()),
        ("finish_reason", pa.string()),
        ("prompt_tokens", pa.int64()),
        ("completion_tokens", pa.int64()),
        ("cached_tokens", pa.int64()),
        ("latency_ms", pa.float64()),
        ("attempts", pa.int32()),
        ("status", pa.string()),
        ("error_kind", pa.string()),
        ("error", pa.string()),
        ("declared_disqualifiers", pa.list_(pa.string())),
        ("created_at", pa.timestamp("us")),
        ("adopted_from", pa.string()),  # set only by sql/adopt_cells.sql: a judge call never lands one
        ("queue_ms", pa.float64()),  # time spent waiting in the client (slots, rate limits); latency_ms is the server's
        ("constraint_violations", pa.list_(pa.string())),  # hard output constraints the answer broke: they disqualify
        ("unit_hash", pa.string()),  # the rendered unit's fingerprint (rubrics/render): what the judge was sent
    ]
)
JUDGMENT = pa.schema(
    [
        ("cell_key", pa.string()),
        ("criterion_id", pa.string()),
        ("run_id", pa.string()),
        ("corpus_id", pa.string()),
        ("text_id", pa.string()),
        ("rubric_hash", pa.string()),
        ("judge_hash", pa.string()),
        ("sample", pa.int32()),
        ("value", pa.string()),
        ("unit_score", pa.float64()),
        ("rationale", pa.string()),
        ("evidence", pa.list_(pa.string())),
        ("evidence_verified", pa.bool_()),
        ("warnings", pa.list_(pa.string())),
        ("status", pa.string()),
        ("reason", pa.string()),
        ("text_sha256", pa.string()),
        ("weighted_unit_score", pa.float64()),
        ("value_probs", pa.string()),
        ("prob_mass", pa.float64()),
        ("adopted_from", pa.string()),
        ("unit_hash", pa.string()),  # its cell's rendered-unit fingerprint (see COMPLETION)
        ("confidence", pa.float64()),  # the judge's own confidence, 0-1 (a rubric's surface.confidence)
    ]
)


# the schema's names, read once: `pa.Schema.names` builds a new list each read (two a judge call: ~2%
# of the reward server's CPU, #55)
_COMPLETION_NAMES = tuple(COMPLETION.names)
_COMPLETION_COLUMNS = frozenset(_COMPLETION_NAMES)


def blank_completion(**fields: Any) -> dict[str, Any]:
    """A completion row with every column of COMPLETION, as it stands before any answer is read
    (failed, no attempts, nothing declared), then `fields`."""
    unknown = fields.keys() - _COMPLETION_COLUMNS
    if unknown:
        raise KeyError(f"not completion columns: {sorted(unknown)}")
    row: dict[str, Any] = dict.fromkeys(_COMPLETION_NAMES)
    row.update(attempts=0, status="failed", declared_disqualifiers=[], constraint_violations=[])
    row.update(fields)
    return row


def to_bytes(table: pa.Table) -> bytes:
    """Rows as an Arrow stream: how they travel to and from cluster workers and into a run's reserve."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def from_bytes(data: bytes) -> pa.Table:
    return pa.ipc.open_stream(data).read_all()
