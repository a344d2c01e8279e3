-- A staged chat file's transcripts.parquet rows (tasks/loaders/transcripts.TRANSCRIPTS_SCHEMA). Variables: staged.
SELECT text_id AS transcript_id, md5(tools_body) AS tools_hash, message_count
FROM read_parquet(getvariable('staged'));
