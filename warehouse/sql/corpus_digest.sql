-- The sha256 of the source a corpus was last ingested from (nightly: skip an unchanged source).
SELECT source_sha256 FROM corpora WHERE corpus_id = $corpus;
