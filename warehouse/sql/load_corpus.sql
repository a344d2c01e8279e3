-- Load an ingested corpus (normalised Parquet) into `texts`. A text whose id is already there is
-- replaced, so a changed text gets a new sha256 and therefore new work cells; a text the new source
-- no longer holds is marked removed (kept as history, no longer scored), unless the source was read
-- in part (`--limit`: $keep_absent). Params: $corpus, $parquet, $keep_absent.

-- Texts whose scores change are marked for the analytics refresh (warehouse/analytics.py): new,
-- changed in what the judge sees, in genre or in metadata (a pair's label), back after a removal, or no longer in the source.
-- An unchanged text is not, so a night that changes 1% of a corpus refreshes that 1%.
INSERT INTO stale_texts
SELECT $corpus, p.text_id FROM read_parquet($parquet) p
LEFT JOIN texts t ON t.corpus_id = $corpus AND t.text_id = p.text_id
WHERE t.text_id IS NULL OR t.removed_at IS NOT NULL OR t.sha256 <> p.sha256 OR t.input IS DISTINCT FROM p.input
   OR t.context IS DISTINCT FROM p.context OR t.genre IS DISTINCT FROM p.genre
   OR t.metadata IS DISTINCT FROM p.metadata::JSON;  -- a pair's label or systems
INSERT INTO stale_texts
SELECT corpus_id, text_id FROM texts
WHERE corpus_id = $corpus AND removed_at IS NULL AND NOT $keep_absent
  AND text_id NOT IN (SELECT text_id FROM read_parquet($parquet));

-- Stored with zstd: DuckDB's default analysis of long texts cost 3x the CPU for a 5x larger file
-- (1M transcripts' renderings: 140 s of CPU; bench/traces.py).
SET force_compression = 'zstd';
INSERT OR REPLACE INTO texts (corpus_id, text_id, sha256, text, input, context, genre, metadata, removed_at)
SELECT $corpus, text_id, sha256, text, input, context, genre, metadata::JSON, NULL
FROM read_parquet($parquet);
RESET force_compression;

-- Pattern counts of a text's earlier version no longer apply.
DELETE FROM pattern_hits h USING texts t
WHERE h.corpus_id = $corpus AND t.corpus_id = h.corpus_id AND t.text_id = h.text_id AND t.sha256 <> h.text_sha256;

-- The source is the corpus: texts it no longer holds are removed (and come back if it holds them again).
UPDATE texts SET removed_at = current_timestamp
WHERE corpus_id = $corpus AND removed_at IS NULL AND NOT $keep_absent
  AND text_id NOT IN (SELECT text_id FROM read_parquet($parquet));
