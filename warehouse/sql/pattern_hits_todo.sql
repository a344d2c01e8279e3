-- One page of a corpus's texts that have no count of one pattern for their current sha256, in
-- text_id order after $after (for patterns counted in Python: see steps.count_pattern_hits).
-- Params: $corpus, $rubric, $pattern, $after, $page.
SELECT t.text_id, t.sha256, t.text
FROM texts t
LEFT JOIN pattern_hits h
  ON h.corpus_id = t.corpus_id AND h.text_id = t.text_id AND h.rubric_hash = $rubric
 AND h.pattern_id = $pattern AND h.text_sha256 = t.sha256
WHERE t.corpus_id = $corpus AND h.text_id IS NULL AND t.text_id > $after
ORDER BY t.text_id
LIMIT $page;
