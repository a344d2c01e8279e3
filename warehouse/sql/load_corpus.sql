-- Load an ingested corpus (normalised Parquet) into `texts`. A text whose id is already there is
-- replaced, so a changed text gets a new sha256 and therefore new work cells. Params: $corpus, $parquet.
INSERT OR REPLACE INTO texts (corpus_id, text_id, sha256, text, input, context, genre, metadata)
SELECT $corpus, text_id, sha256, text, input, context, genre, metadata::JSON
FROM read_parquet($parquet);

-- Pattern counts of a text's earlier version no longer apply.
DELETE FROM pattern_hits h USING texts t
WHERE h.corpus_id = $corpus AND t.corpus_id = h.corpus_id AND t.text_id = h.text_id AND t.sha256 <> h.text_sha256;
