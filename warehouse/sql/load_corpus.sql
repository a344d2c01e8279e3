-- Load an ingested corpus (normalised Parquet) into `texts`. A text whose id is already there is
-- replaced, so a changed text gets a new sha256 and therefore new work cells. Params: $corpus, $parquet.
INSERT OR REPLACE INTO texts
SELECT $corpus, text_id, sha256, text, input, context, genre, metadata::JSON
FROM read_parquet($parquet);
