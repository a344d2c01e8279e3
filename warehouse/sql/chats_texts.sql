-- A staged chat file's texts.parquet rows (tasks/loaders/ingest.SCHEMA): each transcript's rendering.
-- Variables: staged.
SELECT text_id, text, NULL::VARCHAR AS input, NULL::VARCHAR AS context, genre, metadata, sha256,
       NULL::BIGINT AS "row"
FROM read_parquet(getvariable('staged'));
