-- A corpus re-ingested from plain texts holds no transcripts any more. Params: $corpus.
DELETE FROM transcript_messages WHERE corpus_id = $corpus;
DELETE FROM transcripts WHERE corpus_id = $corpus;
