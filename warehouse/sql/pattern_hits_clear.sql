-- Remove one pattern's counts of texts that changed since (their sha256 is no longer the text's),
-- before the pattern is counted again: pattern_hits has no key to replace them by (001_schema.sql).
-- Params: $corpus, $rubric, $pattern.
DELETE FROM pattern_hits h USING texts t
WHERE h.corpus_id = $corpus AND h.rubric_hash = $rubric AND h.pattern_id = $pattern
  AND t.corpus_id = h.corpus_id AND t.text_id = h.text_id AND t.sha256 <> h.text_sha256;
