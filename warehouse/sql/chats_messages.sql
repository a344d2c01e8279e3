-- A staged chat file's messages.parquet rows (tasks/loaders/transcripts.MESSAGES_SCHEMA). Variables: staged.
SELECT text_id AS transcript_id, m.position, m.role, m.body_hash, m.name,
       CASE WHEN len(m.calls) > 0 THEN m.calls END AS tool_calls, m.tool_call_id, m.is_error,
       m.step_id, m.span_id, m.ts
FROM (SELECT text_id, unnest(msgs) AS m FROM read_parquet(getvariable('staged')));
