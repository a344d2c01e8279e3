-- Count one pattern's matches (RE2) in every text of a corpus that has no count for its current
-- sha256 yet. Params: $corpus, $rubric, $pattern, $regex (a constant, so RE2 compiles it once).
-- The texts counted now are marked for the analytics refresh (warehouse/analytics.py). Run after
-- pattern_hits_clear.sql, so that a key has one row.
INSERT INTO stale_texts
SELECT t.corpus_id, t.text_id
FROM texts t
LEFT JOIN pattern_hits h
  ON h.corpus_id = t.corpus_id AND h.text_id = t.text_id AND h.rubric_hash = $rubric
 AND h.pattern_id = $pattern AND h.text_sha256 = t.sha256
WHERE t.corpus_id = $corpus AND h.text_id IS NULL;

INSERT INTO pattern_hits (corpus_id, text_id, text_sha256, rubric_hash, pattern_id, hits)
SELECT t.corpus_id, t.text_id, t.sha256, $rubric, $pattern, len(regexp_extract_all(t.text, $regex))
FROM texts t
LEFT JOIN pattern_hits h
  ON h.corpus_id = t.corpus_id AND h.text_id = t.text_id AND h.rubric_hash = $rubric
 AND h.pattern_id = $pattern AND h.text_sha256 = t.sha256
WHERE t.corpus_id = $corpus AND h.text_id IS NULL;
