-- Why a staged chat file (chats_stage.sql) must go the row-by-row way instead, if it must: a line
-- it does not read the same way, a missing or duplicated id, a rendering over the size cap.
-- Variables: staged (the file), max_chars.
SELECT count(*) AS transcripts,
       count(*) FILTER (WHERE odd) AS odd,
       count(text_id) - count(DISTINCT text_id) AS duplicates,
       count(*) FILTER (WHERE text_chars > getvariable('max_chars')) AS too_long,
       coalesce(sum(message_count), 0) AS messages
FROM read_parquet(getvariable('staged'));
