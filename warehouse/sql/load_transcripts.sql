-- Load an ingested corpus's transcripts (tasks/loaders/transcripts.py: messages.parquet,
-- bodies.parquet, transcripts.parquet beside texts.parquet). The source is the corpus: the corpus's
-- messages are replaced by the file's. A body already stored is not stored again (one row per hash).
-- Params: $corpus, $messages, $bodies, $transcripts (the files).
DELETE FROM transcript_messages WHERE corpus_id = $corpus;
DELETE FROM transcripts WHERE corpus_id = $corpus;

INSERT INTO message_bodies
SELECT body_hash, any_value(body) FROM read_parquet($bodies) b
WHERE NOT EXISTS (SELECT 1 FROM message_bodies m WHERE m.body_hash = b.body_hash)
GROUP BY body_hash;

INSERT INTO transcript_messages
SELECT $corpus, transcript_id, position, role, body_hash, name, tool_calls, tool_call_id, is_error, step_id, span_id, ts
FROM read_parquet($messages);

INSERT INTO transcripts SELECT $corpus, transcript_id, tools_hash, message_count FROM read_parquet($transcripts);
